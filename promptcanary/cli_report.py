"""``promptcanary report --format html`` from stored files: the baseline a drift.json names.

A drift.json keeps the id of the snapshot it was compared with (``baseline_snapshot_id``), not
its answers. The page's side-by-side view needs them, so they are read back from a snapshot
file (``--baseline``) or the baseline directory (``--baseline-dir``). When neither holds it,
the page is still written and says why the baseline's answers are missing: a report is never
refused for lack of its baseline, and never silently shows one side only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from promptcanary.core.models import CanaryRunResult, DriftReport
from promptcanary.storage.base import BaselineFileError, snapshot_from_json
from promptcanary.storage.file import FileBaselineStore

__all__ = ["SnapshotMismatchError", "StoredBaseline", "stored_baseline"]


class SnapshotMismatchError(ValueError):
    """``--baseline FILE`` holds another snapshot than the one the drift report names."""


@dataclass(frozen=True)
class StoredBaseline:
    """The baseline's run when found, and what the page says about it."""

    run: CanaryRunResult | None
    notes: list[str] = field(default_factory=list)


def stored_baseline(
    report: DriftReport, *, baseline_file: str | None, baseline_dir: str
) -> StoredBaseline:
    """The run of the snapshot ``report`` was compared with.

    Raises:
        BaselineFileError: ``baseline_file`` cannot be read or is not a snapshot.
        SnapshotMismatchError: ``baseline_file`` holds another snapshot.
    """
    wanted = report.baseline_snapshot_id
    if baseline_file is not None:
        try:
            text = Path(baseline_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BaselineFileError(baseline_file, f"cannot be read ({exc})") from None
        snapshot = snapshot_from_json(text, baseline_file)
        if snapshot.snapshot_id != wanted:
            raise SnapshotMismatchError(
                f"{baseline_file} holds snapshot {snapshot.snapshot_id}, but the drift report was "
                f"compared with {wanted}: pass that snapshot's file, or leave --baseline out to "
                "look it up in --baseline-dir"
            )
        return StoredBaseline(snapshot.run_result, _rescored_note(report))
    if not wanted:
        return StoredBaseline(
            None, ["The baseline's answers are not shown: the drift report names no snapshot."]
        )
    directory = Path(baseline_dir)
    missing = (
        f"The baseline's answers are not shown: the drift report was compared with snapshot "
        f"{wanted[:8]}, "
    )
    if not directory.is_dir():
        return StoredBaseline(
            None,
            [
                missing + f"and the baseline directory {directory} does not exist; pass "
                "--baseline-dir DIR (where it was saved) or --baseline FILE."
            ],
        )
    try:
        snapshot = FileBaselineStore(directory).load(wanted)
    except FileNotFoundError:
        return StoredBaseline(
            None,
            [
                missing + f"which is not in {directory} (deleted, or saved elsewhere); pass "
                "--baseline-dir DIR or --baseline FILE."
            ],
        )
    except BaselineFileError as exc:
        return StoredBaseline(None, [missing + f"and it cannot be read: {exc}."])
    return StoredBaseline(snapshot.run_result, _rescored_note(report))


def _rescored_note(report: DriftReport) -> list[str]:
    if not report.rescored_responses:
        return []
    return [
        f"The comparison re-scored {report.rescored_responses} baseline answer(s) with the "
        "current probes; the probe results beside the baseline's answers are those stored "
        "with it."
    ]
