"""evaluate() and decide(): re-scoring, comparison, gate, promotion and notes decided in one place."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from textwrap import dedent

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProviderConfig,
)
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.evaluate import (
    PROMOTION_RULES,
    Evaluation,
    EvaluationPolicy,
    Promotion,
    PromotionRule,
    decide,
    evaluate,
)
from promptcanary.core.verdict.usage import UsageLimits

SUITE = """
name: demo
probes:
  - type: keyword_presence
    id: kw
    required_keywords: [ok]
prompts:
  - id: p1
    text: first
  - id: p2
    text: second
"""
GOOD = {"p1": "ok", "p2": "ok too"}
NOW = datetime(2024, 6, 1, tzinfo=UTC)


class Scripted(BaseLLMProvider):
    """Answers from a dict; ``None`` stands for a failed call (an errored response)."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        super().__init__(ProviderConfig(model_id="m"))
        self.answers = answers

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        answer = self.answers[prompt.id]
        if answer is None:
            raise RuntimeError("down")
        return LLMResponse(prompt_id=prompt.id, provider_model_id="m", content=answer)


def suite(text: str = SUITE) -> CanarySuite:
    return suite_from_text(dedent(text), suite_class=CanarySuite)


def run(s: CanarySuite, answers: dict[str, str | None] | None = None) -> CanaryRunResult:
    return s.run(Scripted(answers or dict(GOOD)), show_progress=False, max_retries=0, samples=1)


def baseline(s: CanarySuite, *, days_old: int = 1) -> BaselineSnapshot:
    snap = BaselineSnapshot.of_run(run(s))
    return snap.model_copy(update={"created_at": NOW - timedelta(days=days_old, hours=1)})


def test_of_run_keys_the_snapshot_by_the_runs_suite_and_provider() -> None:
    r = run(suite())
    snap = BaselineSnapshot.of_run(r, note="n")
    assert (snap.suite_name, snap.provider, snap.run_result, snap.note) == (
        r.suite_name,
        r.provider,
        r,
        "n",
    )


def test_without_a_baseline_nothing_is_compared_and_the_rule_decides() -> None:
    s = suite()
    result = evaluate(None, run(s), s, EvaluationPolicy(promotion="if_clean"))
    assert result.drift is None and result.baseline is None
    assert result.promotion == Promotion(True, "")
    assert result.gate_failed is False and result.untrustworthy is False
    assert result.notes == ()


def test_regressions_fail_the_gate_and_block_promotion_with_a_note() -> None:
    s = suite()
    result = evaluate(
        baseline(s), run(s, {"p1": "no", "p2": "ok"}), s, EvaluationPolicy(promotion="if_clean")
    )
    assert result.drift is not None
    assert [(c.prompt_id, c.probe_key) for c in result.drift.regressions] == [("p1", "kw")]
    assert result.gate_failed is True
    assert result.promotion == Promotion(False, "the run has regressions")
    assert result.notes == ("The baseline was not updated: the run has regressions.",)


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("always", "1 of 2 responses errored, above max-error-rate 0.2"),
        ("if_clean", "1 response errored"),
    ],
)
def test_an_untrustworthy_run_is_never_promoted(rule: PromotionRule, reason: str) -> None:
    s = suite()
    current = run(s, {"p1": "ok", "p2": None})
    result = evaluate(None, current, s, EvaluationPolicy(promotion=rule))
    assert result.untrustworthy is True
    assert result.promotion == Promotion(False, reason)
    assert result.notes == (f"The baseline was not updated: {reason}.",)


def test_never_refuses_promotion_without_a_note() -> None:
    s = suite()
    result = evaluate(baseline(s), run(s), s, EvaluationPolicy(promotion="never"))
    assert result.promotion.allowed is False
    assert result.notes == ()


