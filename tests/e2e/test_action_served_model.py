"""End to end: a pull request whose model is served by another id than its baseline's. The
finding is in the comment, the check run and the outputs; ``fail-on-model-change: true`` fails
the step; the same id shows nothing."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import PR_NUMBER, ActionHarness, suite_text

pytestmark = pytest.mark.e2e

PROMPTS = """\
  - id: refund-policy
    text: What is the refund window?
    probes:
      - type: keyword_presence
        id: mentions-days
        required_keywords: [30 days]
"""
BASELINE = {"baseline": "path", "update-baseline": "always"}


def baseline_served_as(harness: ActionHarness, served: str) -> None:
    harness.write("canary.yaml", suite_text("support", harness.llm.url, PROMPTS))
    harness.llm.script("refund window", content="Refunds within 30 days.")
    harness.llm.served_model = served
    result = harness.run_push(BASELINE)
    assert result.returncode == 0, result.log
    assert result.outputs["served-model-changed"] == "false"


def test_another_served_model_is_reported_in_comment_check_run_and_outputs(
    harness: ActionHarness,
) -> None:
    baseline_served_as(harness, "fake-2024-08-06")
    harness.llm.served_model = "fake-2024-11-20"

    result = harness.run_pr({"baseline": "path"})

    assert result.returncode == 0, result.log  # reported, not failed, by default
    finding = "openai/fake answered as fake-2024-11-20; the baseline as fake-2024-08-06"
    [comment] = harness.github.comments(PR_NUMBER)
    assert "**Served model changed**" in comment.body
    # Markdown-escaped where it is rendered: hyphens are safe, so the text reads as is.
    assert finding in comment.body.replace("\\", "")
    check = harness.check_run()
    assert finding in (check.summary or "").replace("\\", "")
    assert result.outputs["served-model-changed"] == "true"
    assert "the served model changed" in result.outputs["summary"]
    assert "Served model changed" in result.summary


def test_fail_on_model_change_fails_the_step(harness: ActionHarness) -> None:
    baseline_served_as(harness, "fake-2024-08-06")
    harness.llm.served_model = "fake-2024-11-20"

    result = harness.run_pr({"baseline": "path", "fail-on-model-change": "true"})

    assert result.returncode == 1, result.log
    assert result.outputs["served-model-changed"] == "true"
    assert harness.check_run().conclusion == "failure"


def test_the_same_served_model_shows_nothing(harness: ActionHarness) -> None:
    baseline_served_as(harness, "fake-2024-08-06")

    result = harness.run_pr({"baseline": "path", "fail-on-model-change": "true"})

    assert result.returncode == 0, result.log
    [comment] = harness.github.comments(PR_NUMBER)
    assert "Served model" not in comment.body and "served model" not in comment.body
    assert result.outputs["served-model-changed"] == "false"
