"""The served-model finding: an id or fingerprint the baseline never saw, decided in decide()."""

from __future__ import annotations

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.verdict.evaluate import EvaluationPolicy, decide
from promptcanary.core.verdict.served import served_change

MODEL = "openai/gpt-4o"


def run_of(
    *served: str | None, fingerprint: str | None = "fp_1", errored: int = 0
) -> CanaryRunResult:
    responses = [
        LLMResponse(
            prompt_id=f"p{i}",
            provider_model_id=MODEL,
            content="ok",
            served_model=s,
            system_fingerprint=fingerprint,
        )
        for i, s in enumerate(served)
    ]
    responses += [
        LLMResponse(prompt_id=f"e{i}", provider_model_id=MODEL, error="HTTP 500", served_model="x")
        for i in range(errored)
    ]
    results = [
        ProbeResult(probe_id="kw", prompt_id=r.prompt_id, passed=True, score=1.0, probe_key="kw")
        for r in responses
        if not r.errored
    ]
    return CanaryRunResult(
        suite_name="demo",
        provider=ProviderConfig(model_id=MODEL),
        llm_responses=responses,
        probe_results=results,
    )


def test_another_served_id_is_a_finding_that_names_both() -> None:
    change = served_change(run_of("gpt-4o-2024-08-06"), run_of("gpt-4o-2024-11-20"))
    assert change is not None
    assert change.message == (
        "openai/gpt-4o answered as gpt-4o-2024-11-20; the baseline as gpt-4o-2024-08-06"
    )
    assert change.new_ids == ["gpt-4o-2024-11-20"]


def test_the_same_id_or_nothing_to_compare_is_no_finding() -> None:
    assert served_change(run_of("a", "a"), run_of("a")) is None
    assert served_change(None, run_of("a")) is None
    assert served_change(run_of(None, fingerprint=None), run_of("a")) is None  # baseline named none
    assert served_change(run_of("a"), run_of(None, fingerprint=None)) is None
    # Errored answers name nothing that counts.
    assert served_change(run_of("a"), run_of("a", errored=2)) is None


def test_a_routers_mixture_is_reported_only_when_a_new_id_appears() -> None:
    mixture = run_of("east", "west", "east")
    assert served_change(mixture, run_of("west")) is None  # part of the mixture
    assert served_change(mixture, run_of("east", "west")) is None
    change = served_change(mixture, run_of("east", "north"))
    assert change is not None and change.new_ids == ["north"]
    assert "east (1 of 2) and north (1 of 2)" in change.message
    assert "east (2 of 3) and west (1 of 3)" in change.message


def test_a_new_fingerprint_alone_is_a_finding() -> None:
    change = served_change(run_of("a", fingerprint="fp_1"), run_of("a", fingerprint="fp_2"))
    assert change is not None and change.new_ids == [] and change.new_fingerprints == ["fp_2"]
    assert change.message == (
        "openai/gpt-4o answered with system_fingerprint fp_2; the baseline with fp_1"
    )


def test_responses_stored_before_the_fields_read_them_from_raw_response() -> None:
    old = LLMResponse.model_validate(
        {
            "prompt_id": "p",
            "provider_model_id": MODEL,
            "raw_response": {"model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_old"},
        }
    )
    assert old.served_model == "gpt-4o-2024-08-06" and old.system_fingerprint == "fp_old"
    assert LLMResponse(prompt_id="p", provider_model_id=MODEL).served_model is None


def test_decide_reports_and_only_fails_with_fail_on_model_change() -> None:
    baseline = BaselineSnapshot.of_run(run_of("old"))
    run = run_of("new")
    reported = decide(run, None, EvaluationPolicy(promotion="if_clean"), baseline=baseline)
    assert reported.served_change is not None
    assert not reported.gate_failed and reported.promotion.allowed

    policy = EvaluationPolicy(promotion="if_clean", fail_on_model_change=True)
    failing = decide(run, None, policy, baseline=baseline)
    assert failing.gate_failed
    assert not failing.promotion.allowed
    assert "served model changed" in failing.promotion.reason

    same = decide(run_of("old"), None, policy, baseline=baseline)
    assert same.served_change is None and not same.gate_failed and same.promotion.allowed


def test_rejudging_compares_with_the_stored_baseline_run() -> None:
    policy = EvaluationPolicy(fail_on_model_change=True)
    evaluation = decide(run_of("new"), None, policy, baseline_run=run_of("old"))
    assert evaluation.served_change is not None and evaluation.gate_failed
