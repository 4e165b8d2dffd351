"""GitHub faults: a 403 on the comment, a PR that does not exist, a 500 then success, GitHub's
secondary rate limit, and every call failing.

GitHub failures are warnings naming what to fix (the missing ``permissions:`` entry), retried
where GitHub says retrying helps, and never lose a result: the report folder, the outputs and the
job summary are written before anything is sent to GitHub.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.conftest import pr_event
from tests.e2e.runner import ActionResult
from tests.fakes.github_server import Reply
from tests.reliability.conftest import (
    PR_NUMBER,
    ActionHarness,
    keyword_prompts,
    suite_text,
)

pytestmark = pytest.mark.e2e

COMMENTS = rf"/issues/{PR_NUMBER}/comments$"
PUBLISH_TITLE = "PromptCanary could not publish to GitHub"


def _setup(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("gh", harness.llm.url, keyword_prompts(2)))
    harness.llm.script(None, content="canary ok")


def _publish_warnings(result: ActionResult) -> list[str]:
    return [
        c.message
        for c in result.annotations("warning")
        if c.properties.get("title") == PUBLISH_TITLE
    ]


def _record_times(harness: ActionHarness, method: str, path_regex: str) -> list[float]:
    """Arrival times of matching requests (the fake records requests, not their times)."""
    times: list[float] = []
    handle = harness.github.handle
    pattern = re.compile(path_regex)

    def timed(verb: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        if verb == method and pattern.search(raw_path.split("?", 1)[0]):
            times.append(time.monotonic())
        return handle(verb, raw_path, headers, body)

    harness.github.handle = timed  # type: ignore[method-assign]
    return times


def assert_results_kept(result: ActionResult) -> None:
    """Everything a user needs is there without GitHub: files, outputs, job summary."""
    report = result.report_dir
    for name in ("comment.md", "summary.md", "outcome.json"):
        assert (report / name).is_file(), name
    assert list(report.glob("*/*/run.json")), "no run.json in the report folder"
    for output in ("overall-score", "pass-rate", "errors", "summary", "comment-file", "report-dir"):
        assert result.outputs.get(output), output
    assert result.outputs["overall-score"] == "1.0000"
    assert "| gh | `openai/fake` |" in result.summary


def test_403_on_the_comment_is_a_warning_naming_the_permission(harness: ActionHarness) -> None:
    _setup(harness)
    harness.github.fail("POST", COMMENTS, 403, message="Resource not accessible by integration")

    result = harness.run_pr({"baseline": "none"})

    assert result.returncode == 0, result.log
    [warning] = _publish_warnings(result)
    assert "pull-requests: write" in warning
    assert "Resource not accessible by integration" in warning
    assert harness.github.comments(PR_NUMBER) == []
    assert_results_kept(result)
    assert "comment-url" not in result.outputs
    # A 403 is not retried: retrying cannot grant a permission.
    assert len(harness.github.requests_to("POST", COMMENTS)) == 1
    # The check run, which was allowed, still completed.
    assert harness.check_run().conclusion == "success"


def test_404_on_the_pull_request_is_a_warning_naming_it(harness: ActionHarness) -> None:
    _setup(harness)

    result = harness.run_pr({"baseline": "none"}, number=99)  # no PR #99 on the server

    assert result.returncode == 0, result.log
    [warning] = _publish_warnings(result)
    assert "pull request #99" in warning
    assert "404" in warning
    assert_results_kept(result)


def test_500_then_success_is_retried_and_posted(harness: ActionHarness) -> None:
    _setup(harness)
    harness.github.fail("POST", COMMENTS, 500, times=2)
    harness.github.fail("PATCH", r"/check-runs/\d+$", 502, times=1)

    result = harness.run_pr({"baseline": "none"})

    assert result.returncode == 0, result.log
    assert _publish_warnings(result) == []
    [comment] = harness.github.comments(PR_NUMBER)
    assert comment.body.startswith("**✅")
    assert result.outputs["comment-url"].endswith(f"#issuecomment-{comment.id}")
    assert len(harness.github.requests_to("POST", COMMENTS)) == 3
    assert harness.check_run().conclusion == "success"
    assert result.outputs["check-run-url"]


def test_secondary_rate_limit_waits_retry_after_then_posts(harness: ActionHarness) -> None:
    _setup(harness)
    harness.github.fail("POST", COMMENTS, 403, times=1, secondary_rate_limit=True, retry_after=1)
    timings = _record_times(harness, "POST", COMMENTS)

    result = harness.run_pr({"baseline": "none"})

    assert result.returncode == 0, result.log
    assert _publish_warnings(result) == []
    assert len(harness.github.comments(PR_NUMBER)) == 1
    posts = harness.github.requests_to("POST", COMMENTS)
    assert len(posts) == 2
    # The retry came no sooner than GitHub's Retry-After.
    assert len(timings) == 2
    assert timings[1] - timings[0] >= 0.95, timings


def test_every_github_call_failing_loses_no_result(harness: ActionHarness) -> None:
    _setup(harness)
    harness.github.fail("*", r".*", 403, message="Resource not accessible by integration")

    result = harness.run_pr({"baseline": "none", "fail-on": "failure"})

    assert result.returncode == 0, result.log
    warnings = _publish_warnings(result)
    assert any("pull-requests: write" in w for w in warnings), warnings
    assert any("checks: write" in w for w in warnings), warnings
    assert_results_kept(result)
    assert harness.github.comments(PR_NUMBER) == []
    assert harness.github.check_runs == []


def test_github_unreachable_loses_no_result(harness: ActionHarness) -> None:
    _setup(harness)
    harness.github.stop()  # nothing listens any more: connection refused

    result = harness.run("pull_request", pr_event(), {"baseline": "none"})

    assert result.returncode == 0, result.log
    warnings = _publish_warnings(result)
    assert warnings and all("could not reach GitHub" in w for w in warnings), warnings
    assert_results_kept(result)
