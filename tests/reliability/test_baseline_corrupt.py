"""Baselines that cannot be used: truncated JSON, a schema_version from the future, a snapshot of
the wrong shape, a deleted file, and a truncated file on the data branch.

An unreadable baseline is a configuration problem: exit 2 with an error naming the file and how
to recover, with the run's results still written. A missing baseline is not an error:
``baseline-status: missing`` on a pull request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.runner import ActionResult
from tests.fakes.git_fixtures import GitWorkspace, run_git
from tests.reliability.conftest import ActionHarness, run_json
from tests.suite_texts import ping_suite

pytestmark = pytest.mark.e2e

SUITE = ping_suite("corrupt")
RECORDING = json.dumps({"prompt_id": "ping", "content": "pong", "model": "openai/fake"}) + "\n"
BASELINE = Path(".promptcanary/baselines/corrupt/openai-fake/baseline.json")
UNREADABLE = "PromptCanary: unreadable baseline"


def _create_baseline(harness: ActionHarness) -> Path:
    harness.write("canary.yaml", SUITE)
    harness.write("recording.jsonl", RECORDING)
    created = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert created.returncode == 0, created.log
    assert created.outputs["baseline-status"] == "created", created.log
    path = harness.workspace / BASELINE
    assert path.is_file(), sorted(p.name for p in (harness.workspace / ".promptcanary").rglob("*"))
    return path


def _truncate(text: str) -> str:
    return text[: len(text) // 2]


def _future(text: str) -> str:
    return json.dumps({**json.loads(text), "schema_version": 999})


def _wrong_shape(text: str) -> str:
    data = json.loads(text)
    del data["run_result"]
    return json.dumps(data)


def _assert_unreadable(result: ActionResult, location: str, problem: str) -> None:
    assert result.returncode == 2, result.log
    errors = [c for c in result.annotations("error") if c.properties.get("title") == UNREADABLE]
    assert len(errors) == 1, result.log
    assert location in errors[0].message
    assert problem in errors[0].message
    assert "re-create" in errors[0].message
    # The run itself still happened and is reported.
    assert run_json(result)["error_count"] == 0
    assert result.outputs["overall-score"] == "1.0000"
    assert (result.report_dir / "comment.md").is_file()


@pytest.mark.parametrize(
    ("corrupt", "problem"),
    [
        (_truncate, "not valid JSON"),
        (_future, "schema_version 999 is newer"),
        (_wrong_shape, "run_result"),
    ],
    ids=["truncated", "future-schema", "wrong-shape"],
)
def test_unreadable_path_baseline_exits_2_naming_the_file(
    harness: ActionHarness, corrupt: Callable[[str], str], problem: str
) -> None:
    path = _create_baseline(harness)
    broken = corrupt(path.read_text(encoding="utf-8"))
    path.write_text(broken, encoding="utf-8")

    result = harness.run_pr({"baseline": "path"})

    _assert_unreadable(result, str(BASELINE), problem)
    assert result.outputs["baseline-status"] == "missing"
    assert path.read_text(encoding="utf-8") == broken


def test_unreadable_baseline_is_not_overwritten_by_a_promotion(harness: ActionHarness) -> None:
    path = _create_baseline(harness)
    broken = _truncate(path.read_text(encoding="utf-8"))
    path.write_text(broken, encoding="utf-8")

    result = harness.run_push({"baseline": "path", "update-baseline": "auto"})

    _assert_unreadable(result, str(BASELINE), "not valid JSON")
    assert path.read_text(encoding="utf-8") == broken


def test_deleted_baseline_is_reported_missing_not_an_error(harness: ActionHarness) -> None:
    path = _create_baseline(harness)
    path.unlink()

    result = harness.run_pr({"baseline": "path"})

    assert result.returncode == 0, result.log
    assert result.outputs["baseline-status"] == "missing"
    assert result.annotations("error") == []


def test_truncated_baseline_on_the_data_branch_exits_2_naming_it(
    harness: ActionHarness, git_workspace: GitWorkspace
) -> None:
    harness.workspace = git_workspace.path
    harness.write("canary.yaml", SUITE)
    harness.write("recording.jsonl", RECORDING)
    created = harness.run_push({"baseline": "branch"})
    assert created.outputs.get("baseline-status") == "created", created.log
    # Someone breaks the file on the data branch (a bad manual edit, a half-synced mirror).
    ws = git_workspace
    ws.run("fetch", "--quiet", "origin", "promptcanary-baselines")
    ws.run("checkout", "--quiet", "-b", "data", "FETCH_HEAD")
    target = ws.path / "corrupt/openai-fake/baseline.json"
    target.write_text(_truncate(target.read_text(encoding="utf-8")), encoding="utf-8")
    ws.run("commit", "--quiet", "-am", "break the baseline")
    ws.run("push", "--quiet", "origin", "data:promptcanary-baselines")
    ws.run("checkout", "--quiet", "main")

    result = harness.run_pr({"baseline": "branch"})

    _assert_unreadable(result, "promptcanary-baselines:corrupt/openai-fake/baseline.json", "JSON")
    # The user's checkout is where it was.
    assert run_git("rev-parse", "HEAD", cwd=ws.path, env=ws.env).stdout.strip() == ws.head_sha
