"""The action's step: settings, then activity, pipeline, outcome, reports, publishing.

``action()`` runs one step for the inputs and ``GITHUB_*`` variables it is given, with the I/O
objects of an :class:`~promptcanary_action.effects.Effects` (fakes in tests), and is the one
place our own errors become an error annotation and an exit code: 0 gate passed, 1 gate failed,
2 configuration or usage error, 3 untrustworthy run, 4 cancelled
(:class:`promptcanary_action.outcome.ExitCode`). ``main()``, the entry point, reads the process
environment and has :func:`promptcanary_action.effects.real_effects` build the real objects.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from promptcanary.core.config.schema import SuiteConfigError, load_suite
from promptcanary.core.models import Approval, CanaryRunResult
from promptcanary.core.probes.plugins import ProbeModuleError, import_probe_modules
from promptcanary.core.run.judge import CACHE_FILE as JUDGE_CACHE_FILE
from promptcanary.core.run.judge import JudgeCache
from promptcanary.core.run.pacing import Pacing
from promptcanary.core.run.provider import MissingCredentialsError
from promptcanary.providers.errors import ModelConfigError
from promptcanary.providers.factory import REPLAY_PREFIX, build_providers
from promptcanary.providers.replay import ReplayFileError
from promptcanary.storage.base import BaselineFileError
from promptcanary_action import publish
from promptcanary_action.activity import Activity, PostComment, decide
from promptcanary_action.approval.lookup import ApprovalLookup, find_approval
from promptcanary_action.baselines.base import BaselineBackend
from promptcanary_action.context import EventContext
from promptcanary_action.effects import Effects, real_effects
from promptcanary_action.errors import ReportWriteError, UsageError
from promptcanary_action.github.port import GitHubPort
from promptcanary_action.legs import JudgeMergedRun, judge_legs, leg_activity, read_legs
from promptcanary_action.outcome import ExitCode, PairOutcome, StepOutcome, build_outcome
from promptcanary_action.paths import workspace_relative
from promptcanary_action.pipeline import (
    LoadedSuite,
    PairJudging,
    find_suite_files,
    judge_run,
    models_for,
    run_pair,
)
from promptcanary_action.rejudge import rejudge, reusable_outcome
from promptcanary_action.render import comment_marker, render_comment, render_summary
from promptcanary_action.report_dir import set_outputs, write_reports
from promptcanary_action.settings import InputError, Settings
from promptcanary_action.workflow import Workflow


@dataclass(frozen=True)
class _Step:
    """What one run-mode step knows once it has decided what to do."""

    settings: Settings
    ctx: EventContext
    activity: Activity
    github: GitHubPort | None
    base_dir: Path
    """The working directory: suite globs, ``baseline-path`` and ``report-dir`` are under it."""

    @property
    def report_dir(self) -> Path:
        return self.base_dir / self.settings.report_dir


def load_suites(settings: Settings, base_dir: Path) -> list[LoadedSuite]:
    workspace = settings.github.workspace or base_dir
    suites: list[LoadedSuite] = []
    names: dict[str, Path] = {}
    for path in find_suite_files(settings.config, base_dir):
        suite = load_suite(path)
        if suite.name in names:
            # Baselines and report folders are keyed by suite name: two would overwrite each other.
            raise UsageError(
                f"{path}: suite name {suite.name!r} is also used by {names[suite.name]}; "
                "give each suite file its own `name:`"
            )
        names[suite.name] = path
        suites.append(LoadedSuite(suite, path, workspace_relative(path, workspace)))
    return suites


def _needs_litellm(suites: list[LoadedSuite], settings: Settings) -> bool:
    models = settings.models or [m.model for s in suites for m in s.suite.models]
    return any(not m.startswith(REPLAY_PREFIX) for m in models)


def action(environ: Mapping[str, str], effects: Effects) -> int:
    """Run the step for the inputs and ``GITHUB_*`` variables in ``environ``; the exit code.

    Our own errors become an error annotation and exit 2 (or 3 for missing credentials) here;
    anything else is a bug and propagates.
    """
    try:
        return _step(Settings.from_environ(environ), effects)
    except _OUR_ERRORS as exc:
        title, code = next((t, c) for kinds, t, c in _ERROR_TITLES if isinstance(exc, kinds))
        effects.workflow.error(str(exc), title=f"PromptCanary: {title}")
        return code


#: Our own errors: the annotation's title and the exit code of each kind.
_ERROR_TITLES: tuple[tuple[tuple[type[Exception], ...], str, ExitCode], ...] = (
    (
        (InputError, SuiteConfigError, ProbeModuleError, UsageError, publish.PostCommentError),
        "configuration error",
        ExitCode.USAGE,
    ),
    ((ReportWriteError,), "cannot write the report folder", ExitCode.USAGE),
    ((ReplayFileError,), "unreadable recording", ExitCode.USAGE),
    ((ModelConfigError,), "unknown model", ExitCode.USAGE),
    ((BaselineFileError,), "unreadable baseline", ExitCode.USAGE),
    ((MissingCredentialsError,), "missing credentials", ExitCode.UNTRUSTWORTHY),
)
_OUR_ERRORS = tuple(kind for kinds, _, _ in _ERROR_TITLES for kind in kinds)


def _step(settings: Settings, effects: Effects) -> int:
    """Decide what this event asks for, and do it: the one place activities are dispatched."""
    ctx = EventContext.from_env(settings.github)
    base_dir = (settings.github.workspace or Path.cwd()) / settings.working_directory
    github = effects.github(settings)
    activity = decide(ctx, settings)
    if isinstance(activity, PostComment):
        report_dir = base_dir / settings.report_dir
        return publish.post_comment_file(settings, activity, github, effects.workflow, report_dir)
    if settings.shard is not None:
        if settings.mode == "merge":
            raise UsageError(
                "input 'shard' is for the matrix legs; the merge job (mode: merge) takes no shard"
            )
        activity = leg_activity(activity, settings.shard)
    return _run(_Step(settings, ctx, activity, github, base_dir), effects)


def _run(step: _Step, effects: Effects) -> int:
    settings, workflow = step.settings, effects.workflow
    for note in (*step.ctx.warnings, *step.activity.notes):
        workflow.notice(note)
    import_probe_modules(
        settings.probe_modules, base_dir=step.base_dir, label="input 'probe-modules'"
    )
    suites = load_suites(settings, step.base_dir)
    if effects.prewarm is not None and settings.mode == "run" and _needs_litellm(suites, settings):
        effects.prewarm()  # overlap LiteLLM's slow import with baseline loading

    check_run = publish.start_check_run(settings, step.activity, step.ctx, step.github, workflow)
    try:
        return _run_and_report(step, suites, check_run, _approvals(step, effects), effects)
    except Exception as exc:
        # Whatever stops the step (a missing key, a usage error, a bug), action() or main()
        # reports it; the check run must not stay "in progress" on the pull request.
        publish.abandon_check_run(
            check_run, str(exc), ctx=step.ctx, github=step.github, workflow=workflow
        )
        raise


def _approvals(step: _Step, effects: Effects) -> ApprovalLookup:
    """The approval in force (a labelled pull request's, or the merged one's on a push)."""
    marker = comment_marker(step.settings.comment_id)
    label = step.settings.approve_label or ""
    found = find_approval(step.github, step.ctx, label=label, marker=marker, now=effects.now())
    for warning in found.warnings:
        effects.workflow.warning(warning, title="PromptCanary: approvals")
    return found


def _pairs(
    step: _Step, suites: list[LoadedSuite], approval: Approval | None, effects: Effects
) -> list[PairOutcome]:
    """Every pair's results: re-judged from the previous step when only the label changed."""
    previous = reusable_outcome(step.report_dir, step.ctx, step.settings.approve_label)
    if previous is not None:
        effects.workflow.notice(
            "Only the approval label changed: the results of this commit's previous run are "
            "judged again under it; no model is called.",
            title="PromptCanary",
        )
        return [rejudge(p, step.settings, step.activity, approval) for p in previous.pairs]
    backend = effects.backend(step.settings, step.github, step.base_dir)
    return asyncio.run(_run_all(step, suites, backend, approval, effects))


