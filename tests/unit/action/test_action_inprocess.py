"""The whole step in-process: ``action()`` with an in-memory GitHub, a scripted provider, the real
path baseline store on a temporary workspace and a fixed clock.

The fast layer under the end-to-end tests (which start ``entrypoint.py`` against local servers):
the same scenarios, seen through the exit code, the GitHub port, the report folder and outputs.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from promptcanary.core.run.provider import ProviderError
from promptcanary.core.sampling.power import FIRST_BUILD
from promptcanary_action.effects import Effects, make_backend
from promptcanary_action.github.errors import GitHubPermissionError
from promptcanary_action.github.port import GitHubPort
from promptcanary_action.main import action
from promptcanary_action.settings import Settings
from promptcanary_action.workflow import Workflow
from tests.e2e.runner import WorkflowCommand, parse_workflow_commands
from tests.fakes.github_port_fake import FakeGitHubPort
from tests.fakes.provider_fake import Answers, FakeProviderFactory

REPO = "octo-org/octo-repo"
FORK = "someone/octo-repo"
MODEL = "fake/model"
PR = 7
BASE_SHA, HEAD_SHA, PUSH_SHA = "b" * 40, "c" * 40, "d" * 40
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
MARKER = "<!-- promptcanary-action:comment-id=default -->"

SUITE = f"""\
name: support
models: [{MODEL}]
probes:
  - type: keyword_presence
    id: mentions-days
    required_keywords: [30 days]
prompts:
  - id: refund
    text: What is the refund window?
  - id: policy
    text: Where is the policy?
