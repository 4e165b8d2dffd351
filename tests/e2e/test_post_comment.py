"""End to end, the two halves of the fork pattern: a fork's run leaves its comment in the report
folder; a ``workflow_run`` workflow posts it with ``mode: post-comment``."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.conftest import STATUS_PROMPTS, ActionHarness, suite_text, workflow_run_event
from tests.e2e.runner import ActionResult

pytestmark = pytest.mark.e2e

FORK_PR = 12
FORK_HEAD = "e6" * 20
MARKER = "<!-- promptcanary-action:comment-id=default -->"


def fork_run(harness: ActionHarness) -> ActionResult:
    """The untrusted half: a fork PR whose read-only token cannot comment."""
    harness.write("canary.yaml", suite_text("status", harness.llm.url, STATUS_PROMPTS))
    harness.llm.script("service up", content="All systems operational.")
    harness.github.add_pull(FORK_PR, "patch-1", "main", FORK_HEAD, "b2" * 20, fork=True)
    harness.github.fail("POST", r"/comments$", 403, times=1)
    result = harness.run_pr(
        {"baseline": "none", "check-run": "false"}, number=FORK_PR, head_sha=FORK_HEAD, fork=True
    )
    assert result.returncode == 0, result.log
    assert harness.github.comments(FORK_PR) == []
    return result


def post(harness: ActionHarness, head_sha: str) -> ActionResult:
    """The trusted half, run in the same workspace after downloading the report artifact."""
    return harness.run(
        "workflow_run",
        workflow_run_event(head_sha=head_sha, head_branch="patch-1"),
        {"mode": "post-comment"},
        # The trusted workflow has no model credentials to leak, and needs none.
        env={"OPENAI_API_KEY": None},
    )


def test_post_comment_posts_the_fork_runs_comment_on_its_pr(harness: ActionHarness) -> None:
    left = fork_run(harness).report_dir / "comment.md"
    fork_body = left.read_text(encoding="utf-8")
    requests_before = harness.llm.request_count

    result = post(harness, FORK_HEAD)

    assert result.returncode == 0, result.log
    [comment] = harness.github.comments(FORK_PR)
    assert comment.body.startswith(fork_body.splitlines()[0])
    assert "| status | `openai/fake` |" in comment.body
    assert comment.body.count(MARKER) == 1
    assert comment.user == ("github-actions[bot]", "Bot")
    assert result.outputs["comment-url"].endswith(f"#issuecomment-{comment.id}")
    assert harness.llm.request_count == requests_before  # nothing was run again

    # Posting again (a re-run of the workflow_run job) edits the same comment.
    again = post(harness, FORK_HEAD)
    assert again.returncode == 0, again.log
    assert [c.id for c in harness.github.comments(FORK_PR)] == [comment.id]


def test_post_comment_refuses_when_the_pr_moved_past_the_run(harness: ActionHarness) -> None:
    fork_run(harness)
    # The contributor pushed again: the PR's head is no longer the commit the fork's run saw.
    pull = harness.github.state.issues[FORK_PR].pull
    assert pull is not None
    pull["head_sha"] = "d7" * 20

    result = post(harness, FORK_HEAD)

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert f"#{FORK_PR}" in error.message
    assert "d7d7d7d7d7d7" in error.message and FORK_HEAD[:12] in error.message
    assert "not posting" in error.message
    assert harness.github.comments(FORK_PR) == []


def test_post_comment_rerenders_instead_of_posting_the_forks_markdown(
    harness: ActionHarness,
) -> None:
    """A fork controls its report folder: its markdown must never be posted as the bot's."""
    report_dir = fork_run(harness).report_dir
    (report_dir / "comment.md").write_text("@octocat <img src=x> pwned\n", encoding="utf-8")
    step = report_dir / "step.json"
    data = json.loads(step.read_text(encoding="utf-8"))
    data["warnings"].append("ping @octo-org/admins <img src=x> ![i](http://e/x.png)")
    step.write_text(json.dumps(data), encoding="utf-8")

    result = post(harness, FORK_HEAD)

    assert result.returncode == 0, result.log
    [comment] = harness.github.comments(FORK_PR)
    assert "pwned" not in comment.body
    assert "admins" in comment.body  # the warning is shown, but inert:
    assert re.search(r"(?<![\w`])@[A-Za-z0-9]", comment.body) is None
    assert "<img" not in comment.body and "![i](" not in comment.body
    assert "| status | `openai/fake` |" in comment.body


def test_post_comment_rejects_a_report_that_is_not_ours(harness: ActionHarness) -> None:
    report_dir = fork_run(harness).report_dir
    (report_dir / "step.json").write_text('{"pairs": "nope"}', encoding="utf-8")

    result = post(harness, FORK_HEAD)

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert "step.json" in error.message
    assert harness.github.comments(FORK_PR) == []