def _run_and_report(
    step: _Step,
    suites: list[LoadedSuite],
    check_run: int | None,
    approvals: ApprovalLookup,
    effects: Effects,
) -> int:
    """Run every pair, write the reports and outputs, publish; returns the exit code."""
    settings, ctx, workflow = step.settings, step.ctx, effects.workflow
    if settings.mode == "merge":
        # Read before anything is written: the merged reports go to the same folder.
        backend = effects.backend(settings, step.github, step.base_dir)
        judge = _merged_run_judge(step, backend, approvals.approval, effects)
        pairs = judge_legs(read_legs(step.report_dir), suites, judge)
    else:
        pairs = _pairs(step, suites, approvals.approval, effects)
    outcome = build_outcome(
        pairs,
        settings,
        warnings=[*ctx.warnings, *step.activity.notes, *approvals.warnings],
        event_name=ctx.event_name,
        pr_number=ctx.pr_number,
        sha=ctx.commit_sha,
        run_url=settings.github.run_url,
        report_files=[settings.report_dir],
        cancelled=effects.cancellation.reason,
        shard=str(settings.shard) if settings.shard else None,
        approve_label=settings.approve_label if ctx.is_pull_request else None,
        approval=approvals.approval,
    )
    # Results first, to disk and outputs; only then the network, which may fail.
    comment = _write_results(outcome, step, workflow)
    publish.publish(
        outcome,
        settings=settings,
        activity=step.activity,
        ctx=ctx,
        github=step.github,
        workflow=workflow,
        comment=comment,
        check_run=check_run,
    )
    for failure in outcome.failures:
        workflow.error(failure.message, title=failure.title)
    return outcome.exit_code


