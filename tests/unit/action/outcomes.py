"""Runs, pair outcomes and activities with known figures, for the action's unit tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from promptcanary.core.models import (
    Approval,
    CanaryRunResult,
    DriftReport,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
)
from promptcanary_action.activity import Activity
from promptcanary_action.outcome import PairOutcome
from promptcanary_action.rejudge import rejudge
from promptcanary_action.settings import Settings

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

_PUSH = Activity(
    compare=True,
    comment=False,
    check_run=True,
    baseline_ref="main",
    may_create_baseline=True,
    promotion="if_clean",
    issue_on_drift=False,
    is_pull_request=False,
)
_PULL_REQUEST = replace(
    _PUSH, comment=True, may_create_baseline=False, promotion="never", is_pull_request=True
)


def push_activity(**overrides: Any) -> Activity:
    """A push to the default branch under update-baseline: auto (``overrides`` replace fields)."""
    return replace(_PUSH, **overrides)


def pr_activity(**overrides: Any) -> Activity:
    """A pull request with a known number: compares with main, comments, never promotes."""
    return replace(_PULL_REQUEST, **overrides)


def drift_of(
    run: CanaryRunResult,
    comparisons: list[ProbeComparison],
    *,
    snapshot_id: str = "snap",
    baseline_created_at: datetime = datetime(2024, 1, 1, tzinfo=UTC),
    **fields: Any,
) -> DriftReport:
    """The drift report of ``run`` against a baseline snapshot (``fields``: the report's other
    fields)."""
    return DriftReport(
        suite_name=run.suite_name,
        provider=run.provider,
        baseline_snapshot_id=snapshot_id,
        baseline_created_at=baseline_created_at,
        current_run_id=run.run_id,
        comparisons=comparisons,
        **fields,
    )


def run_result(*, errors: int = 0, failed: int = 0, passed: int = 1) -> CanaryRunResult:
    responses = [
        LLMResponse(prompt_id=f"e{i}", provider_model_id="m", error="boom") for i in range(errors)
    ] + [
        LLMResponse(prompt_id=f"p{i}", provider_model_id="m", content="x")
        for i in range(passed + failed)
    ]
    results = [
        ProbeResult(probe_id="t", prompt_id=f"p{i}", passed=i < passed, score=float(i < passed))
        for i in range(passed + failed)
    ]
    return CanaryRunResult(
        suite_name="demo",
        provider=ProviderConfig(model_id="m"),
        llm_responses=responses,
        probe_results=results,
    )


def judged(
    pair: PairOutcome, settings: Settings | None = None, approval: Approval | None = None
) -> PairOutcome:
    """``pair`` as the engine judges its run and drift under ``settings`` (``fail-on``,
    ``max-error-rate``; the defaults when None) and ``approval``: the decisions a step combines."""
    return rejudge(pair, settings or Settings(), _PUSH, approval)


def drifted_pair(drop: float, *, n: int = 10, failed: int = 0, errors: int = 0) -> PairOutcome:
    """A pair with one result dropping by ``drop`` among ``n`` comparisons, judged under the
    default settings (re-judge it with :func:`judged` under others)."""
    comparisons = [
        ProbeComparison(
            probe_id="t",
            prompt_id=f"p{i}",
            baseline_score=1.0,
            current_score=1.0 - (drop if i == 0 else 0.0),
            score_delta=-(drop if i == 0 else 0.0),
            baseline_passed=True,
            current_passed=not (i == 0 and drop > 0),
            regression=i == 0 and drop > 0,
        )
        for i in range(n)
    ]
    # A regressed result is also a failed probe of the run, as in a real run.
    run = run_result(errors=errors, failed=failed + (1 if drop > 0 else 0))
    drift = drift_of(run, comparisons, snapshot_id="s", baseline_created_at=NOW)
    return judged(
        PairOutcome(suite_name="demo", suite_file="c.yaml", model="m", run=run, drift=drift)
    )
