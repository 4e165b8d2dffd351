"""``history.jsonl``: one compact JSON line per promoted run, appended on every save.

The data branch keeps every line (git holds it anyway); the artifact and path stores keep the
newest :data:`HISTORY_KEEP`, since they rewrite the whole file on every promotion.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from promptcanary.core.files import numbered_values
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult
from promptcanary.core.verdict.served import served_ids

HISTORY_KEEP = 200
"""Lines a bounded history keeps: enough for the longest trend chart (``trend-points``)."""


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
    }


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
