"""LLM server fault: permanent 500s for some prompts.

The failing prompts are recorded as errored (never as regressions), the rest are compared and the
gate decides the exit code; above ``max-error-rate`` the run is untrustworthy: exit 3 with a
message saying so.
"""

from __future__ import annotations

import json

import pytest

from promptcanary.core.sampling.sequential import MIN_SAMPLES
from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    report_json,
    responses_by_prompt,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e

PROMPTS = 10


def _suite(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("flaky", harness.llm.url, keyword_prompts(PROMPTS)))


def test_permanent_500_for_10_percent_errors_those_prompts_and_compares_the_rest(
    harness: ActionHarness,
) -> None:
    _suite(harness)
    harness.llm.script("Question p0?", content="canary ok", drifted={"status": 500})
    harness.llm.script("Question p1?", content="canary ok", drifted={"content": "gone"})
    harness.llm.script(None, content="canary ok")
    created = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True
    harness.llm.reset()

    result = harness.run_pr({"baseline": "path", "max-retries": "1"})

    # One regression (p1) fails the gate; the errored prompt (p0) is not a regression.
    assert result.returncode == 1, result.log
    # Every answer of p0's first stage errored (min-samples of them); nothing more is asked.
    assert result.outputs["errors"] == str(MIN_SAMPLES)
    assert result.outputs["regressions"] == "1"
    run = run_json(result)
    responses = responses_by_prompt(run)
    assert "500" in responses["p0"]["error"]
    assert responses["p0"]["retries"] == 1
    assert all(responses[f"p{i}"]["error"] is None for i in range(1, PROMPTS))
    [drift] = report_json(result, "drift.json")
    assert [e["prompt_id"] for e in drift["errored"]] == ["p0"]
    assert [c["prompt_id"] for c in drift["comparisons"] if c["regression"]] == ["p1"]
    compared = {c["prompt_id"] for c in drift["comparisons"]}
    assert compared == {f"p{i}" for i in range(1, PROMPTS)}
    # 500 is transient: one retry per answer, then given up.
    assert len(harness.llm.requests_matching("Question p0?")) == 2 * MIN_SAMPLES
    assert result.annotations("error") == []
    # The comment tells the reader about the errored prompt.
    [comment] = harness.github.comments(7)
    assert "p0" in comment.body


def test_errors_above_max_error_rate_make_the_run_untrustworthy(harness: ActionHarness) -> None:
    _suite(harness)
    for prompt in ("p0", "p1", "p2"):  # 30% > max-error-rate 0.2
        harness.llm.script(f"Question {prompt}?", status=500)
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr({"baseline": "none", "max-error-rate": "0.2"})

    assert result.returncode == 3, result.log
    assert result.outputs["errors"] == "3"
    [error] = result.annotations("error")
    assert "Untrustworthy" in error.message
    assert "max-error-rate" in error.message
    # Results are still all on disk.
    run = run_json(result)
    assert run["error_count"] == 3
    outcome = json.loads((result.report_dir / "outcome.json").read_text(encoding="utf-8"))
    assert outcome["untrustworthy"] is True


def test_the_same_errors_under_a_looser_max_error_rate_pass(harness: ActionHarness) -> None:
    _suite(harness)
    for prompt in ("p0", "p1", "p2"):
        harness.llm.script(f"Question {prompt}?", status=500)
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr({"baseline": "none", "max-error-rate": "0.5"})

    assert result.returncode == 0, result.log
    assert result.outputs["errors"] == "3"
    assert result.annotations("error") == []
