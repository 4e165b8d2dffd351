"""The real objects main() builds: the baseline store the `baseline` input picks; the collector
paused while LiteLLM imports."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from promptcanary_action.baselines.artifact import ArtifactBackend
from promptcanary_action.baselines.branch import BranchBackend
from promptcanary_action.baselines.none import NoneBackend
from promptcanary_action.baselines.path import PathBackend
from promptcanary_action.effects import import_without_collecting, make_backend
from promptcanary_action.errors import UsageError
from promptcanary_action.settings import Settings
from tests.fakes.github_port_fake import FakeGitHubPort


# -- baseline store factory --------------------------------------------------------------------
def settings(**inputs: str) -> Settings:
    env = {f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()}
    return Settings.from_environ({**env, "GITHUB_REPOSITORY": "octo-org/octo-repo"})


def test_factory_builds_the_configured_store(tmp_path: Path) -> None:
    path = make_backend(settings(baseline="path", baseline_path="keep/here"), None, tmp_path)
    assert isinstance(path, PathBackend) and path.root == tmp_path / "keep" / "here"

    assert isinstance(make_backend(settings(baseline="none"), None, tmp_path), NoneBackend)

    artifact = make_backend(
        settings(baseline="artifact", baseline_artifact="bl", report_dir="out"),
        FakeGitHubPort(),
        tmp_path,
    )
    assert isinstance(artifact, ArtifactBackend)
    assert artifact.name == "bl" and artifact.report_dir == tmp_path / "out"
    assert artifact.max_bytes == 50 * 2**20  # input max-artifact-mb's default

    branch = make_backend(settings(baseline_branch="data"), None, tmp_path)
    assert isinstance(branch, BranchBackend) and branch.branch == "data"


def test_artifact_store_without_a_github_client_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="github-token"):
        make_backend(settings(baseline="artifact"), None, tmp_path)


# -- LiteLLM's import --------------------------------------------------------------------------
def test_litellm_is_imported_with_the_collector_paused_then_frozen_and_back_on() -> None:
    seen_during_import: list[bool] = []
    release = threading.Event()

    def start_import() -> threading.Thread:
        def importing() -> None:
            seen_during_import.append(gc.isenabled())
            release.wait(10)
            seen_during_import.append(gc.isenabled())

        thread = threading.Thread(target=importing)
        thread.start()
        return thread

    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        settled = import_without_collecting(start_import)
        assert not gc.isenabled()  # paused from the moment the import starts
        release.set()
        settled.join(10)

        assert not settled.is_alive()
        assert seen_during_import == [False, False]
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen_before
    finally:
        gc.unfreeze()  # the test process's objects go back to being collected
        gc.enable()
