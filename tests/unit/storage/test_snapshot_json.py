"""Snapshot documents: PromptCanary's v1 format migrates, newer versions are refused, secrets go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcanary.core.models import (
    SCHEMA_VERSION,
    BaselineSnapshot,
    CanaryRunResult,
    ProviderConfig,
)
from promptcanary.storage.base import BaselineFileError, snapshot_from_json, snapshot_to_json
from promptcanary.storage.file import FileBaselineStore


def v1_document() -> dict[str, Any]:
    """A snapshot as PromptCanary itself writes it: no schema_version, probe_key or provenance."""
    provider = {
        "model_id": "openai/gpt-4o",
        "temperature": 0.0,
        "max_tokens": 1024,
        "seed": 42,
        "extra_params": {},
    }
    return {
        "snapshot_id": "5f0c1d2e-0000-4000-8000-000000000001",
        "suite_name": "Legacy Suite",
        "provider": provider,
        "created_at": "2024-03-01T09:30:00+00:00",
        "run_result": {
            "run_id": "run-1",
            "suite_name": "Legacy Suite",
            "provider": provider,
            "probe_results": [
                {
                    "probe_id": "json_validity",
                    "probe_name": "JSON Validity",
                    "category": "format",
                    "prompt_id": "p1",
                    "passed": True,
                    "score": 1.0,
                    "details": "ok",
                    "metadata": {},
                },
                {
                    "probe_id": "keyword_presence",
                    "probe_name": "Keyword Presence",
                    "category": "format",
                    "prompt_id": "p1",
                    "passed": False,
                    "score": 0.5,
                    "details": "missing: b",
                    "metadata": {},
                },
            ],
            "llm_responses": [
                {
                    "prompt_id": "p1",
                    "provider_model_id": "openai/gpt-4o",
                    "content": '{"a": 1}',
                    "raw_response": {},
                    "prompt_tokens": 10,
                    "completion_tokens": 5,
                    "total_tokens": 15,
                    "latency_ms": 120.5,
                    "created_at": "2024-03-01T09:29:59+00:00",
                }
            ],
            "started_at": "2024-03-01T09:29:58+00:00",
            "finished_at": "2024-03-01T09:30:00+00:00",
            "overall_score": 0.75,
            "pass_rate": 0.5,
            "duration_ms": 2000.0,
        },
        "_note": "legacy note",
    }


def test_v1_document_loads_with_probe_keys_defaulting_to_probe_ids() -> None:
    snap = snapshot_from_json(json.dumps(v1_document()), "legacy.json")
    assert snap.schema_version == SCHEMA_VERSION
    results = snap.run_result.probe_results
    assert [r.probe_key for r in results] == ["json_validity", "keyword_presence"]
    assert snap.run_result.provenance.samples == 1
    assert snap.run_result.provenance.probe_config_hash == ""
    assert snap.run_result.overall_score == pytest.approx(0.75)
    assert snap.run_result.llm_responses[0].content == '{"a": 1}'


def test_v1_note_is_kept(tmp_path: Path) -> None:
    # PromptCanary writes the note as "_note"; the migration must not drop it.
    snap = snapshot_from_json(json.dumps(v1_document()), "legacy.json")
    assert snap.note == "legacy note"
    store = FileBaselineStore(tmp_path)
    path = tmp_path / "legacy-suite__openai-gpt-4o__20240301T093000000000Z_5f0c1d2e.json"
    path.write_text(json.dumps(v1_document()), encoding="utf-8")
    (entry,) = store.list_baselines()
    assert entry["note"] == "legacy note"


def test_v1_file_loads_through_the_store(tmp_path: Path) -> None:
    store = FileBaselineStore(tmp_path)
    path = tmp_path / "legacy-suite__openai-gpt-4o__20240301T093000000000Z_5f0c1d2e.json"
    path.write_text(json.dumps(v1_document()), encoding="utf-8")
    assert store.load_latest("Legacy Suite", "openai/gpt-4o").snapshot_id.startswith("5f0c1d2e")
    assert store.load("5f0c").suite_name == "Legacy Suite"
    assert store.load_from_path(path).run_result.probe_results[1].probe_key == "keyword_presence"


def test_v1_file_named_without_an_id_is_found_by_id_and_deleted(tmp_path: Path) -> None:
    # PromptCanary documents its file names as {suite}__{model}__{timestamp}.json: no id in them.
    store = FileBaselineStore(tmp_path)
    path = tmp_path / "legacy-suite__openai-gpt-4o__2024-03-01T09-30-00.json"
    path.write_text(json.dumps(v1_document()), encoding="utf-8")
    (tmp_path / "notes.json").write_text("not a snapshot", encoding="utf-8")
    snapshot_id = v1_document()["snapshot_id"]
    assert store.load(snapshot_id).suite_name == "Legacy Suite"
    assert store.load(snapshot_id[:6]).snapshot_id == snapshot_id
    assert store.delete(snapshot_id) is True
    assert not path.exists()
    assert store.delete(snapshot_id) is False


def test_newer_schema_version_is_refused_with_upgrade_advice() -> None:
    doc = {**v1_document(), "schema_version": SCHEMA_VERSION + 1}
    with pytest.raises(BaselineFileError) as info:
        snapshot_from_json(json.dumps(doc), "future.json")
    message = str(info.value)
    assert message.startswith("future.json: ")
    assert f"schema_version {SCHEMA_VERSION + 1}" in message
    assert "upgrade" in message


@pytest.mark.parametrize("version", [0, -1, "2", None, 1.5])
def test_invalid_schema_version_is_refused(version: object) -> None:
    doc = {**v1_document(), "schema_version": version}
    with pytest.raises(BaselineFileError, match=r"bad\.json: .*schema_version"):
        snapshot_from_json(json.dumps(doc), "bad.json")


def test_wrong_shape_names_the_field() -> None:
    doc = v1_document()
    del doc["run_result"]["suite_name"]
    with pytest.raises(BaselineFileError, match=r"bad.json: .*run_result\.suite_name"):
        snapshot_from_json(json.dumps(doc), "bad.json")


def test_invalid_json_names_line_and_column() -> None:
    with pytest.raises(BaselineFileError, match=r"x.json: not valid JSON .*line 2, column"):
        snapshot_from_json('{\n  "a": }', "x.json")


def test_current_document_round_trips_and_redacts() -> None:
    provider = ProviderConfig(
        model_id="m",
        max_tokens=256,
        extra_params={
            "api_key": "sk-1",
            "nested": {"headers": [{"Authorization": "Bearer t"}]},
            "max_completion_tokens": 12,
        },
    )
    run = CanaryRunResult(suite_name="s", provider=provider)
    snap = BaselineSnapshot(suite_name="s", provider=provider, run_result=run, note="n")
    text = snapshot_to_json(snap)
    assert "sk-1" not in text and "Bearer t" not in text
    back = snapshot_from_json(text, "x.json")
    assert back.provider.extra_params == {
        "api_key": "***",
        "nested": {"headers": [{"Authorization": "***"}]},
        "max_completion_tokens": 12,
    }
    assert back.provider.max_tokens == 256
    assert back.snapshot_id == snap.snapshot_id
    assert back.note == "n"
    assert back.run_result.provider.extra_params["api_key"] == "***"
