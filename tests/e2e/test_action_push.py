"""End to end on pushes to the default branch: the baseline is created, then found and updated;
and the configuration mistakes a user makes, each answered with exit 2 and what to fix."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import MAIN_SHA, MODEL, STATUS_PROMPTS, ActionHarness, line_of, suite_text
from tests.fakes.git_fixtures import GitWorkspace

pytestmark = pytest.mark.e2e

SECOND_SHA = "9f" * 20


def test_push_creates_then_updates_the_baseline_file(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("status page", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script("service up", content="All systems operational.")
    inputs = {"baseline": "path", "baseline-path": "canary-baselines"}
    baseline = harness.workspace / "canary-baselines" / "status-page" / "openai-fake"

    first = harness.run_push(inputs)

    assert first.returncode == 0, first.log
    assert first.outputs["baseline-status"] == "created"
    stored = json.loads((baseline / "baseline.json").read_text(encoding="utf-8"))
    assert stored["suite_name"] == "status page"
    assert MAIN_SHA in json.dumps(stored)
    assert first.outputs["baseline-score"] == ""  # nothing to compare with on the first run

    second = harness.run_push(inputs, after=SECOND_SHA)

    assert second.returncode == 0, second.log
    # update-baseline: auto promotes a clean run on the default branch.
    assert second.outputs["baseline-status"] == "updated"
    assert second.outputs["baseline-score"] == "1.0000"
    assert second.outputs["regressions"] == "0"
    restored = (baseline / "baseline.json").read_text(encoding="utf-8")
    assert SECOND_SHA in restored
    history = (baseline / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(history) == 2
    # No pull request: no comment, but a check run on the pushed commit.
    assert "comment-url" not in second.outputs
    assert harness.check_run().head_sha == SECOND_SHA


def test_push_with_update_never_only_reads_the_baseline(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script("service up", content="All systems operational.")
    created = harness.run_push({"baseline": "path"})
    assert created.outputs["baseline-status"] == "created", created.log
    path = harness.workspace / ".promptcanary/baselines/status/openai-fake/baseline.json"
    before = path.read_text(encoding="utf-8")

    result = harness.run_push({"baseline": "path", "update-baseline": "never"}, after=SECOND_SHA)

    assert result.returncode == 0, result.log
    assert result.outputs["baseline-status"] == "found"
    assert path.read_text(encoding="utf-8") == before


# ------------------------------------------------------------------------------------------------
# configuration errors: exit 2 with a message naming what to fix


def _only_error(result_log: str, errors: list) -> str:
    assert len(errors) == 1, result_log
    return str(errors[0].message)


def test_bad_input_value_names_the_input(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))

    result = harness.run_push({"fail-on": "sometimes"})

    assert result.returncode == 2, result.log
    message = _only_error(result.log, result.annotations("error"))
    assert message == (
        "input 'fail-on': 'sometimes' is not one of regression, inconclusive, failure, never, low, "
        "medium, high, critical"
    )
    assert harness.llm.request_count == 0


def test_bad_yaml_names_file_and_line(harness: ActionHarness) -> None:
    # An unquoted colon in a plain scalar: a typical hand-edit mistake.
    broken = "  - id: broken\n    text: Answer: yes or no?\n    tags: [x]\n"
    text = suite_text("status", harness.llm.url, STATUS_PROMPTS) + broken
    harness.write("canary.yaml", text)

    result = harness.run_push({"baseline": "none"})

    assert result.returncode == 2, result.log
    message = _only_error(result.log, result.annotations("error"))
    assert f"canary.yaml:{line_of(text, 'Answer: yes')}:" in message
    assert "invalid YAML" in message
    assert harness.llm.request_count == 0


def test_unknown_probe_type_names_the_line(harness: ActionHarness) -> None:
    text = suite_text(
        "status", harness.llm.url, STATUS_PROMPTS.replace("keyword_presence", "keywords")
    )
    harness.write("canary.yaml", text)

    result = harness.run_push({"baseline": "none"})

    assert result.returncode == 2, result.log
    message = _only_error(result.log, result.annotations("error"))
    assert f"canary.yaml:{line_of(text, 'type: keywords')}:" in message
    assert "keyword_presence" in message  # the valid names, or the suggestion


def test_probe_module_that_raises_names_the_file(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    module = "import os\n\nSETTING = os.environ['PROBE_SETTING_THAT_IS_NOT_SET']\n"
    harness.write("probes/custom_probes.py", module)

    result = harness.run_push({"baseline": "none", "probe-modules": "probes/custom_probes.py"})

    assert result.returncode == 2, result.log
    message = _only_error(result.log, result.annotations("error"))
    assert f"custom_probes.py:{line_of(module, 'SETTING =')}" in message
    assert "KeyError" in message
    assert harness.llm.request_count == 0


def test_a_config_glob_that_matches_nothing_is_a_usage_error(harness: ActionHarness) -> None:
    result = harness.run_push({"config": "canaries/*.yaml", "models": MODEL})

    assert result.returncode == 2, result.log
    message = _only_error(result.log, result.annotations("error"))
    assert "input 'config'" in message and "canaries/*.yaml" in message


def test_branch_baseline_is_pushed_to_the_data_branch_and_read_by_prs(
    git_harness: ActionHarness, git_workspace: GitWorkspace
) -> None:
    harness = git_harness
    harness.llm.script(
        "service up", content="All systems operational.", drifted={"content": "Unknown."}
    )
    head = git_workspace.commit_file(
        "canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS), "Add canaries"
    )
    git_workspace.run("push", "--quiet", "origin", "main")

    pushed = harness.run_push({"baseline": "branch"}, after=head)

    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["baseline-status"] == "created"
    refs = git_workspace.remote_refs()
    assert "refs/heads/promptcanary-baselines" in refs
    stored = git_workspace.run_in_origin(
        "show", "promptcanary-baselines:status/openai-fake/baseline.json"
    )
    assert json.loads(stored)["suite_name"] == "status"
    # The user's checkout is untouched: same HEAD, no change to tracked files.
    assert git_workspace.rev_parse() == head
    assert git_workspace.run("status", "--porcelain", "--untracked-files=no") == ""

    harness.llm.drift = True
    result = harness.run_pr({"baseline": "branch"})

    assert result.returncode == 1, result.log
    assert result.outputs["baseline-status"] == "found"
    assert result.outputs["regressions"] == "1"
    # A pull request never moves the base branch's baseline.
    assert (
        git_workspace.remote_refs()["refs/heads/promptcanary-baselines"]
        == (refs["refs/heads/promptcanary-baselines"])
    )
