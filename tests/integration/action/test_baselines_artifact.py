"""The artifact baseline store: choice rules with a small fake, then the real client end to end."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.storage.base import BaselineFileError, snapshot_to_json
from promptcanary_action.baselines.artifact import ARTIFACT_DIR, UPLOAD_STEP, ArtifactBackend
from promptcanary_action.baselines.history import HISTORY_KEEP
from promptcanary_action.github.client import GitHubClient
from promptcanary_action.github.port import ArtifactInfo, GitHubPort
from tests.fakes.github_port_fake import FakeGitHubPort
from tests.fakes.github_server import FakeGitHubServer, make_zip

NAME = "promptcanary-baseline"
MODEL = "openai/gpt-4o"
PAIR_FILE = "my-suite/openai-gpt-4o/baseline.json"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def snapshot(suite: str = "My Suite", note: str = "", model: str = MODEL) -> BaselineSnapshot:
    provider = ProviderConfig(model_id=model)
    run = CanaryRunResult(
        suite_name=suite,
        provider=provider,
        probe_results=[ProbeResult(probe_id="json_validity", prompt_id="p1", passed=True, score=1)],
        llm_responses=[LLMResponse(prompt_id="p1", provider_model_id=model, content="{}")],
        started_at=T0,
    )
    return BaselineSnapshot(
        suite_name=suite, provider=provider, run_result=run, created_at=T0, note=note
    )


class FakeArtifacts(FakeGitHubPort):
    """The in-memory port, with artifacts made from files and the downloads it served."""

    @property
    def downloaded(self) -> list[int]:
        return [call["artifact_id"] for call in self.named("download_artifact")]

    def add(
        self,
        files: dict[str, str],
        *,
        branch: str = "main",
        age_days: int = 0,
        expired: bool = False,
        conclusion: str | None = "success",
        name: str = NAME,
    ) -> int:
        aid = len(self.artifacts) + 1
        run_id = 100 + aid
        info = ArtifactInfo(
            id=aid,
            name=name,
            expired=expired,
            created_at=T0 - timedelta(days=age_days),
            head_branch=branch,
            workflow_run_id=run_id,
        )
        self.add_artifact(info, make_zip(files), conclusion=conclusion)
        return aid


def store(source: GitHubPort, tmp_path: Path) -> ArtifactBackend:
    return ArtifactBackend(source, NAME, report_dir=tmp_path / "report", max_bytes=2**20)


def doc(note: str, suite: str = "My Suite", model: str = MODEL) -> str:
    return snapshot_to_json(snapshot(suite=suite, note=note, model=model))


def test_newest_matching_artifact_is_chosen(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({PAIR_FILE: doc("old")}, age_days=3)
    fake.add({PAIR_FILE: doc("new")}, age_days=1)
    fake.add({PAIR_FILE: doc("middle")}, age_days=2)

    loaded = store(fake, tmp_path).load("My Suite", MODEL, for_ref="main")

    assert loaded is not None and loaded.note == "new"
    assert fake.downloaded == [2]


def test_expired_other_branch_failed_and_running_artifacts_are_ignored(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({PAIR_FILE: doc("good")}, age_days=9)
    fake.add({PAIR_FILE: doc("expired")}, age_days=1, expired=True)
    fake.add({PAIR_FILE: doc("feature")}, age_days=1, branch="feature")
    fake.add({PAIR_FILE: doc("failed")}, age_days=1, conclusion="failure")
    fake.add({PAIR_FILE: doc("running")}, age_days=1, conclusion=None)
    fake.add({PAIR_FILE: doc("other name")}, age_days=1, name="something-else")

    loaded = store(fake, tmp_path).load("My Suite", MODEL, for_ref="main")

    assert loaded is not None and loaded.note == "good"
    assert fake.downloaded == [1]


def test_no_artifact_is_no_baseline(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({PAIR_FILE: doc("feature")}, branch="feature")

    assert store(fake, tmp_path).load("My Suite", MODEL, for_ref="main") is None
    assert store(FakeArtifacts(), tmp_path).load("My Suite", MODEL, for_ref="main") is None


def test_an_older_artifact_holds_a_pair_the_newest_did_not_promote(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({PAIR_FILE: doc("kept")}, age_days=5)
    fake.add({"other-suite/openai-gpt-4o/baseline.json": doc("x", suite="Other suite")})

    loaded = store(fake, tmp_path).load("My Suite", MODEL, for_ref="main")

    assert loaded is not None and loaded.note == "kept"


def test_a_single_baseline_file_is_used_when_it_is_for_this_pair(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({"baseline.json": doc("single")})

    backend = store(fake, tmp_path)

    loaded = backend.load("My Suite", MODEL, for_ref="main")
    assert loaded is not None and loaded.note == "single"
    assert backend.load("My Suite", "anthropic/claude-3", for_ref="main") is None


def test_corrupt_baseline_in_an_artifact_names_it(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    aid = fake.add({PAIR_FILE: "{ nope"})

    with pytest.raises(BaselineFileError) as err:
        store(fake, tmp_path).load("My Suite", MODEL, for_ref="main")

    assert err.value.location == f"artifact '{NAME}' #{aid}:{PAIR_FILE}"


def test_save_writes_the_upload_folder_in_the_report_dir(tmp_path: Path) -> None:
    snap = snapshot(note="promoted")

    location = store(FakeArtifacts(), tmp_path).save(snap, sha="a" * 40, ref="main")

    expected = tmp_path / "report" / ARTIFACT_DIR / "my-suite" / "openai-gpt-4o" / "baseline.json"
    assert location == str(expected)
    assert json.loads(expected.read_text(encoding="utf-8"))["note"] == "promoted"
    assert f"report/{ARTIFACT_DIR}/" in UPLOAD_STEP.replace("promptcanary-report", "report")


def test_saved_folder_zipped_is_read_back(tmp_path: Path) -> None:
    # What actions/upload-artifact makes of the folder: its contents, relative to it.
    snap = snapshot(note="round trip")
    store(FakeArtifacts(), tmp_path).save(snap, sha="a" * 40, ref="main")
    folder = tmp_path / "report" / ARTIFACT_DIR
    files = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }
    fake = FakeArtifacts()
    fake.add(files)

    assert store(fake, tmp_path).load("My Suite", MODEL, for_ref="main") == snap


def _zipped_upload_folder(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "report" / ARTIFACT_DIR
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_history_travels_from_artifact_to_artifact_and_stays_bounded(tmp_path: Path) -> None:
    # Each promotion's artifact carries the previous one's history plus its own line.
    fake = FakeArtifacts()
    shas = [f"{i:040x}" for i in range(HISTORY_KEEP + 3)]
    for number, sha in enumerate(shas):
        work = tmp_path / f"job{number}"
        backend = store(fake, work)
        found = backend.load("My Suite", MODEL, for_ref="main")
        assert (found is None) == (number == 0)
        backend.save(snapshot(note=sha), sha=sha, ref="main")
        files = _zipped_upload_folder(work)
        assert set(files) == {PAIR_FILE, PAIR_FILE.replace("baseline.json", "history.jsonl")}
        fake.add(files, age_days=-number)  # newer each time

    reader = store(fake, tmp_path / "reader")
    reader.load("My Suite", MODEL, for_ref="main")
    history = reader.history("My Suite", MODEL)

    assert [r["sha"] for r in history] == shas[-HISTORY_KEEP:]
    assert history[-1]["model"] == MODEL


def test_history_is_empty_before_a_load_and_for_an_artifact_without_one(tmp_path: Path) -> None:
    fake = FakeArtifacts()
    fake.add({PAIR_FILE: doc("old style, no history")})
    backend = store(fake, tmp_path)

    assert backend.history("My Suite", MODEL) == []
    assert backend.load("My Suite", MODEL, for_ref="main") is not None
    assert backend.history("My Suite", MODEL) == []


# -- the real GitHubClient against the fake GitHub server --------------------------------------
def test_real_client_picks_the_newest_successful_main_artifact(
    github_server: FakeGitHubServer, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    gh = github_server
    gh.add_artifact(
        NAME, make_zip({PAIR_FILE: doc("old")}), "main", 11, created_at=now - timedelta(days=2)
    )
    gh.add_artifact(
        NAME, make_zip({PAIR_FILE: doc("new")}), "main", 12, created_at=now - timedelta(days=1)
    )
    gh.add_artifact(
        NAME, make_zip({PAIR_FILE: doc("failed")}), "main", 13, created_at=now, conclusion="failure"
    )
    gh.add_artifact(
        NAME, make_zip({PAIR_FILE: doc("gone")}), "main", 14, created_at=now, expired=True
    )
    gh.add_artifact(NAME, make_zip({PAIR_FILE: doc("pr")}), "feature", 15, created_at=now)
    client = GitHubClient("ghs_test", "octo-org/octo-repo", gh.url, retry_sleep=lambda _: None)

    loaded = store(client, tmp_path).load("My Suite", MODEL, for_ref="main")

    assert loaded is not None and loaded.note == "new"
    assert store(client, tmp_path).load("My Suite", MODEL, for_ref="develop") is None
