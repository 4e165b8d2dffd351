"""A provider that answers from recorded responses (JSONL), for offline runs, demos and tests.

One JSON object a line, one line per (prompt id, sample)::

    {"prompt_id": "greet", "sample": 0, "content": "Hello!", "tool_calls": [],
     "finish_reason": "stop", "model": "openai/gpt-4o-mini", "error": null}

``tool_calls`` items are ``{"name": ..., "arguments": {...}}`` (``arguments_raw`` and ``id`` are
optional); ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` and ``latency_ms`` are
optional. A recorded ``error`` replays as a non-transient :class:`ProviderError`, so a replayed run
errors exactly where the recorded one did.

Samples: a request for sample ``i`` gets the recorded sample ``i`` when there is one, else the
``i % n``-th of the ``n`` recorded samples of that prompt (a single recording can feed a run with
more samples; the answers then repeat).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text, numbered_values
from promptcanary.core.models import LLMResponse, ToolCall

OPTIONAL_INTS = ("prompt_tokens", "completion_tokens", "total_tokens")


class ReplayFileError(ValueError):
    """A recording that cannot be read; the message names the file and the line."""


Records = dict[str, list[dict[str, Any]]]
"""Recorded lines by prompt id, sorted by sample."""


def read_recording(path: Path) -> tuple[Records, list[str]]:
    """Records grouped by prompt id (sorted by sample), and the distinct model names."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayFileError(f"cannot read replay file {path}: {exc.strerror or exc}") from exc
    records: dict[str, list[dict[str, Any]]] = {}
    models: dict[str, None] = {}
    for number, record, error in numbered_values(text):
        problem = error or _problem(record)
        if problem:
            raise ReplayFileError(f"{path}:{number}: {problem}")
        records.setdefault(record["prompt_id"], []).append(record)
        if record.get("model"):
            models[record["model"]] = None
    for recorded in records.values():
        recorded.sort(key=lambda r: int(r.get("sample") or 0))
    return records, list(models)


def response_of(record: dict[str, Any], prompt_id: str, sample: int, model_id: str) -> LLMResponse:
    """The response a recorded line stands for (``model_id`` when the line names no model)."""
    return LLMResponse(
        prompt_id=prompt_id,
        provider_model_id=record.get("model") or model_id,
        content=record.get("content") or "",
        tool_calls=[_tool_call(c) for c in record.get("tool_calls") or []],
        finish_reason=record.get("finish_reason"),
        latency_ms=record.get("latency_ms"),
        sample=sample,
        **{k: record[k] for k in OPTIONAL_INTS if record.get(k) is not None},
    )


def _tool_call(data: dict[str, Any]) -> ToolCall:
    arguments = data.get("arguments")
    raw = data.get("arguments_raw")
    if isinstance(arguments, str):  # recorded as the raw JSON text
        raw = arguments if raw is None else raw
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            arguments = None
    if raw is None:
        raw = "" if arguments is None else json.dumps(arguments)
    return ToolCall(name=data["name"], arguments=arguments, arguments_raw=raw, id=data.get("id"))


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "each line must be a JSON object"
    if not isinstance(record.get("prompt_id"), str) or not record["prompt_id"]:
        return "missing or empty 'prompt_id'"
    if not isinstance(record.get("sample", 0), int) or record.get("sample", 0) < 0:
        return "'sample' must be a non-negative integer"
    content = record.get("content")
    if content is not None and not isinstance(content, str):
        return "'content' must be a string"
    calls = record.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
    ):
        return "'tool_calls' must be a list of objects with a 'name'"
    return None


def recording_line(response: LLMResponse) -> dict[str, Any]:
    """The JSONL record of one response (the inverse of what :class:`ReplayProvider` reads)."""
    record: dict[str, Any] = {
        "prompt_id": response.prompt_id,
        "sample": response.sample,
        "content": response.content,
        "tool_calls": [
            {
                "name": c.name,
                "arguments": c.arguments,
                "arguments_raw": c.arguments_raw,
                **({"id": c.id} if c.id else {}),
            }
            for c in response.tool_calls
        ],
        "finish_reason": response.finish_reason,
        "model": response.provider_model_id,
        "error": response.error,
    }
    for key in OPTIONAL_INTS:
        value = getattr(response, key)
        if value is not None:
            record[key] = value
    if response.latency_ms is not None:
        record["latency_ms"] = response.latency_ms
    return record


def write_recording(path: str | Path, responses: Iterable[LLMResponse]) -> Path:
    """Write ``responses`` as a recording, atomically (a reader never sees half a file)."""
    target = Path(path)
    lines = (json.dumps(recording_line(r), ensure_ascii=False) + "\n" for r in responses)
    atomic_write_text(target, "".join(lines))
    return target
