"""The fail-on gate shared by the CLI and the action."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptcanary.core.models import (
    CanaryRunResult,
    DriftReport,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.verdict.gate import FAIL_ON, gate_failed, untrustworthy

PROVIDER = ProviderConfig(model_id="m")


def _run(*passed: bool) -> CanaryRunResult:
    results = [
        ProbeResult(probe_id="p", prompt_id=f"q{i}", passed=ok, score=1.0 if ok else 0.0)
        for i, ok in enumerate(passed)
    ]
    return CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=results)


def _report(drops: list[float], total: int = 20) -> DriftReport:
    rows = [
        ProbeComparison(
            probe_id="p",
            prompt_id=f"q{i}",
            baseline_score=1.0,
            current_score=1.0 - drop,
            score_delta=-drop,
            baseline_passed=True,
            current_passed=drop == 0,
            regression=drop > 0,
        )
        for i, drop in enumerate(drops + [0.0] * (total - len(drops)))
    ]
    return DriftReport(
        suite_name="s",
        provider=PROVIDER,
        baseline_snapshot_id="b",
        baseline_created_at=datetime(2026, 1, 1, tzinfo=UTC),
        current_run_id="r",
        comparisons=rows,
    )


@pytest.mark.parametrize(
    ("fail_on", "clean", "one_small_drop", "one_total_drop"),
    [
        ("never", False, False, False),
        ("regression", False, True, True),
        ("inconclusive", False, True, True),
        ("low", False, True, True),
        ("medium", False, False, True),  # a 0.1 drop in 1 of 40 rows is only low
        ("high", False, False, True),
        ("critical", False, False, True),
    ],
)
def test_gate_by_rule(
    fail_on: str, clean: bool, one_small_drop: bool, one_total_drop: bool
) -> None:
    run = _run(True)
    assert gate_failed(_report([]), run, fail_on) is clean
    assert gate_failed(_report([0.1], total=40), run, fail_on) is one_small_drop
    assert gate_failed(_report([1.0], total=40), run, fail_on) is one_total_drop


def test_failure_rule_looks_at_the_run_even_without_a_baseline() -> None:
    assert gate_failed(None, _run(True, False), "failure") is True
    assert gate_failed(None, _run(True, True), "failure") is False
    assert all(
        gate_failed(None, _run(False), rule) is False for rule in FAIL_ON if rule != "failure"
    )


def test_an_unknown_rule_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"sometimes.*regression, inconclusive, failure, never"):
        gate_failed(None, _run(True), "sometimes")


def test_inconclusive_comparisons_fail_only_under_fail_on_inconclusive() -> None:
    report = _report([])
    rows = [c.model_copy(update={"verdict": "same"}) for c in report.comparisons]
    rows[0] = rows[0].model_copy(update={"verdict": "inconclusive"})
    open_report = report.model_copy(update={"comparisons": rows})
    assert len(open_report.inconclusive) == 1
    assert gate_failed(open_report, _run(True), "inconclusive") is True
    assert gate_failed(open_report, _run(True), "regression") is False
    settled = report.model_copy(
        update={"comparisons": [c.model_copy(update={"verdict": "same"}) for c in rows[1:]]}
    )
    assert gate_failed(settled, _run(True), "inconclusive") is False


def test_a_run_is_untrustworthy_only_above_the_error_rate() -> None:
    run = _run(True).model_copy(
        update={
            "llm_responses": [
                LLMResponse(prompt_id="a", provider_model_id="m"),
                LLMResponse(prompt_id="b", provider_model_id="m", error="HTTP 500"),
            ]
        }
    )
    assert run.error_rate == 0.5
    assert untrustworthy(run, 0.4) is True
    assert untrustworthy(run, 0.5) is False  # at the limit is still trusted: "above" fails
