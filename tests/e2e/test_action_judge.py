"""End to end: an LLM judge through the entrypoint — a judged regression in the comment, the
check run and the summary with the judge's reason, the judge's requests and cost beside the
model's, the verdict cache kept in the report folder (the next run of the pull request sends no
judge request), and a changed judge reported as such instead of as a regression."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import PR_NUMBER, ActionHarness, suite_text
from tests.fakes.judge_server import JUDGE_SYSTEM_MARK, JudgePolicy

pytestmark = pytest.mark.e2e

JUDGE_MODEL = "openai/gpt-4o-mini"  # priced in LiteLLM's bundled cost map
PROMPTS = """\
  - id: refund-policy
    text: What is the refund window?
"""
INPUTS = {"baseline": "path", "samples": "1"}


def judged_suite(harness: ActionHarness, policy: JudgePolicy) -> None:
    judge = (
        f"judge: {{model: {JUDGE_MODEL}, api_base: '{harness.llm.url}', check_votes: 2}}\n"
        "judge_checks:\n"
        "  - {prompt: Greet, answer: a good hello, expected: pass, rubric: Polite.}\n"
    )
    probes = (
        "  - {type: llm_judge, id: helpful, rubric: The answer is good and states the window.}\n"
    )
    harness.write(
        "canary.yaml", judge + suite_text("support", harness.llm.url, PROMPTS, probes=probes)
    )
    # The judge and the model share the fake server: judge requests carry our judge's system
    # message, and the first rule that matches answers.
    harness.llm.script(
        None, system=JUDGE_SYSTEM_MARK, content=lambda r: policy.reply(r["last_user"])
    )
    harness.llm.script(
        "refund window",
        content="A good answer: refunds within 30 days.",
        drifted={"content": "Refunds depend on the product."},
    )


def judge_requests(harness: ActionHarness) -> int:
    return len([r for r in harness.llm.requests if JUDGE_SYSTEM_MARK in r["system"]])


def test_a_judged_regression_shows_the_judges_reason_and_the_judges_cost(
    harness: ActionHarness,
) -> None:
    judged_suite(harness, JudgePolicy(fingerprint="fp_fake"))
    created = harness.run_push({**INPUTS, "update-baseline": "always"})
    assert created.returncode == 0, created.log
    assert judge_requests(harness) == 3  # one answer, two canary votes
    harness.llm.drift = True

    result = harness.run_pr(INPUTS)

    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == "1"
    body = str(harness.github.comments(PR_NUMBER)[0].body)
    assert "helpful" in body and "does not meet the rubric" in body
    assert "Answer services" in body and JUDGE_MODEL in body
    assert "does not meet the rubric" in result.summary and "Answer services" in result.summary
    (annotation,) = harness.check_run().annotations
    assert "does not meet the rubric" in annotation["message"]
    run = json.loads(
        next((harness.workspace / "promptcanary-report").rglob("run.json")).read_text()
    )
    (usage,) = run["services"]
    assert usage["service"] == "judge" and usage["requests"] == 1  # the canaries were cached
    assert usage["cost_usd"] is not None and usage["cost_usd"] > 0
    assert run["provenance"]["judge"]["checks"][0]["verdicts"] == ["pass", "pass"]

    before = judge_requests(harness)
    again = harness.run_pr(INPUTS)
    assert again.returncode == 1, again.log
    assert judge_requests(harness) == before  # every verdict came from the report folder


def test_a_judge_its_canaries_catch_is_a_changed_judge_not_a_regression(
    harness: ActionHarness,
) -> None:
    policy = JudgePolicy()
    judged_suite(harness, policy)
    created = harness.run_push({**INPUTS, "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True
    # The fake server stamps every answer "fp_fake"; a judge whose canaries now all fail is the
    # change the canaries catch.
    policy.decide = lambda answer: False
    (harness.workspace / "promptcanary-report" / "judge-cache.json").unlink()

    result = harness.run_pr({**INPUTS, "update-baseline": "always"})

    assert result.returncode == 0, result.log
    assert result.outputs["regressions"] == "0" and result.outputs["inconclusive"] == "1"
    body = str(harness.github.comments(PR_NUMBER)[0].body)
    assert "the judge changed" in body