def _judging(
    step: _Step, backend: BaselineBackend, approval: Approval | None, effects: Effects
) -> PairJudging:
    return PairJudging(
        step.settings, step.activity, step.ctx.commit_sha, backend, effects.now, approval
    )


def _merged_run_judge(
    step: _Step, backend: BaselineBackend, approval: Approval | None, effects: Effects
) -> JudgeMergedRun:
    """``mode: merge``: a merged run judged exactly as this step judges a run of its own."""

    def judge(loaded: LoadedSuite, model_id: str, run: CanaryRunResult) -> PairOutcome:
        return judge_run(loaded, model_id, run, _judging(step, backend, approval, effects))

    return judge


async def _run_all(
    step: _Step,
    suites: list[LoadedSuite],
    backend: BaselineBackend,
    approval: Approval | None,
    effects: Effects,
) -> list[PairOutcome]:
    pairs: list[PairOutcome] = []
    # Verdicts judged in earlier runs of this pull request (the workflow keeps the folder).
    cache_file = step.report_dir / JUDGE_CACHE_FILE
    cache = JudgeCache.load(cache_file)
    plan = [(loaded, spec) for loaded in suites for spec in models_for(loaded, step.settings)]
    # Every model is checked (known, key set, recording readable) before the first request.
    providers = build_providers([(s, loaded.path.parent) for loaded, s in plan], effects.provider)
    pacing = Pacing()  # one limiter per provider, key and endpoint, for every pair of the step
    services = {id(loaded): effects.services(loaded.suite) for loaded in suites}
    for (loaded, spec), provider in zip(plan, providers, strict=True):
        if effects.cancellation.requested:
            return pairs  # no new pair after a cancel: the report says the run stopped
        with effects.workflow.group(f"PromptCanary: {loaded.repo_path} on {spec.model}"):
            pairs.append(
                await run_pair(
                    loaded,
                    spec,
                    _judging(step, backend, approval, effects),
                    ref=step.activity.baseline_ref,
                    provider_factory=lambda *_, built=provider: built,
                    cancellation=effects.cancellation,
                    pacing=pacing,
                    judge_providers=effects.provider,
                    judge_cache=cache,
                    services=services[id(loaded)],
                )
            )
        _save_judge_cache(cache, cache_file, effects.workflow)
    return pairs


def _save_judge_cache(cache: JudgeCache, path: Path, workflow: Workflow) -> None:
    """Keep the verdicts for the next run of the pull request; failing to is only a lost saving."""
    if not cache.entries:
        return
    try:
        cache.save(path)
    except OSError as exc:
        workflow.warning(f"The judge's verdict cache {path} was not written: {exc}")


def _write_results(outcome: StepOutcome, step: _Step, workflow: Workflow) -> str:
    """The report folder, the outputs, the job summary and the log; returns the comment."""
    comment = render_comment(outcome, comment_marker(step.settings.comment_id))
    summary = render_summary(outcome)
    workflow.add_summary(summary)  # first: the results survive a report folder that fails
    files = write_reports(outcome, step.report_dir, comment, summary)
    set_outputs(workflow, outcome, files, workspace=step.settings.github.workspace)
    _log_outcome(outcome, workflow)
    return comment


def _log_outcome(outcome: StepOutcome, workflow: Workflow) -> None:
    workflow.notice(outcome.verdict, title="PromptCanary")
    if outcome.untrustworthy:
        # The verdict counts errored answers; the log must also say why they errored. The
        # provider's text is untrusted: the workflow command escapes it.
        causes = "; ".join(f"{count}× {cause[:300]}" for cause, count in outcome.error_causes())
        workflow.warning(f"Errored answers, by cause: {causes}", title="PromptCanary: errors")
    for pair in outcome.pairs:
        # Notes too (baseline not saved, not updated, stale): a push has no comment to show them.
        for warning in [*pair.notes, *(pair.drift.warnings if pair.drift else [])]:
            workflow.warning(warning, title=f"{pair.suite_name} on {pair.model}")


def main(
    environ: Mapping[str, str] | None = None, stdout: TextIO | None = None
) -> int:  # pragma: no cover - exercised by the end-to-end tests through entrypoint.py
    """Build the real objects from the process environment and run the step."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    effects, warm_up = real_effects(env, stdout or sys.stdout)
    try:
        return action(env, effects)
    finally:
        warm_up.join()