@pytest.mark.parametrize("rule", ["always", "if_clean", "never"])
def test_an_incomplete_run_is_never_promoted_and_says_so_whatever_the_rule(
    rule: PromotionRule,
) -> None:
    s = suite()
    stopped = run(s).model_copy(update={"incomplete": "the job was cancelled"})
    result = evaluate(baseline(s), stopped, s, EvaluationPolicy(promotion=rule))
    assert result.promotion.allowed is False
    assert result.notes[-1] == "Not promoted: the run is incomplete (the job was cancelled)."
    complete = evaluate(baseline(s), run(s), s, EvaluationPolicy(promotion=rule))
    assert complete.notes == ()  # a complete run has nothing to say here


def test_a_run_that_may_not_create_the_first_baseline_is_not_promoted_without_a_note() -> None:
    # The caller explains why (an event that may not create one, an unreadable baseline).
    s = suite()
    held = EvaluationPolicy(promotion="always", may_create_baseline=False)
    result = evaluate(None, run(s), s, held)
    assert result.promotion.allowed is False and result.notes == ()
    # A baseline that exists is updated: the flag is about the first one only.
    assert evaluate(baseline(s), run(s), s, held).promotion == Promotion(True, "")


def test_decide_on_stored_results_decides_as_evaluate_did() -> None:
    s = suite()
    fresh = evaluate(baseline(s), run(s, {"p1": "no", "p2": "ok"}), s, EvaluationPolicy())
    again = decide(fresh.run, fresh.drift, EvaluationPolicy(), usage=fresh.usage)
    assert (again.gate_failed, again.untrustworthy, again.promotion) == (
        fresh.gate_failed,
        fresh.untrustworthy,
        fresh.promotion,
    )
    assert again.unapproved_regressions == fresh.unapproved_regressions != []
    assert again.drift is fresh.drift and again.usage is fresh.usage  # nothing measured again


def test_changed_probes_rescore_the_baseline() -> None:
    old = suite(SUITE.replace("required_keywords: [ok]", "required_keywords: [first]"))
    new = suite()
    result = evaluate(baseline(old), run(new), new, EvaluationPolicy())
    assert result.rescored_baseline == 2
    assert result.drift is not None and result.drift.rescored_responses == 2
    assert result.drift.regressions == [] and result.drift.improvements == []
    assert result.baseline is not None
    assert result.baseline.run_result.provenance.probe_config_hash == new.probe_config_hash


def test_a_current_run_scored_with_other_probes_is_rescored_with_the_suites() -> None:
    old = suite(SUITE.replace("required_keywords: [ok]", "required_keywords: [first]"))
    new = suite()
    result = evaluate(baseline(new), run(old), new, EvaluationPolicy())
    assert result.rescored_current is True
    assert result.run.provenance.probe_config_hash == new.probe_config_hash
    assert result.drift is not None and result.drift.regressions == []


def test_without_a_suite_differing_probes_are_only_flagged() -> None:
    old = suite(SUITE.replace("required_keywords: [ok]", "required_keywords: [first]"))
    result = evaluate(baseline(old), run(suite()), None, EvaluationPolicy())
    assert result.probes_differ is True
    assert result.rescored_baseline == 0 and result.rescored_current is False


@pytest.mark.parametrize(
    ("days", "limit", "stale"), [(40, 30, True), (30, 30, False), (99, 0, False)]
)
def test_a_stale_baseline_gets_a_note_only_when_dated(days: int, limit: int, stale: bool) -> None:
    s = suite()
    policy = EvaluationPolicy(baseline_max_age_days=limit)
    dated = evaluate(baseline(s, days_old=days), run(s), s, policy, now=NOW)
    assert bool(dated.notes) is stale
    undated = evaluate(baseline(s, days_old=days), run(s), s, policy)
    assert undated.notes == ()


def test_a_baseline_of_another_suite_is_refused() -> None:
    other = suite(SUITE.replace("name: demo", "name: other"))
    with pytest.raises(ValueError, match="Suite name mismatch"):
        evaluate(baseline(other), run(suite()), None, EvaluationPolicy())


def test_update_baseline_values_map_to_rules() -> None:
    assert PROMOTION_RULES == {"auto": "if_clean", "always": "always", "never": "never"}


