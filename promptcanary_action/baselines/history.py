"""``history.jsonl``: one compact JSON line per promoted run, appended on every save.

The data branch keeps every line (git holds it anyway); the artifact and path stores keep the
newest :data:`HISTORY_KEEP`, since they rewrite the whole file on every promotion.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from promptcanary.core.files import numbered_values
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult
from promptcanary.core.verdict.served import served_ids

HISTORY_KEEP = 200
"""Lines a bounded history keeps: enough for the longest trend chart (``trend-points``)."""
PROMPT_HISTORY_LIMIT = 1000
"""Prompts whose pass rate one history line keeps (the first ones in run order): a line of a
2,000-prompt suite stays about 14 kB."""
PROMPT_KEY_CHARS = 8
"""Hex characters of a prompt's key in ``prompt_pass`` (a SHA-256 prefix of its id: ids run to
41 characters, the key is what makes a line compact)."""


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def history_record(
    snapshot: BaselineSnapshot,
    *,
    sha: str,
    ref: str,
    now: datetime | None = None,
    regressions: int | None = None,
) -> dict[str, Any]:
    """What one promotion adds to the history (``regressions`` is None when not known)."""
    run = snapshot.run_result
    when = now or datetime.now(UTC)
    return {
        "time": when.isoformat(timespec="seconds"),
        "sha": sha,
        "ref": ref,
        "snapshot_id": snapshot.snapshot_id,
        "model": snapshot.provider.model_id,
        "overall_score": _rounded(run.overall_score),
        "pass_rate": _rounded(run.pass_rate),
        "prompts": len(run.prompt_ids),
        "regressions": regressions,
        "errors": run.error_count,
        **_served_fields(run),
        **_approval_fields(snapshot),
        "prompt_pass": {
            prompt_key(prompt): round(rate * 100)
            for prompt, rate in list(prompt_pass_rates(run).items())[:PROMPT_HISTORY_LIMIT]
        },
    }


def prompt_key(prompt_id: str) -> str:
    """The key of a prompt in a history line's ``prompt_pass``."""
    return hashlib.sha256(prompt_id.encode("utf-8")).hexdigest()[:PROMPT_KEY_CHARS]


def prompt_pass_rates(run: CanaryRunResult) -> dict[str, float]:
    """Prompt id → share of its scored probe results that passed, in run order (a prompt with
    no scored result, every answer errored, has none)."""
    tallies: dict[str, list[int]] = {}
    for result in run.probe_results:
        if not result.errored:
            tally = tallies.setdefault(result.prompt_id, [0, 0])
            tally[0] += int(result.passed)
            tally[1] += 1
    order = {prompt: i for i, prompt in enumerate(run.prompt_ids)}
    ranked = sorted(tallies, key=lambda p: order.get(p, len(order)))
    return {p: tallies[p][0] / tallies[p][1] for p in ranked}


def prompt_history(records: Sequence[Mapping[str, Any]], prompt_id: str) -> list[float]:
    """The prompt's pass rate (0–1) at each promotion that recorded it, oldest first; records
    of older versions (no ``prompt_pass``) and damaged lines give nothing."""
    key = prompt_key(prompt_id)
    rates = []
    for record in records:
        passes = record.get("prompt_pass")
        value = passes.get(key) if isinstance(passes, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 100:
            rates.append(value / 100)
    return rates


def _served_fields(run: CanaryRunResult) -> dict[str, Any]:
    """The served model ids of the promoted run (nothing when its provider named none)."""
    served = sorted(served_ids(run.llm_responses))
    return {"served": served} if served else {}


def _approval_fields(snapshot: BaselineSnapshot) -> dict[str, Any]:
    """Who approved the regressions this promotion accepted (nothing when none were)."""
    approval = snapshot.approval
    if approval is None:
        return {}
    return {
        "approval": {
            "pr": approval.pr_number,
            "approver": approval.approver,
            "approved_at": approval.approved_at.isoformat(timespec="seconds"),
            "head_sha": approval.head_sha,
            "fingerprint": approval.fingerprint,
            "keys": len(approval.keys),
        }
    }


def history_line(record: dict[str, Any]) -> str:
    """The record as one line of ``history.jsonl`` (compact, key order kept, newline-ended)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def append_history(existing: str, record: dict[str, Any], *, keep: int | None = None) -> str:
    """``existing`` history text with ``record`` appended (a missing final newline is repaired).

    ``keep``: only the newest ``keep`` lines stay (None keeps all).
    """
    if existing and not existing.endswith("\n"):
        existing += "\n"
    text = existing + history_line(record)
    if keep is None:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(lines[-keep:])


def parse_history(text: str) -> list[dict[str, Any]]:
    """The records of a history file, oldest first.

    History is informational: a damaged line is kept as ``{"line": n, "error": ...}`` rather than
    hiding the rest of the history or failing a run over it.
    """
    records: list[dict[str, Any]] = []
    for number, value, error in numbered_values(text):
        if error:
            records.append({"line": number, "error": error})
            continue
        if not isinstance(value, dict):
            records.append({"line": number, "error": "not a JSON object"})
            continue
        records.append(value)
    return records
