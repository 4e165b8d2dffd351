"""The data model: deterministic identities, frozen values, aggregates, computed report fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from promptcanary.core.models import (
    SCHEMA_VERSION,
    BaselineSnapshot,
    CanaryPrompt,
    CanaryRunResult,
    DriftReport,
    DriftSeverity,
    LLMResponse,
    ProbeCategory,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
    ToolCall,
)

PROVIDER = ProviderConfig(model_id="openai/gpt-4o-mini")
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


# ── prompts ──────────────────────────────────────────────────────────────────


class TestPromptIdentity:
    def test_default_id_is_deterministic(self) -> None:
        a = CanaryPrompt(text="What is 2+2?", system_prompt="Be brief.")
        b = CanaryPrompt(text="What is 2+2?", system_prompt="Be brief.")
        assert a.id and a.id == b.id

    def test_default_id_is_readable(self) -> None:
        assert CanaryPrompt(text="What is the capital of France?").id.startswith(
            "what-is-the-capital-of-france"
        )

    def test_system_prompt_changes_the_id(self) -> None:
        plain = CanaryPrompt(text="What is 2+2?")
        brief = CanaryPrompt(text="What is 2+2?", system_prompt="Be brief.")
        pirate = CanaryPrompt(text="What is 2+2?", system_prompt="Talk like a pirate.")
        assert len({plain.id, brief.id, pirate.id}) == 3

    def test_text_changes_the_id(self) -> None:
        assert CanaryPrompt(text="a b").id != CanaryPrompt(text="a  b").id

    def test_explicit_id_is_kept(self) -> None:
        assert CanaryPrompt(id="capital", text="What is the capital of France?").id == "capital"

    def test_id_survives_a_round_trip(self) -> None:
        prompt = CanaryPrompt(text="Hi", tags=["smoke"])
        assert CanaryPrompt.model_validate(prompt.model_dump(mode="json")) == prompt


@pytest.mark.parametrize(
    ("instance", "field", "value"),
    [
        (CanaryPrompt(text="x"), "text", "y"),
        (LLMResponse(prompt_id="p", provider_model_id="m"), "content", "changed"),
        (ToolCall(name="f"), "name", "g"),
        (ProbeResult(probe_id="x", prompt_id="p", passed=True, score=1.0), "score", 0.0),
        (PROVIDER, "model_id", "other"),
    ],
)
def test_frozen_models_reject_assignment(instance: Any, field: str, value: Any) -> None:
    with pytest.raises(ValidationError, match="frozen"):
        setattr(instance, field, value)


# ── probe results ────────────────────────────────────────────────────────────


def result(
    probe_id: str = "json_validity",
    *,
    score: float = 1.0,
    passed: bool | None = None,
    category: ProbeCategory = ProbeCategory.FORMAT,
    errored: bool = False,
    prompt_id: str = "p1",
) -> ProbeResult:
    return ProbeResult(
        probe_id=probe_id,
        prompt_id=prompt_id,
        category=category,
        passed=score >= 0.5 if passed is None else passed,
        score=score,
        errored=errored,
    )


def test_probe_key_defaults_to_probe_id() -> None:
    assert result("refusal").probe_key == "refusal"
    explicit = ProbeResult(
        probe_id="refusal", prompt_id="p", passed=True, score=1.0, probe_key="refusal-abc123"
    )
    assert explicit.probe_key == "refusal-abc123"


@pytest.mark.parametrize("score", [-0.01, 1.01])
def test_probe_result_score_is_bounded(score: float) -> None:
    with pytest.raises(ValidationError):
        ProbeResult(probe_id="x", prompt_id="p", passed=True, score=score)


# ── runs ─────────────────────────────────────────────────────────────────────


def response(
    prompt_id: str, *, tokens: tuple[int, int] | None = None, error: str | None = None
) -> LLMResponse:
    return LLMResponse(
        prompt_id=prompt_id,
        provider_model_id=PROVIDER.model_id,
        prompt_tokens=tokens[0] if tokens else None,
        completion_tokens=tokens[1] if tokens else None,
        total_tokens=sum(tokens) if tokens else None,
        error=error,
    )


class TestRunAggregates:
    def test_empty_run_has_no_score(self) -> None:
        run = CanaryRunResult(suite_name="s", provider=PROVIDER)
        assert (run.overall_score, run.pass_rate) == (None, None)
        assert run.failed_probes == [] and run.by_category == {}

    def test_scores_exclude_errored_results(self) -> None:
        run = CanaryRunResult(
            suite_name="s",
            provider=PROVIDER,
            probe_results=[
                result(score=1.0),
                result(score=0.25, passed=False),
                result(score=0.0, passed=False, errored=True),
            ],
        )
        assert run.overall_score == pytest.approx(0.625)
        assert run.pass_rate == pytest.approx(0.5)
        assert [r.score for r in run.failed_probes] == [0.25]
        assert [r.errored for r in run.errored_results] == [True]

    def test_all_errored_run_has_no_score_not_a_perfect_one(self) -> None:
        run = CanaryRunResult(
            suite_name="s", provider=PROVIDER, probe_results=[result(score=0.0, errored=True)]
        )
        assert (run.overall_score, run.pass_rate, run.scored) == (None, None, False)
        dumped = run.model_dump(mode="json")
        assert (dumped["overall_score"], dumped["pass_rate"]) == (None, None)

    def test_headline_figures_weigh_each_prompt_equally(self) -> None:
        # 2 of 5 prompts pass; the 3 failing ones were asked 4 times, the passing ones once:
        # a mean over answers would say 2/14.
        passing = [result(prompt_id=p, score=1.0) for p in ("a", "b")]
        failing = [result(prompt_id=p, score=0.0) for p in ("c", "d", "e") for _ in range(4)]
        run = CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=[*passing, *failing])
        assert run.pass_rate == pytest.approx(0.4)
        assert run.overall_score == pytest.approx(0.4)

    def test_an_old_run_document_with_stored_figures_still_loads(self) -> None:
        run = CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=[result()])
        old = run.model_dump(mode="json") | {"overall_score": 1.0, "pass_rate": 1.0}
        assert CanaryRunResult.model_validate(old).probe_results == run.probe_results

    def test_by_category(self) -> None:
        fmt, safety = result("json_validity"), result("refusal", category=ProbeCategory.SAFETY)
        run = CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=[fmt, safety, fmt])
        assert run.by_category == {ProbeCategory.FORMAT: [fmt, fmt], ProbeCategory.SAFETY: [safety]}

    def test_duration(self) -> None:
        unfinished = CanaryRunResult(suite_name="s", provider=PROVIDER, started_at=T0)
        finished = unfinished.model_copy(update={"finished_at": T0 + timedelta(seconds=2.5)})
        assert unfinished.duration_ms == 0.0
        assert finished.duration_ms == pytest.approx(2500.0)

    def test_token_usage_and_errors(self) -> None:
        run = CanaryRunResult(
            suite_name="s",
            provider=PROVIDER,
            llm_responses=[
                response("a", tokens=(10, 5)),
                response("b", tokens=(7, 3)),
                response("c", error="429 after 3 retries"),
                response("a", tokens=(1, 1)),
            ],
        )
        usage = run.token_usage
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (18, 9, 27)
        assert (run.error_count, run.error_rate) == (1, 0.25)
        assert run.prompt_ids == ["a", "b", "c"]
        assert len(run.responses_for("a")) == 2

    def test_computed_fields_are_dumped(self) -> None:
        run = CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=[result(score=0.5)])
        dumped = run.model_dump(mode="json")
        assert dumped["overall_score"] == 0.5
        assert dumped["token_usage"] == {
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "total_tokens": 0,
        }


# ── drift reports ────────────────────────────────────────────────────────────


def comparison(
    delta: float, *, regression: bool = False, improvement: bool = False, n: int = 0
) -> ProbeComparison:
    baseline = 1.0 if delta <= 0 else 0.0
    return ProbeComparison(
        probe_id="keyword_presence",
        prompt_id=f"p{n}",
        baseline_score=baseline,
        current_score=baseline + delta,
        score_delta=delta,
        baseline_passed=True,
        current_passed=delta >= 0,
        regression=regression,
        improvement=improvement,
    )


def report(regression_drops: list[float], total: int, improvements: int = 0) -> DriftReport:
    comparisons = [comparison(-d, regression=True, n=i) for i, d in enumerate(regression_drops)]
    comparisons += [comparison(1.0, improvement=True, n=100 + i) for i in range(improvements)]
    comparisons += [comparison(0.0, n=200 + i) for i in range(total - len(comparisons))]
    return DriftReport(
        suite_name="smoke",
        provider=PROVIDER,
        baseline_snapshot_id="snap-1",
        baseline_created_at=T0,
        current_run_id="run-2",
        comparisons=comparisons,
    )


@pytest.mark.parametrize(
    ("drops", "total", "severity"),
    [
        ([], 10, DriftSeverity.NONE),
        ([0.1], 100, DriftSeverity.LOW),  # 1 % regressed, drop 0.1
        ([0.1], 20, DriftSeverity.MEDIUM),  # 5 % regressed
        ([0.25], 100, DriftSeverity.MEDIUM),  # drop 0.25
        ([0.1], 10, DriftSeverity.HIGH),  # 10 % regressed
        ([0.5], 100, DriftSeverity.HIGH),  # drop 0.5
        ([0.1], 4, DriftSeverity.CRITICAL),  # 25 % regressed
        ([0.75], 100, DriftSeverity.CRITICAL),  # drop 0.75
    ],
)
def test_severity_rules(drops: list[float], total: int, severity: DriftSeverity) -> None:
    assert report(drops, total).severity is severity


def test_severity_order() -> None:
    assert DriftSeverity.HIGH.at_least(DriftSeverity.MEDIUM)
    assert DriftSeverity.HIGH.at_least(DriftSeverity.HIGH)
    assert not DriftSeverity.LOW.at_least(DriftSeverity.MEDIUM)
    assert [s.rank for s in DriftSeverity] == [0, 1, 2, 3, 4]


def test_report_aggregates_and_summary() -> None:
    drift = report([0.5], total=4, improvements=1)
    # baseline scores: 1, 0 (improvement), 1, 1 → 0.75; current: 0.5, 1, 1, 1 → 0.875.
    assert drift.baseline_score == pytest.approx(0.75)
    assert drift.current_score == pytest.approx(0.875)
    assert drift.score_delta == pytest.approx(0.125)
    assert drift.has_regressions
    assert [c.prompt_id for c in drift.regressions] == ["p0"]
    assert [c.prompt_id for c in drift.improvements] == ["p100"]
    assert drift.summary == (
        "smoke on openai/gpt-4o-mini: 1 regression, 1 improvement across 4 comparisons "
        "(score 0.750 → 0.875, severity critical)."
    )


def test_report_computed_fields_are_dumped_and_round_trip() -> None:
    drift = report([0.3, 0.2], total=50)
    dumped = drift.model_dump(mode="json")
    assert dumped["severity"] == "medium"
    assert dumped["has_regressions"] is True
    assert [c["prompt_id"] for c in dumped["regressions"]] == ["p0", "p1"]
    assert dumped["summary"].startswith(
        "smoke on openai/gpt-4o-mini: 2 regressions, 0 improvements"
    )
    again = DriftReport.model_validate(dumped)
    assert again == drift
    assert again.model_dump(mode="json") == dumped


def test_empty_report_has_no_drift() -> None:
    drift = report([], total=0)
    assert (drift.severity, drift.baseline_score, drift.has_regressions) == (
        DriftSeverity.NONE,
        1.0,
        False,
    )


# ── baselines ────────────────────────────────────────────────────────────────


def snapshot(**overrides: Any) -> BaselineSnapshot:
    run = CanaryRunResult(
        suite_name="smoke",
        provider=PROVIDER,
        probe_results=[result(score=0.75, passed=False)],
        llm_responses=[
            LLMResponse(
                prompt_id="p1",
                provider_model_id=PROVIDER.model_id,
                content='{"a": 1}',
                tool_calls=[
                    ToolCall(name="f", arguments={"x": [1, None]}, arguments_raw='{"x": [1, null]}')
                ],
                prompt_tokens=3,
            )
        ],
        started_at=T0,
        finished_at=T0 + timedelta(seconds=1),
    )
    fields: dict[str, Any] = {"suite_name": "smoke", "provider": PROVIDER, "run_result": run}
    return BaselineSnapshot(**{**fields, **overrides})


def test_snapshot_round_trips_through_json() -> None:
    snap = snapshot()
    dumped = snap.model_dump(mode="json")
    assert dumped["schema_version"] == SCHEMA_VERSION
    assert dumped["run_result"]["overall_score"] == 0.75
    assert dumped["run_result"]["duration_ms"] == 1000.0
    again = BaselineSnapshot.model_validate(dumped)
    assert again == snap
    assert again.run_result.llm_responses[0].tool_calls[0].arguments == {"x": [1, None]}
    assert BaselineSnapshot.model_validate_json(snap.model_dump_json()) == snap


def test_snapshot_from_a_newer_engine_is_refused_clearly() -> None:
    dumped = snapshot().model_dump(mode="json")
    dumped["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValidationError) as info:
        BaselineSnapshot.model_validate(dumped)
    message = str(info.value)
    assert f"schema_version {SCHEMA_VERSION + 1}" in message
    assert "upgrade" in message


def test_snapshot_of_the_current_version_is_accepted() -> None:
    assert snapshot(schema_version=SCHEMA_VERSION).schema_version == SCHEMA_VERSION


def test_bounded_response_keeps_the_first_characters_and_notes_the_length() -> None:
    whole = LLMResponse(prompt_id="p", provider_model_id="m", content="abcdefghij")
    assert whole.bounded(10) is whole
    cut = whole.bounded(4)
    assert (cut.content, cut.truncated_from) == ("abcd", 10)
    assert cut.bounded(2).truncated_from == 10  # cut again: still the original length
    assert whole.truncated_from is None
