"""Latency, tokens and cost of a run, their change against the baseline, and the usage gates."""

from __future__ import annotations

import statistics

import pytest

from promptcanary.core.models import CanaryRunResult, LLMResponse, ProviderConfig
from promptcanary.core.verdict.usage import (
    CostLookup,
    UsageLimits,
    UsageStats,
    compare_usage,
    format_metric,
    format_usd,
    usage_findings,
)

MODEL = "openai/gpt-4o-mini"
PRICE = {"in": 2e-6, "out": 8e-6}


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """A cost lookup that knows one model."""
    if model != MODEL:
        return None
    return prompt_tokens * PRICE["in"] + completion_tokens * PRICE["out"]


def response(prompt: str, *, latency: float, prompt_tokens: int, completion: int, sample: int = 0,
             error: str | None = None) -> LLMResponse:  # fmt: skip
    return LLMResponse(
        prompt_id=prompt,
        provider_model_id=MODEL,
        content="x",
        latency_ms=latency,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion,
        sample=sample,
        error=error,
    )


def run(responses: list[LLMResponse], model: str = MODEL) -> CanaryRunResult:
    return CanaryRunResult(
        suite_name="s", provider=ProviderConfig(model_id=model), llm_responses=responses
    )


def measured(run: CanaryRunResult, cost: CostLookup | None = None) -> UsageStats:
    """The run's own usage, as the evaluation measures it (no baseline to compare with)."""
    return compare_usage(None, run, cost).current


def simple_run(
    latencies: list[float], completions: list[int], *, samples: int = 1, scale: float = 1.0
) -> CanaryRunResult:
    """One prompt per latency/completion pair, ``samples`` answers each (small spread)."""
    return run(
        [
            response(
                f"p{i}",
                latency=latency * scale + s,
                prompt_tokens=50,
                completion=round(completion * scale) + s,
                sample=s,
            )
            for i, (latency, completion) in enumerate(zip(latencies, completions, strict=True))
            for s in range(samples)
        ]
    )


def test_measure_takes_latency_quantiles_over_answers_and_tokens_per_answer() -> None:
    latencies = [100.0, 200.0, 300.0, 400.0, 1000.0]
    usage = measured(simple_run(latencies, [10, 20, 30, 40, 50]), price)

    cuts = statistics.quantiles(latencies, n=20, method="inclusive")
    assert usage.answers == 5
    assert usage.latency_p50_ms == pytest.approx(300.0)
    assert usage.latency_p95_ms == pytest.approx(cuts[18])
    assert usage.prompt_tokens == pytest.approx(50.0)
    assert usage.completion_tokens == pytest.approx(30.0)
    assert usage.cost_usd == pytest.approx(5 * 50 * PRICE["in"] + 150 * PRICE["out"])
    assert usage.cost_per_answer == pytest.approx(usage.cost_usd / 5)


def test_each_prompt_weighs_the_same_whatever_its_number_of_samples() -> None:
    # Adaptive sampling gives one prompt nine answers: the per-answer figure must not follow it.
    answers = [response("long", latency=1, prompt_tokens=1, completion=100)]
    answers += [
        response("short", latency=1, prompt_tokens=1, completion=10, sample=s) for s in range(9)
    ]

    assert measured(run(answers)).completion_tokens == pytest.approx(55.0)


def test_errored_answers_are_not_measured_and_missing_values_show_as_unknown() -> None:
    answers = [
        response("p1", latency=100, prompt_tokens=5, completion=5),
        response("p2", latency=9999, prompt_tokens=5, completion=5, error="timeout"),
        LLMResponse(prompt_id="p3", provider_model_id=MODEL, content="no usage recorded"),
    ]
    usage = measured(run(answers), price)

    assert usage.latency_p95_ms is None and usage.completion_tokens is None
    assert usage.cost_usd is None
    assert format_metric("latency_p95_ms", usage.latency_p95_ms) == "—"


