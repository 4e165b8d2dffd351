"""The judge-changed rule, decided once in decide(): canaries beyond the tolerance, another judge
model or fingerprint make the judged comparisons inconclusive and stop the promotion; the same
judge lets a judged regression through as one."""

from __future__ import annotations

import asyncio
import random

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult
from promptcanary.core.run.judge import JudgeService
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.verdict.evaluate import EvaluationPolicy, evaluate
from tests.fakes.judge_server import JudgeFactory, JudgePolicy, JudgeProvider
from tests.fakes.provider_fake import FakeProvider
from tests.fakes.sleeps import AsyncSleeps

SUITE_TEXT = """
name: judged
judge: {model: fake/judge, check_votes: 3}
judge_checks:
  - {prompt: Greet, answer: a good greeting, expected: pass, rubric: Polite.}
  - {prompt: Greet, answer: go away, expected: fail, rubric: Polite.}
probes:
  - {type: llm_judge, rubric: The answer is good., id: judged}
  - {type: keyword_presence, required_keywords: [answer], id: kw}
prompts:
  - {id: a, text: Question A}
"""
SUITE = suite_from_text(SUITE_TEXT)
POLICY = EvaluationPolicy(promotion="if_clean")


def run(answer: str, judge: JudgeProvider) -> CanaryRunResult:
    return asyncio.run(
        run_suite(
            SUITE,
            FakeProvider("fake/model", {"a": answer}),
            RunOptions(samples=1),
            sleep=AsyncSleeps(),
            rng=random.Random(0),
            services=[JudgeService(JudgeFactory(judge))],
        )
    )


BASELINE = BaselineSnapshot.of_run(run("a good answer", JudgeProvider()))


def test_the_same_judge_reports_a_judged_regression_as_one() -> None:
    evaluation = evaluate(BASELINE, run("a poor answer", JudgeProvider()), SUITE, POLICY)
    assert evaluation.judge_changed is None
    assert [c.probe_key for c in evaluation.unapproved_regressions] == ["judged"]
    assert evaluation.gate_failed and not evaluation.promotion.allowed


def test_a_new_fingerprint_makes_judged_comparisons_inconclusive_and_promotes_nothing() -> None:
    judge = JudgeProvider(policy=JudgePolicy(fingerprint="fp_judge_2"))
    evaluation = evaluate(BASELINE, run("a poor answer", judge), SUITE, POLICY)
    assert evaluation.judge_changed is not None and "fp_judge_2" in evaluation.judge_changed
    assert evaluation.drift is not None
    judged = [c for c in evaluation.drift.comparisons if c.probe_key == "judged"]
    assert [c.verdict for c in judged] == ["inconclusive"] and not judged[0].regression
    assert not evaluation.gate_failed
    assert not evaluation.promotion.allowed and "judge changed" in evaluation.promotion.reason
    assert any("the judge changed" in n for n in evaluation.notes)


def test_another_judge_model_is_a_changed_judge() -> None:
    evaluation = evaluate(
        BASELINE, run("a good answer", JudgeProvider("fake/judge-2")), SUITE, POLICY
    )
    assert evaluation.judge_changed is not None and "fake/judge-2" in evaluation.judge_changed


def test_canaries_beyond_the_tolerance_change_the_judge_but_not_other_probes() -> None:
    # A judge that now fails every answer: the passing canary disagrees on all its votes.
    judge = JudgeProvider(policy=JudgePolicy(decide=lambda answer: False))
    current = run("a poor reply", judge)  # no "answer": the keyword probe regresses too
    info = current.provenance.judge
    assert info is not None and (info.disagreements, info.votes) == (3, 6)
    evaluation = evaluate(BASELINE, current, SUITE, EvaluationPolicy(promotion="if_clean"))
    assert evaluation.judge_changed is not None and "3 of 3" in evaluation.judge_changed
    assert [c.probe_key for c in evaluation.unapproved_regressions] == ["kw"]


def test_a_judge_within_the_tolerance_is_the_same_judge() -> None:
    flips = iter([True, True, False, True, False, False])  # one passing-canary vote flipped
    judge = JudgeProvider(
        policy=JudgePolicy(decide=lambda answer: "good" in answer and next(flips, True))
    )
    evaluation = evaluate(BASELINE, run("a good answer", judge), SUITE, POLICY)
    info = evaluation.run.provenance.judge
    assert info is not None and 0 < info.disagreements / info.votes <= info.tolerance
    assert evaluation.judge_changed is None and evaluation.promotion.allowed


def test_editing_another_probe_keeps_the_baselines_judged_results() -> None:
    # Re-scoring asks no judge: the stored verdicts stand, so the judged comparison survives.
    edited = suite_from_text(
        SUITE_TEXT.replace("required_keywords: [answer]", "required_keywords: [answer, a]")
    )
    assert edited.probe_config_hash != SUITE.probe_config_hash
    evaluation = evaluate(BASELINE, run("a poor answer", JudgeProvider()), edited, POLICY)
    assert evaluation.rescored_baseline == 1
    assert evaluation.drift is not None and not evaluation.drift.errored
    assert [c.probe_key for c in evaluation.unapproved_regressions] == ["judged"]