"""
GOOD: Answers = {"refund": "Within 30 days.", "policy": "See the 30 days policy."}
DRIFTED: Answers = {"refund": "It depends.", "policy": "See the 30 days policy."}
DOWN: Answers = {prompt: ProviderError("upstream unavailable", status_code=503) for prompt in GOOD}


@dataclass
class Step:
    """What one in-process step left behind."""

    code: int
    github: FakeGitHubPort
    workflow: Workflow
    log: str

    @property
    def commands(self) -> list[WorkflowCommand]:
        return parse_workflow_commands(self.log)

    def annotations(self, level: str) -> list[WorkflowCommand]:
        return [c for c in self.commands if c.name == level]


def push_event(workspace: Path) -> dict[str, str]:
    payload = {
        "ref": "refs/heads/main",
        "after": PUSH_SHA,
        "repository": {"default_branch": "main"},
    }
    return _event(workspace, "push", payload, ref="refs/heads/main", sha=PUSH_SHA)


def pull_request_event(workspace: Path, *, head_repo: str = REPO) -> dict[str, str]:
    payload = {
        "number": PR,
        "pull_request": {
            "number": PR,
            "head": {"sha": HEAD_SHA, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": BASE_SHA, "ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"default_branch": "main"},
    }
    return _event(workspace, "pull_request", payload, ref=f"refs/pull/{PR}/merge", sha="e" * 40)


def _event(
    workspace: Path, name: str, payload: Mapping[str, object], *, ref: str, sha: str
) -> dict[str, str]:
    path = workspace.parent / f"{name}-event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_SHA": sha,
        "GITHUB_REF": ref,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_RUN_ID": "42",
        "INPUT_GITHUB-TOKEN": "ghs_inProcessFakeToken",
        "INPUT_BASELINE": "path",
        "INPUT_MAX-RETRIES": "0",
    }


def run_step(env: dict[str, str], answers: Answers, github: FakeGitHubPort | None = None) -> Step:
    port = github or FakeGitHubPort(head=HEAD_SHA)
    out = io.StringIO()
    workflow = Workflow(out)

    def github_for(settings: Settings) -> GitHubPort | None:
        # As the real factory: no token, no GitHub.
        return port if settings.github_token else None

    effects = Effects(
        workflow=workflow,
        github=github_for,
        backend=make_backend,
        provider=FakeProviderFactory(answers),
        now=lambda: NOW,
    )
    code = action(env, effects)
    return Step(code, port, workflow, out.getvalue())


def workspace_with_suite(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "canary.yaml").write_text(SUITE, encoding="utf-8")
    return workspace


def test_a_push_on_the_default_branch_creates_then_updates_the_baseline(tmp_path: Path) -> None:
    workspace = workspace_with_suite(tmp_path)
    baseline = workspace / ".promptcanary/baselines/support/fake-model/baseline.json"

    first = run_step(push_event(workspace), GOOD)

    assert first.code == 0
    assert first.workflow.outputs["baseline-status"] == "created"
    assert json.loads(baseline.read_text(encoding="utf-8"))["suite_name"] == "support"
    (check,) = first.github.check_runs.values()
    assert (check.head_sha, check.status, check.conclusion) == (PUSH_SHA, "completed", "success")
    assert first.github.comments == []  # a push has no pull request to comment on

    again = run_step(push_event(workspace), GOOD)
    assert again.code == 0
    assert again.workflow.outputs["baseline-status"] == "updated"
    assert again.workflow.outputs["drift-detected"] == "false"


def test_a_pull_request_with_drift_fails_the_gate_comments_and_fails_the_check(
    tmp_path: Path,
) -> None:
    workspace = workspace_with_suite(tmp_path)
    assert run_step(push_event(workspace), GOOD).code == 0

    step = run_step(pull_request_event(workspace), DRIFTED)

    assert step.code == 1
    assert step.workflow.outputs["drift-detected"] == "true"
    assert step.workflow.outputs["regressions"] == "1"
    (check,) = step.github.check_runs.values()
    assert (check.head_sha, check.conclusion) == (HEAD_SHA, "failure")
    assert [a.path for a in check.annotations] == ["canary.yaml"]
    (comment,) = step.github.comments
    assert comment.pr_number == PR and comment.body.endswith(MARKER)
    assert "refund" in comment.body
    assert step.workflow.outputs["comment-url"].startswith(f"https://github.test/pr/{PR}")
    # The pull request read the base branch's baseline and did not move it.
    assert step.workflow.outputs["baseline-status"] == "found"
    assert (workspace / "promptcanary-report" / "comment.md").read_text("utf-8") == comment.body


def test_a_fork_whose_token_cannot_comment_warns_and_keeps_the_comment_file(
    tmp_path: Path,
) -> None:
    workspace = workspace_with_suite(tmp_path)
    github = FakeGitHubPort(
        head=HEAD_SHA,
        fail={
            "upsert_comment": GitHubPermissionError(
                f"create the PR comment on pull request #{PR}", "pull-requests: write"
            )
        },
    )

    step = run_step(pull_request_event(workspace, head_repo=FORK), GOOD, github)

    assert step.code == 0  # a refused comment is a warning, not a failed gate
    (warning,) = [w for w in step.annotations("warning") if "pull-requests: write" in w.message]
    assert "comment-file" in warning.message and "post-comment" in warning.message
    comment_file = workspace / step.workflow.outputs["comment-file"]
    assert MARKER in comment_file.read_text(encoding="utf-8")
    report = workspace / step.workflow.outputs["report-dir"]
    assert json.loads((report / "step.json").read_text(encoding="utf-8"))["pr_number"] == PR
    assert step.github.comments == []
    assert "comment-url" not in step.workflow.outputs


def test_a_run_whose_responses_mostly_errored_is_untrustworthy(tmp_path: Path) -> None:
    workspace = workspace_with_suite(tmp_path)

    step = run_step(push_event(workspace), DOWN)

    assert step.code == 3
    (error,) = step.annotations("error")
    # The first push builds the pool: its first stage asks each of the 2 prompts FIRST_BUILD
    # answers; every one errors, and building stops there.
    asked = 2 * FIRST_BUILD
    assert error.message.startswith(f"⚠️ Untrustworthy run: {asked} responses errored")
    (cause,) = [w for w in step.annotations("warning") if "by cause" in w.message]
    # The log says why, not only how many: the provider's reason with its answer count.
    assert f"{asked}× " in cause.message and "upstream unavailable" in cause.message
    (check,) = step.github.check_runs.values()
    assert check.conclusion == "failure"
    # Results are still written; an outage never becomes the baseline.
    assert step.workflow.outputs["errors"] == str(asked)
    assert step.workflow.outputs["baseline-status"] == "missing"
    assert not (workspace / ".promptcanary").exists()


def test_a_configuration_error_exits_2_naming_the_input_and_posts_nothing(
    tmp_path: Path,
) -> None:
    workspace = workspace_with_suite(tmp_path)

    bad_input = run_step({**push_event(workspace), "INPUT_FAIL-ON": "sometimes"}, GOOD)
    missing_suite = run_step({**push_event(workspace), "INPUT_CONFIG": "nowhere.yaml"}, GOOD)

    for step, named in ((bad_input, "input 'fail-on'"), (missing_suite, "nowhere.yaml")):
        assert step.code == 2
        (error,) = step.annotations("error")
        assert error.properties["title"] == "PromptCanary: configuration error"
        assert named in error.message
        assert step.github.calls == []


def test_post_comment_mode_posts_the_fork_runs_report_and_runs_nothing(tmp_path: Path) -> None:
    workspace = workspace_with_suite(tmp_path)
    fork = FakeGitHubPort(
        fail={"upsert_comment": GitHubPermissionError("comment", "pull-requests: write")}
    )
    assert run_step(pull_request_event(workspace, head_repo=FORK), GOOD, fork).code == 0
    payload = {"workflow_run": {"head_sha": HEAD_SHA, "event": "pull_request", "id": 9}}
    env = {
        **_event(workspace, "workflow_run", payload, ref="refs/heads/main", sha=BASE_SHA),
        "INPUT_MODE": "post-comment",
    }

    # No provider answer is scripted: post-comment mode must not run a suite.
    step = run_step(env, {}, FakeGitHubPort(head=HEAD_SHA))

    assert step.code == 0
    (comment,) = step.github.comments
    assert comment.pr_number == PR and comment.body.endswith(MARKER)
    assert [name for name, _ in step.github.calls] == ["pull_head_sha", "upsert_comment"]
