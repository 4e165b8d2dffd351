"""The baseline a stored drift.json names, read back for ``report --format html``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptcanary.cli_report import SnapshotMismatchError, stored_baseline
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    DriftReport,
    LLMResponse,
    ProviderConfig,
)
from promptcanary.storage.base import BaselineFileError, snapshot_to_json
from promptcanary.storage.file import FileBaselineStore

PROVIDER = ProviderConfig(model_id="m")


def snapshot(text: str) -> BaselineSnapshot:
    run = CanaryRunResult(
        suite_name="s",
        provider=PROVIDER,
        llm_responses=[LLMResponse(prompt_id="p", provider_model_id="m", content=text)],
    )
    return BaselineSnapshot.of_run(run)


def drift_of(snap_id: str, rescored: int = 0) -> DriftReport:
    return DriftReport(
        suite_name="s",
        provider=PROVIDER,
        baseline_snapshot_id=snap_id,
        baseline_created_at=datetime(2024, 1, 1, tzinfo=UTC),
        current_run_id="r",
        rescored_responses=rescored,
    )


def test_the_named_snapshot_is_found_among_others_in_the_directory(tmp_path: Path) -> None:
    store = FileBaselineStore(tmp_path)
    old, new = snapshot("old answer"), snapshot("new answer")
    store.save_snapshot(old)
    store.save_snapshot(new)

    found = stored_baseline(
        drift_of(old.snapshot_id), baseline_file=None, baseline_dir=str(tmp_path)
    )

    assert found.run is not None and found.run.llm_responses[0].content == "old answer"
    assert found.notes == []


def test_a_missing_snapshot_or_directory_is_a_note_naming_the_fix(tmp_path: Path) -> None:
    FileBaselineStore(tmp_path).save_snapshot(snapshot("a"))
    gone = stored_baseline(drift_of("0123456789"), baseline_file=None, baseline_dir=str(tmp_path))
    nowhere = stored_baseline(
        drift_of("0123456789"), baseline_file=None, baseline_dir=str(tmp_path / "nope")
    )
    unnamed = stored_baseline(drift_of(""), baseline_file=None, baseline_dir=str(tmp_path))

    assert gone.run is None and nowhere.run is None and unnamed.run is None
    assert "snapshot 01234567, which is not in" in gone.notes[0]
    assert "--baseline-dir DIR or --baseline FILE" in gone.notes[0]
    assert f"{tmp_path / 'nope'} does not exist" in nowhere.notes[0]
    assert not (tmp_path / "nope").exists()  # looking never creates the directory
    assert "names no snapshot" in unnamed.notes[0]


def test_a_given_file_must_hold_the_named_snapshot(tmp_path: Path) -> None:
    snap = snapshot("a")
    path = tmp_path / "snap.json"
    path.write_text(snapshot_to_json(snap), encoding="utf-8")

    found = stored_baseline(drift_of(snap.snapshot_id, 2), baseline_file=str(path), baseline_dir="")
    assert found.run is not None
    assert "re-scored 2 baseline answer(s)" in found.notes[0]
    with pytest.raises(SnapshotMismatchError, match="but the drift report was compared with x"):
        stored_baseline(drift_of("x"), baseline_file=str(path), baseline_dir="")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(BaselineFileError, match="not valid JSON"):
        stored_baseline(drift_of("x"), baseline_file=str(tmp_path / "bad.json"), baseline_dir="")
    with pytest.raises(BaselineFileError, match="cannot be read"):
        stored_baseline(drift_of("x"), baseline_file=str(tmp_path / "none.json"), baseline_dir="")
