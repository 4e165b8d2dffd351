"""End to end with things the action must not trust: a fork's read-only token, hostile model
output, and a run whose model cannot be reached at all."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import (
    PR_NUMBER,
    STATUS_PROMPTS,
    ActionHarness,
    pr_event,
    split_fenced,
    suite_text,
)

pytestmark = pytest.mark.e2e

FORK_PR = 8
FORK_HEAD = "f5" * 20


# The fence and the line after it are in both answers: in the diff they are context lines
# (" ```", a valid closing fence for a three-backtick block) rather than "+" lines.
FENCE_TAIL = "```\n**escaped the fence**\n"
CALM = "All systems operational.\n" + FENCE_TAIL
HOSTILE = (
    "All systems degraded.\n"
    "::error::pwned\n"
    "::set-output name=x::y\n"
    "::add-mask::hunter2\n"
    "cc @octocat\n"
    "<img src=x onerror=alert(1)>\n" + FENCE_TAIL
)


def test_fork_pr_without_write_permission_leaves_the_comment_in_a_file(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script("service up", content="All systems operational.")
    harness.github.add_pull(FORK_PR, "patch-1", "main", FORK_HEAD, "b2" * 20, fork=True)
    # A fork's GITHUB_TOKEN is read-only: GitHub answers 403 to every write.
    for path in (rf"/issues/{FORK_PR}/comments$", r"/check-runs"):
        harness.github.fail("POST", path, 403, message="Resource not accessible by integration")

    result = harness.run_pr({"baseline": "none"}, number=FORK_PR, head_sha=FORK_HEAD, fork=True)

    assert result.returncode == 0, result.log
    warnings = [c.message for c in result.annotations("warning")]
    [comment_warning] = [w for w in warnings if "pull-requests: write" in w]
    assert "comment" in comment_warning
    assert "fork" in comment_warning
    assert "workflow_run" in comment_warning
    assert "mode: post-comment" in comment_warning
    # The check run has no second way out: its warning must not promise one.
    [check_warning] = [w for w in warnings if "checks: write" in w]
    assert "post-comment" not in check_warning
    assert harness.github.comments(FORK_PR) == []

    comment_file = result.output_path("comment-file")
    body = comment_file.read_text(encoding="utf-8")
    assert body.startswith("**✅ 1 model run")
    # The structured report that post-comment mode re-renders knows which PR it is for.
    step = json.loads((result.report_dir / "step.json").read_text(encoding="utf-8"))
    assert step["pr_number"] == FORK_PR
    assert "comment-url" not in result.outputs
    # The job summary carries the same report.
    assert "| status | `openai/fake` |" in result.summary
    assert "| status | `openai/fake` |" in body


def test_fork_pr_with_drift_still_fails_by_the_gate(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script(
        "service up", content="All systems operational.", drifted={"content": "Unknown."}
    )
    created = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.github.add_pull(FORK_PR, "patch-1", "main", FORK_HEAD, "b2" * 20, fork=True)
    harness.github.fail("POST", rf"/issues/{FORK_PR}/comments$", 403)
    harness.llm.drift = True

    result = harness.run_pr({"baseline": "path"}, number=FORK_PR, head_sha=FORK_HEAD, fork=True)

    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == "1"
    assert "Regressions: status" in result.output_path("comment-file").read_text("utf-8")


def test_hostile_model_output_stays_inert_in_the_comment_and_the_log(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script(
        "service up",
        content=CALM,
        drifted={"content": HOSTILE},
    )
    created = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True

    result = harness.run_pr({"baseline": "path"})

    assert result.returncode == 1, result.log
    [comment] = harness.github.comments(PR_NUMBER)
    body = comment.body
    assert "pwned" in body, "the drifted answer should be shown in the comment's diff"
    outside, blocks = split_fenced(body)
    # Every line of the model's answer is inside a code block that the answer's own fence
    # cannot close: none of it is rendered as markdown or HTML.
    assert "pwned" not in outside
    assert "escaped the fence" not in outside
    assert "<img" not in outside
    assert any("escaped the fence" in block for block in blocks)
    # No live mention anywhere (GitHub's notification e-mails quote code blocks as text too).
    assert "@octocat" not in body
    assert "@\u200boctocat" in body

    # The runner never executes a command from the model's answer: nothing printed by the step
    # can raise an error annotation, set an output or mask a value on the model's behalf.
    commands = result.commands
    assert not [c for c in commands if "pwned" in c.message]
    assert not [c for c in commands if c.name in ("set-output", "add-mask")]
    assert "x" not in result.outputs
    errors = [c for c in commands if c.name == "error"]
    assert all("pwned" not in c.message for c in errors)


def test_model_without_api_key_or_api_base_is_an_untrustworthy_run(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("status", None, STATUS_PROMPTS))

    result = harness.run(
        "push",
        {"ref": "refs/heads/main", "after": "c3" * 20},
        {"baseline": "none", "models": "openai/gpt-4o-mini"},
        env={"OPENAI_API_KEY": None, "OPENAI_API_BASE": None},
    )

    assert result.returncode == 3, result.log
    [error] = result.annotations("error")
    assert "OPENAI_API_KEY" in error.message
    assert harness.llm.request_count == 0


def test_a_step_that_stops_early_completes_its_check_run(harness: ActionHarness) -> None:
    # The check run is created before the suite runs; a missing key stops the step after that.
    harness.write("canary.yaml", suite_text("status", None, STATUS_PROMPTS))

    result = harness.run(
        "pull_request",
        pr_event(),
        {"baseline": "none", "models": "openai/gpt-4o-mini"},
        env={"OPENAI_API_KEY": None, "OPENAI_API_BASE": None},
    )

    assert result.returncode == 3, result.log
    check = harness.check_run()
    # Left "in_progress", GitHub would show the check as running forever.
    assert (check.status, check.conclusion) == ("completed", "failure")
    assert "needs OPENAI" in (check.summary or "")  # the reason, markdown-escaped