# -- usage gates -----------------------------------------------------------------------------------
def with_tokens(r: CanaryRunResult, completion: int) -> CanaryRunResult:
    answers = [
        a.model_copy(update={"prompt_tokens": 20, "completion_tokens": completion})
        for a in r.llm_responses
    ]
    return r.model_copy(update={"llm_responses": answers})


def usage_case(policy: EvaluationPolicy, completion: int = 200) -> Evaluation:
    s = suite()
    before = BaselineSnapshot.of_run(with_tokens(run(s), 100))
    return evaluate(before, with_tokens(run(s), completion), s, policy)


def test_a_usage_gate_fails_the_step_as_its_own_finding_and_blocks_promotion() -> None:
    result = usage_case(
        EvaluationPolicy(promotion="if_clean", usage_limits=UsageLimits(tokens_pct=50))
    )

    assert result.drift is not None and result.drift.regressions == []  # not a probe regression
    assert [f.gate for f in result.usage_findings] == ["max-token-increase"]
    assert result.gate_failed is True
    assert result.promotion == Promotion(False, "the run exceeds max-token-increase")
    assert result.usage is not None
    assert result.usage.changes["completion_tokens"].change_pct == pytest.approx(100.0)


def test_usage_within_its_limit_or_without_a_limit_passes() -> None:
    within = usage_case(EvaluationPolicy(usage_limits=UsageLimits(tokens_pct=150)))
    off = usage_case(EvaluationPolicy())

    assert within.gate_failed is False and within.usage_findings == ()
    assert off.gate_failed is False and off.usage_findings == ()


def test_always_promotes_despite_a_usage_finding_and_never_fail_on_keeps_the_usage_gate() -> None:
    # The usage gates are opted into one by one: fail-on (about probe drift) does not turn them off.
    limits = UsageLimits(tokens_pct=50)
    result = usage_case(EvaluationPolicy(promotion="always", fail_on="never", usage_limits=limits))

    assert result.promotion.allowed is True
    assert result.gate_failed is True


def test_an_unknown_price_is_a_note_not_a_finding() -> None:
    result = usage_case(EvaluationPolicy(usage_limits=UsageLimits(cost_pct=10)))

    assert result.usage_findings == () and result.gate_failed is False
    assert any("max-cost-increase could not be checked" in n for n in result.notes)


def test_cost_comes_from_the_lookup_given() -> None:
    s = suite()
    before = BaselineSnapshot.of_run(with_tokens(run(s), 100))
    result = evaluate(
        before,
        with_tokens(run(s), 300),
        s,
        EvaluationPolicy(usage_limits=UsageLimits(cost_pct=100)),
        cost=lambda model, p, c: (p + 2 * c) * 1e-6 if model == "m" else None,
    )

    assert result.usage is not None
    assert result.usage.current.cost_usd == pytest.approx(2 * (20 + 600) * 1e-6)
    assert [f.gate for f in result.usage_findings] == ["max-cost-increase"]


def test_a_first_auto_run_says_what_building_the_baseline_cost() -> None:
    from promptcanary.core.verdict.evaluate import EvaluationPolicy, evaluate
    from tests.unit.core.run.test_stages import STEADY, SUITE, Answers

    run = SUITE.run(Answers(STEADY, varied=True), show_progress=False, top_up=True)
    evaluation = evaluate(None, run, SUITE, EvaluationPolicy(promotion="if_clean"))
    assert evaluation.promotion.allowed
    (note,) = [n for n in evaluation.notes if "built the baseline" in n]
    per_prompt = len(run.llm_responses) / len(run.prompt_ids)
    assert f"{per_prompt:.1f} answers per prompt" in note
    fixed = SUITE.run(Answers(STEADY, varied=True), show_progress=False, samples=2)
    assert not any(
        "built the baseline" in n
        for n in evaluate(None, fixed, SUITE, EvaluationPolicy(promotion="if_clean")).notes
    )
