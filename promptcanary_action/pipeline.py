"""Run every (suite, model) pair, have the engine judge it, and save what it promotes.

I/O arrives as parameters (provider factory, baseline backend, clock). The engine's
:func:`~promptcanary.core.verdict.evaluate.evaluate` decides the gate and the promotion; this
module feeds it the baseline, saves the run when the evaluation promotes it, and keeps the
decisions in the :class:`PairOutcome`. Publishing to GitHub happens later, in :mod:`publish`.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from promptcanary.core.messages import conversation_tail
from promptcanary.core.models import (
    Approval,
    BaselineSnapshot,
    CanaryRunResult,
    DriftSeverity,
    ProbeComparison,
    ResultRef,
)
from promptcanary.core.run.answer_phase import AnswerService
from promptcanary.core.run.judge import JudgeCache, judge_services
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.pacing import Pacing
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.runner import run_suite
from promptcanary.core.spec import ModelSpec, SuiteSpec, requested_models
from promptcanary.core.verdict.evaluate import Evaluation, EvaluationPolicy, evaluate
from promptcanary.core.verdict.usage import CostLookup, UsageLimits
from promptcanary.providers.litellm import cost_usd
from promptcanary.storage.base import BaselineFileError
from promptcanary_action.activity import Activity
from promptcanary_action.baselines.base import BaselineBackend as Backend
from promptcanary_action.baselines.base import BaselineStoreError, BaselineUnreachableError
from promptcanary_action.cancel import Cancellation
from promptcanary_action.errors import UsageError
from promptcanary_action.links import dataset_rows
from promptcanary_action.outcome import BaselineStatus, PairOutcome
from promptcanary_action.settings import Settings

ProviderFactory = Callable[[str, dict[str, Any], Path], BaseLLMProvider]
ServiceFactory = Callable[[SuiteSpec], list[AnswerService]]
"""The answer services a suite needs (its embedding model), checked before any request."""


@dataclass(frozen=True)
class LoadedSuite:
    suite: SuiteSpec
    path: Path
    repo_path: str
    """The path relative to the repository root, as check-run annotations need it."""


def find_suite_files(patterns: Sequence[str], base_dir: Path) -> list[Path]:
    """Expand ``config`` entries (paths or globs relative to ``base_dir``), in order, once each."""
    if not base_dir.is_dir():
        raise UsageError(
            f"input 'working-directory': directory {base_dir} not found; "
            "set it to a folder of the repository, relative to its root"
        )
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, root_dir=base_dir, recursive=True))
        if not matches:
            hint = "no file matches this glob" if glob.has_magic(pattern) else "file not found"
            raise UsageError(
                f"input 'config': {pattern}: {hint} (relative to 'working-directory', {base_dir})"
            )
        files = [(base_dir / m).resolve() for m in matches]
        # A glob like `canaries/**` also matches folders: skip them, but not all of them.
        files = [path for path in files if not path.is_dir()]
        if not files:
            raise UsageError(
                f"input 'config': {pattern}: matches only folders, no suite file (relative to "
                f"'working-directory', {base_dir}); name the files, e.g. `canaries/**/*.yaml`"
            )
        found.extend(path for path in files if path not in found)
    return found


def models_for(suite: LoadedSuite, settings: Settings) -> list[ModelSpec]:
    if settings.models:
        return requested_models(settings.models, suite.suite.models)
    if suite.suite.models:
        return list(suite.suite.models)
    raise UsageError(
        f"{suite.path}: no model to run: add `models:` to the suite or set the action's "
        "`models` input (e.g. `openai/gpt-4o-mini`, or `replay:recordings/run.jsonl` offline)"
    )


def policy_for(
    settings: Settings,
    activity: Activity,
    approval: Approval | None = None,
    *,
    baseline_unreadable: bool = False,
) -> EvaluationPolicy:
    """The evaluation policy of this step: the inputs' thresholds, the event's promotion rule,
    and the reviewer's approval in force (None: every regression counts). A baseline that
    exists but cannot be read is not an absent one: the run may not take its place."""
    return EvaluationPolicy(
        fail_on=settings.fail_on,
        regression_threshold=settings.regression_threshold,
        improvement_threshold=settings.improvement_threshold,
        alpha=settings.alpha,
        promotion=activity.promotion,
        max_error_rate=settings.max_error_rate,
        baseline_max_age_days=settings.baseline_max_age_days,
        usage_limits=UsageLimits(
            latency_pct=settings.max_latency_increase,
            tokens_pct=settings.max_token_increase,
            cost_pct=settings.max_cost_increase,
        ),
        approval=approval,
        fail_on_model_change=settings.fail_on_model_change,
        may_create_baseline=activity.may_create_baseline and not baseline_unreadable,
    )


def _refs(comparisons: Iterable[ProbeComparison]) -> list[ResultRef]:
    return [ResultRef(prompt_id=c.prompt_id, probe_key=c.probe_key) for c in comparisons]


def verdict_fields(evaluation: Evaluation) -> dict[str, Any]:
    """What ``evaluation`` decided about one pair, as :class:`PairOutcome` keeps it: the step
    combines these and decides nothing again."""
    gated = evaluation.gated_drift
    return {
        "gate_failed": evaluation.gate_failed,
        "untrustworthy": evaluation.untrustworthy,
        "unapproved": _refs(evaluation.unapproved_regressions),
        "gated_severity": gated.severity if gated is not None else DriftSeverity.NONE,
        "usage_findings": list(evaluation.usage_findings),
        "approved": _refs(evaluation.approved),
        "approval": evaluation.approval,
        "served_change": evaluation.served_change,
    }


def run_options(settings: Settings, *, sha: str, ref: str, may_promote: bool = False) -> RunOptions:
    """The inputs that shape a run; unset ones leave the suite's ``defaults:`` in force.

    ``may_promote``: the event may make the run the baseline, so a pool too small to show a
    drop is topped up (``baseline-samples``)."""
    return settings.run_options(git_sha=sha or None, git_ref=ref or None, top_up=may_promote)


@dataclass(frozen=True)
class _FoundBaseline:
    baseline: BaselineSnapshot | None = None
    error: str | None = None
    unreachable: bool = False
    """The store could not be reached: whether a baseline exists is unknown."""


def _load_baseline(backend: Backend, suite: str, model: str, activity: Activity) -> _FoundBaseline:
    if not activity.compare:
        return _FoundBaseline()
    try:
        return _FoundBaseline(backend.load(suite, model, for_ref=activity.baseline_ref))
    except BaselineFileError as exc:
        # Run anyway: the results are reported and written; the step still exits 2.
        return _FoundBaseline(error=str(exc))
    except BaselineUnreachableError as exc:
        # Neither a broken baseline nor a first run: reported, never promoted, exit 3.
        return _FoundBaseline(error=str(exc), unreachable=True)


def _history(
    backend: Backend, suite: str, model: str, activity: Activity, keep: int
) -> list[dict[str, Any]]:
    """The pair's newest promoted baselines, read before this run may add itself to them.

    History only draws the trend: a store that cannot give it means no chart, never a failure.
    """
    if not activity.compare:
        return []
    try:
        return backend.history(suite, model)[-keep:]
    except (BaselineFileError, BaselineStoreError, OSError):
        return []


def _save_if_promoted(
    evaluation: Evaluation, backend: Backend, baseline_ref: str, sha: str, pool_size: int
) -> tuple[BaselineStatus, str | None, str | None]:
    """Save the run as the baseline when the evaluation promotes it: (status, location, note)."""
    had_baseline = evaluation.baseline is not None
    status = BaselineStatus.FOUND if had_baseline else BaselineStatus.MISSING
    if not evaluation.promotion.allowed:
        return status, None, None
    drift = evaluation.drift
    try:
        location = backend.save(
            evaluation.snapshot(pool_size),
            sha=sha,
            ref=baseline_ref,
            regressions=len(drift.regressions) if drift else 0,
        )
    except BaselineStoreError as exc:
        # The run is still reported; only the promotion is lost, and the user is told why.
        return status, None, f"The baseline could not be saved: {exc}"
    return (BaselineStatus.UPDATED if had_baseline else BaselineStatus.CREATED), location, None


@dataclass(frozen=True)
class PairJudging:
    """What every pair of a step is judged with: the inputs, what the step does, its commit,
    the baseline store, the clock, the approval in force and how answers are priced."""

    settings: Settings
    activity: Activity
    sha: str
    backend: Backend
    now: Callable[[], datetime]
    approval: Approval | None = None
    cost: CostLookup | None = cost_usd


async def run_pair(
    loaded: LoadedSuite,
    spec: ModelSpec,
    judging: PairJudging,
    *,
    ref: str,
    provider_factory: ProviderFactory,
    cancellation: Cancellation | None = None,
    pacing: Pacing | None = None,
    judge_providers: ProviderFactory | None = None,
    judge_cache: JudgeCache | None = None,
    services: Sequence[AnswerService] = (),
) -> PairOutcome:
    """Run one suite on one model (this leg's shard of it, when set), then judge the run.

    Once ``cancellation`` is requested no more requests are sent and nothing is promoted: the
    run is kept with what it has, marked ``incomplete`` with the reason. ``judging.cost``
    prices answers for the cost figures and the ``max-cost-increase`` gate (by default from
    LiteLLM's bundled cost map: local and deterministic, so not an I/O parameter).
    An LLM judge the suite names is built with ``judge_providers`` (none: its probes' results
    are errored) and answers from ``judge_cache`` what it judged before.
    """
    provider = provider_factory(spec.model, dict(spec.params), loaded.path.parent)
    # Baselines are keyed by the model that answered: a replay of a recording made with
    # openai/gpt-4o-mini compares with (and may become) that model's baseline.
    model_id = provider.config.model_id
    found = _load_baseline(judging.backend, loaded.suite.name, model_id, judging.activity)
    stop = cancellation.stop_event() if cancellation is not None else None
    may_promote = judging.activity.promotion != "never"
    options = run_options(judging.settings, sha=judging.sha, ref=ref, may_promote=may_promote)
    # samples: auto decides against the baseline (and its pool) while it samples.
    answer_services: list[AnswerService] = [*services]  # embeddings, then the judge
    if judge_providers is not None:
        folder = loaded.path.parent
        answer_services += judge_services(
            loaded.suite,
            lambda model, params: judge_providers(model, params, folder),
            baseline=found.baseline,
            cache=judge_cache,
            max_requests=judging.settings.max_judge_requests,
            cost=judging.cost,
        )
    run = await run_suite(
        loaded.suite,
        provider,
        options,
        baseline=found.baseline,
        stop=stop,
        services=answer_services,
        pacing=pacing,
    )
    if cancellation is not None and cancellation.reason is not None:
        run = run.model_copy(update={"incomplete": cancellation.reason})
    return judge_run(loaded, model_id, run, judging, found=found)


def judge_run(
    loaded: LoadedSuite,
    model_id: str,
    run: CanaryRunResult,
    judging: PairJudging,
    *,
    found: _FoundBaseline | None = None,
) -> PairOutcome:
    """Evaluate a run of one suite on one model against its baseline; save it if promoted.

    The run is this step's own (its baseline already ``found``), or one merged from a matrix
    job's legs (``mode: merge``).
    """
    suite = loaded.suite
    settings, activity, backend = judging.settings, judging.activity, judging.backend
    if found is None:
        found = _load_baseline(backend, suite.name, model_id, activity)
    history = _history(backend, suite.name, model_id, activity, settings.trend_points)
    policy = policy_for(
        settings, activity, judging.approval, baseline_unreadable=found.error is not None
    )
    evaluation = evaluate(found.baseline, run, suite, policy, now=judging.now(), cost=judging.cost)
    status, location, save_note = _save_if_promoted(
        evaluation, backend, activity.baseline_ref, judging.sha, settings.baseline_pool
    )
    if found.unreachable:
        status = BaselineStatus.UNREACHABLE
    baseline = evaluation.baseline
    return PairOutcome(
        suite_name=suite.name,
        suite_file=loaded.repo_path,
        model=model_id,
        run=evaluation.run,
        drift=evaluation.drift,
        baseline_run=baseline.run_result if baseline is not None else None,
        baseline_status=status,
        baseline_location=location,
        baseline_error=found.error,
        baseline_unreachable=found.unreachable,
        notes=[*evaluation.notes, *([save_note] if save_note else [])],
        prompt_lines=dict(suite.prompt_lines),
        probe_lines=suite.probe_lines,
        prompt_rows=dataset_rows(loaded.repo_path, suite.prompt_rows),
        conversations={p.id: conversation_tail(p.messages) for p in suite.prompts if p.messages},
        prompt_tags={p.id: list(p.tags) for p in suite.prompts if p.tags},
        usage=evaluation.usage,
        history=history,
        **verdict_fields(evaluation),
    )