def test_unknown_model_has_no_cost_never_a_guess() -> None:
    usage = measured(simple_run([100], [10]).model_copy(
        update={"provider": ProviderConfig(model_id="acme/unknown")}), price)  # fmt: skip

    assert usage.cost_usd is None and usage.cost_per_answer is None
    assert format_usd(usage.cost_usd) == "—"
    assert measured(simple_run([100], [10])).cost_usd is None  # no lookup given


def test_doubled_answers_show_a_doubled_token_count_and_trip_the_token_gate() -> None:
    baseline = simple_run([100, 120, 140], [40, 60, 80])
    current = simple_run([100, 120, 140], [80, 120, 160])

    usage = compare_usage(baseline, current, price)
    findings, notes = usage_findings(usage, UsageLimits(tokens_pct=50))

    change = usage.changes["completion_tokens"]
    assert change.change_pct == pytest.approx(100.0)
    assert change.interval_pct is None  # one sample a prompt: no interval
    assert [f.gate for f in findings] == ["max-token-increase"] and notes == []
    assert "+100.0%" in findings[0].message and "max-token-increase 50%" in findings[0].message
    assert usage_findings(usage, UsageLimits(tokens_pct=150)) == ([], [])
    assert usage_findings(usage, UsageLimits()) == ([], [])


def test_latency_change_is_the_p95_change() -> None:
    usage = compare_usage(simple_run([100] * 5, [10] * 5), simple_run([350] * 5, [10] * 5))

    assert usage.changes["latency_p95_ms"].change_pct == pytest.approx(250.0)
    (finding,), _ = usage_findings(usage, UsageLimits(latency_pct=100))
    assert finding.gate == "max-latency-increase"
    assert "100 ms → 350 ms" in finding.message


def test_with_several_samples_the_change_carries_an_interval() -> None:
    baseline = simple_run([100, 200], [40, 60], samples=5)
    current = simple_run([100, 200], [40, 60], samples=5, scale=3.0)

    usage = compare_usage(baseline, current)

    interval = usage.changes["completion_tokens"].interval_pct
    point = usage.changes["completion_tokens"].change_pct
    assert interval is not None and point is not None
    assert interval[0] <= point <= interval[1] and interval[0] > 0


def test_an_increase_within_sampling_noise_does_not_trip_a_gate() -> None:
    # Latencies that swing widely within each prompt: a 30% higher p95 is not evidence.
    wild = [50.0, 400.0, 90.0, 1200.0, 70.0]

    def sampled(factor: float) -> CanaryRunResult:
        return run(
            [
                response(f"p{p}", latency=v * factor, prompt_tokens=5, completion=5, sample=s)
                for p in range(2)
                for s, v in enumerate(wild)
            ]
        )

    usage = compare_usage(sampled(1.0), sampled(1.3))
    change = usage.changes["latency_p95_ms"]

    assert change.change_pct == pytest.approx(30.0)
    assert change.interval_pct is not None and change.interval_pct[0] <= 0
    assert usage_findings(usage, UsageLimits(latency_pct=10)) == ([], [])


def test_a_gate_that_cannot_be_checked_says_why() -> None:
    usage = compare_usage(simple_run([100], [10]), simple_run([100], [10]))  # no prices

    findings, notes = usage_findings(usage, UsageLimits(cost_pct=10))

    assert findings == []
    assert len(notes) == 1 and "max-cost-increase" in notes[0] and "cost map" in notes[0]


def test_without_a_baseline_there_is_nothing_to_gate() -> None:
    usage = compare_usage(None, simple_run([100], [10]), price)

    assert usage.baseline is None and usage.changes == {}
    assert usage.current.completion_tokens == 10
    assert usage_findings(usage, UsageLimits(latency_pct=0, tokens_pct=0, cost_pct=0)) == ([], [])


def test_formats() -> None:
    assert format_metric("latency_p95_ms", 950.4) == "950 ms"
    assert format_metric("latency_p95_ms", 2500.0) == "2.50 s"
    assert format_metric("completion_tokens", 1234.4) == "1,234"
    assert format_metric("prompt_tokens", 12.25) == "12.2"
    assert format_usd(12.345) == "$12.35"
    assert format_usd(0.01234) == "$0.0123"
    assert format_usd(0.0000012) == "$1.2e-06"
