"""FileBaselineStore: naming, atomic writes, lookup by id and prefix, latest, listing, deletion."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.storage.base import BaselineFileError
from promptcanary.storage.file import AmbiguousSnapshotIdError, FileBaselineStore

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NAME_RE = re.compile(
    r"^(?P<suite>[a-z0-9-]+)__(?P<model>[a-z0-9-]+)__(?P<ts>\d{8}T\d{12}Z)_(?P<id>[0-9a-z-]{8})\.json$"
)


def run(
    suite: str = "My Suite",
    model: str = "openai/gpt-4o",
    score: float = 1.0,
    extra: dict[str, object] | None = None,
) -> CanaryRunResult:
    provider = ProviderConfig(model_id=model, extra_params=dict(extra or {}))
    return CanaryRunResult(
        suite_name=suite,
        provider=provider,
        probe_results=[
            ProbeResult(probe_id="json_validity", prompt_id="p1", passed=score >= 0.5, score=score)
        ],
        llm_responses=[LLMResponse(prompt_id="p1", provider_model_id=model, content="{}")],
    )


def snapshot_at(created: datetime, snapshot_id: str, **kw: object) -> BaselineSnapshot:
    r = run(**kw)  # type: ignore[arg-type]
    return BaselineSnapshot(
        suite_name=r.suite_name,
        provider=r.provider,
        run_result=r,
        created_at=created,
        snapshot_id=snapshot_id,
    )


@pytest.fixture
def store(tmp_path: Path) -> FileBaselineStore:
    return FileBaselineStore(tmp_path / "baselines")


def json_files(store: FileBaselineStore) -> list[Path]:
    return sorted(store.directory.iterdir())


# ── save and naming ─────────────────────────────────────────────────────────


def test_directory_is_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    FileBaselineStore(target)
    assert target.is_dir()


def test_save_names_the_file_suite_model_timestamp_id8(store: FileBaselineStore) -> None:
    snap = store.save(run(), snapshot_id="0123456789abcdef")
    (path,) = json_files(store)
    match = NAME_RE.match(path.name)
    assert match, path.name
    assert match["suite"] == "my-suite"
    assert match["model"] == "openai-gpt-4o"
    assert match["id"] == "01234567"
    assert match["ts"] == snap.created_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def test_save_then_load_round_trips(store: FileBaselineStore) -> None:
    snap = store.save(run(score=0.25), note="first")
    loaded = store.load(snap.snapshot_id)
    assert loaded.snapshot_id == snap.snapshot_id
    assert loaded.note == "first"
    assert loaded.run_result.probe_results == snap.run_result.probe_results
    assert loaded.run_result.llm_responses[0].content == "{}"


def test_snapshot_id_override_is_kept(store: FileBaselineStore) -> None:
    snap = store.save(run(), snapshot_id="fixed-id-123")
    assert snap.snapshot_id == "fixed-id-123"
    assert store.load("fixed-id-123").snapshot_id == "fixed-id-123"


def test_secrets_are_redacted_in_the_file_but_counts_kept(store: FileBaselineStore) -> None:
    extra = {
        "api_key": "sk-live-SECRET",
        "extra_headers": {"Authorization": "Bearer SECRET-TOKEN", "X-Trace": "keep-me"},
        "max_tokens": 77,
        "api_base": "http://127.0.0.1:9",
    }
    snap = store.save(run(extra=extra))
    (path,) = json_files(store)
    text = path.read_text(encoding="utf-8")
    assert "SECRET" not in text
    data = json.loads(text)
    for params in (
        data["provider"]["extra_params"],
        data["run_result"]["provider"]["extra_params"],
    ):
        assert params["api_key"] == "***"
        assert params["extra_headers"]["Authorization"] == "***"
        assert params["extra_headers"]["X-Trace"] == "keep-me"
        assert params["max_tokens"] == 77
        assert params["api_base"] == "http://127.0.0.1:9"
    # The object handed back to the caller is not mutated by the redaction.
    assert snap.provider.extra_params["api_key"] == "sk-live-SECRET"


# ── atomic writes ───────────────────────────────────────────────────────────


def test_write_goes_through_a_temp_file_in_the_same_directory(
    store: FileBaselineStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    replaced: list[tuple[Path, Path, str]] = []
    real_replace = os.replace

    def recording_replace(src: str, dst: str) -> None:
        # What a concurrent reader could see at this moment: the complete temp file, not `dst`.
        replaced.append((Path(src), Path(dst), Path(src).read_text(encoding="utf-8")))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    store.save(run())
    (path,) = json_files(store)
    ((src, dst, content),) = replaced
    assert dst == path
    assert src.parent == path.parent  # same filesystem: the rename is atomic
    assert src != dst
    json.loads(content)  # the temp file was complete before it was renamed into place
    assert content == path.read_text(encoding="utf-8")
    assert not src.exists()


def test_failed_write_leaves_the_old_file_and_no_temp_file(
    store: FileBaselineStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = snapshot_at(T0, "aaaaaaaa-1")
    path = store.save_snapshot(first)
    before = path.read_text(encoding="utf-8")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    changed = first.model_copy(update={"note": "changed"})
    with pytest.raises(OSError):
        store.save_snapshot(changed)
    assert json_files(store) == [path]
    assert path.read_text(encoding="utf-8") == before


# ── load by id ──────────────────────────────────────────────────────────────


def test_load_by_unique_prefix(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="abcdef01-aaaa")
    store.save(run(), snapshot_id="12345678-bbbb")
    assert store.load("abcd").snapshot_id == "abcdef01-aaaa"
    assert store.load("12345678-b").snapshot_id == "12345678-bbbb"


def test_ambiguous_prefix_names_every_matching_file(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="deadbeef-0001")
    store.save(run(model="m2"), snapshot_id="deadbeef-0002")
    with pytest.raises(AmbiguousSnapshotIdError) as info:
        store.load("deadbeef-000")
    message = str(info.value)
    matching = json_files(store)
    assert len(matching) == 2
    for path in matching:
        assert path.name in message
    # The full id (and any longer unique prefix) still resolves.
    assert store.load("deadbeef-0002").provider.model_id == "m2"
    assert store.load("deadbeef-0001").provider.model_id == "openai/gpt-4o"


def test_exact_id_wins_over_a_longer_id_sharing_it_as_prefix(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="cafebabe")
    store.save(run(model="other"), snapshot_id="cafebabe-2")
    assert store.load("cafebabe").provider.model_id == "openai/gpt-4o"


def test_unknown_id_is_file_not_found_listing_what_exists(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="11111111-x")
    with pytest.raises(FileNotFoundError, match="22222222") as info:
        store.load("22222222")
    assert "11111111" in str(info.value)
    with pytest.raises(FileNotFoundError):
        store.load("")


def test_load_from_path(store: FileBaselineStore, tmp_path: Path) -> None:
    snap = store.save(run())
    (path,) = json_files(store)
    assert store.load_from_path(path).snapshot_id == snap.snapshot_id
    with pytest.raises(FileNotFoundError, match=r"nope\.json"):
        store.load_from_path(tmp_path / "nope.json")


# ── latest ──────────────────────────────────────────────────────────────────


def test_load_latest_picks_the_newest_and_filters_by_suite_and_model(
    store: FileBaselineStore,
) -> None:
    store.save_snapshot(snapshot_at(T0, "00000001"))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=2), "00000002"))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=1), "00000003"))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=9), "00000004", model="other/model"))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=9), "00000005", suite="Another"))
    assert store.load_latest("My Suite", "openai/gpt-4o").snapshot_id == "00000002"
    assert store.load_latest("My Suite", "other/model").snapshot_id == "00000004"
    assert store.load_latest("My Suite").snapshot_id == "00000004"
    assert store.load_latest("Another").snapshot_id == "00000005"


def test_load_latest_compares_instants_not_local_clock_readings(store: FileBaselineStore) -> None:
    # 10:00 at UTC+5 is 05:00Z, earlier than 06:00Z: the 06:00Z snapshot is the newest.
    plus5 = timezone(timedelta(hours=5))
    store.save_snapshot(snapshot_at(datetime(2024, 1, 1, 10, 0, tzinfo=plus5), "0000000a"))
    store.save_snapshot(snapshot_at(datetime(2024, 1, 1, 6, 0, tzinfo=UTC), "0000000b"))
    assert store.load_latest("My Suite", "openai/gpt-4o").snapshot_id == "0000000b"


def test_load_latest_without_match_names_the_filters(store: FileBaselineStore) -> None:
    store.save(run())
    with pytest.raises(FileNotFoundError, match=r"'Nope'.*'x/y'"):
        store.load_latest("Nope", "x/y")


def test_load_latest_skips_a_model_whose_file_name_slug_collides(store: FileBaselineStore) -> None:
    # Bedrock inference-profile ARNs share their first 60 characters, so their file-name slugs
    # are equal: the newest file of the *other* model must not be returned as this one's baseline.
    arn = "bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic."
    first, second = arn + "claude-3-5-sonnet-20241022-v2:0", arn + "claude-3-haiku-20240307-v1:0"
    store.save_snapshot(snapshot_at(T0, "00000001", model=first))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=1), "00000002", model=second))
    assert store.load_latest("My Suite", first).snapshot_id == "00000001"
    assert [e["snapshot_id"] for e in store.list_baselines("My Suite", first)] == ["00000001"]
    long_suite = "Customer support agent: nightly regression canaries for the "
    store.save_snapshot(snapshot_at(T0, "00000003", suite=long_suite + "billing flow"))
    store.save_snapshot(snapshot_at(T0 + timedelta(days=1), "00000004", suite=long_suite + "x"))
    assert store.load_latest(long_suite + "billing flow").snapshot_id == "00000003"
    with pytest.raises(FileNotFoundError):
        store.load_latest(long_suite + "refunds")


# ── corrupt files ───────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "content",
    [
        b'{"schema_version": 2, "snapshot_id": "trunc',
        b"[1, 2]",
        b"\xff\xfe\x00garbage",
        b'{"a": 1}',
    ],
    ids=["truncated", "not-an-object", "not-utf8", "wrong-shape"],
)
def test_corrupt_latest_file_raises_naming_it(store: FileBaselineStore, content: bytes) -> None:
    store.save_snapshot(snapshot_at(T0, "00000001"))
    bad = store.directory / "my-suite__openai-gpt-4o__20300101T000000000000Z_badbad00.json"
    bad.write_bytes(content)
    with pytest.raises(BaselineFileError) as info:
        store.load_latest("My Suite", "openai/gpt-4o")
    assert info.value.location == str(bad)
    assert bad.name in str(info.value)


@pytest.mark.parametrize(
    "content",
    [b"{trunc", b"[1]", b"\xff\xfe", b'{"provider": "not-a-mapping"}'],
    ids=["truncated", "not-an-object", "not-utf8", "wrong-shape"],
)
def test_list_baselines_shows_a_corrupt_file_with_an_error(
    store: FileBaselineStore, content: bytes
) -> None:
    good = store.save_snapshot(snapshot_at(T0, "00000001"))
    bad = store.directory / "my-suite__openai-gpt-4o__20300101T000000000000Z_badbad00.json"
    bad.write_bytes(content)
    entries = store.list_baselines()
    assert [e["path"] for e in entries] == [str(bad), str(good)]
    assert "error" in entries[0] and entries[0]["error"]
    assert "error" not in entries[1]


def test_list_baselines_metadata_newest_first_and_filtered(store: FileBaselineStore) -> None:
    store.save_snapshot(snapshot_at(T0, "00000001").model_copy(update={"note": "old"}))
    store.save_snapshot(snapshot_at(T0 + timedelta(hours=1), "00000002"))
    store.save_snapshot(snapshot_at(T0 + timedelta(hours=2), "00000003", model="m/2"))
    entries = store.list_baselines("My Suite", "openai/gpt-4o")
    assert [e["snapshot_id"] for e in entries] == ["00000002", "00000001"]
    assert entries[1]["note"] == "old"
    assert entries[0]["model_id"] == "openai/gpt-4o"
    assert entries[0]["suite_name"] == "My Suite"
    assert {"path", "snapshot_id", "suite_name", "model_id", "created_at"} <= set(entries[0])
    assert [e["snapshot_id"] for e in store.list_baselines()] == [
        "00000003",
        "00000002",
        "00000001",
    ]
    assert store.list_baselines("Other") == []


# ── delete ──────────────────────────────────────────────────────────────────


def test_delete_by_prefix_removes_only_that_snapshot(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="aaaa1111-keep")
    store.save(run(), snapshot_id="bbbb2222-drop")
    assert store.delete("bbbb") is True
    assert [e["snapshot_id"] for e in store.list_baselines()] == ["aaaa1111-keep"]
    assert store.delete("bbbb") is False
    with pytest.raises(FileNotFoundError):
        store.load("bbbb2222-drop")


def test_delete_keeps_a_snapshot_that_shares_the_first_eight_characters(
    store: FileBaselineStore,
) -> None:
    store.save(run(), snapshot_id="12345678-first")
    store.save(run(model="m2"), snapshot_id="12345678-second")
    assert store.delete("12345678-second") is True
    assert store.load("12345678").snapshot_id == "12345678-first"


def test_delete_with_ambiguous_prefix_deletes_nothing(store: FileBaselineStore) -> None:
    store.save(run(), snapshot_id="12345678-first")
    store.save(run(model="m2"), snapshot_id="12345678-second")
    with pytest.raises(AmbiguousSnapshotIdError):
        store.delete("1234")
    assert len(json_files(store)) == 2


def test_the_default_directory_is_the_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from promptcanary.cli import DEFAULT_BASELINE_DIR

    monkeypatch.chdir(tmp_path)
    assert FileBaselineStore().directory.resolve() == (tmp_path / DEFAULT_BASELINE_DIR).resolve()
