"""The action's entry point: build the real objects, run the step, map failures to exit codes.

``main()`` is the only place that reads the process environment and builds real I/O objects
(GitHub client, baseline backend, providers); ``action()`` receives them, so tests can run the
whole step against local servers. Exit codes (DESIGN §4): 0 gate passed, 1 gate failed,
2 configuration or usage error, 3 untrustworthy run.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from promptcanary.core.config import SuiteConfigError, load_suite
from promptcanary.core.plugins import ProbeModuleError, import_probe_modules
from promptcanary.providers.base import BaseLLMProvider, MissingCredentialsError
from promptcanary.providers.factory import REPLAY_PREFIX, make_provider
from promptcanary.providers.replay import ReplayFileError
from promptcanary.storage.base import BaselineFileError
from promptcanary_action import publish
from promptcanary_action.activity import Activity, decide
from promptcanary_action.context import EventContext
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.pipeline import (
    Backend,
    LoadedSuite,
    ProviderFactory,
    UsageError,
    build_outcome,
    find_suite_files,
    models_for,
    repo_relative,
    run_pair,
)
from promptcanary_action.render import comment_marker, render_comment, render_summary
from promptcanary_action.report_dir import set_outputs, write_reports
from promptcanary_action.settings import InputError, Settings
from promptcanary_action.workflow import Workflow

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_UNTRUSTED = 0, 1, 2, 3


def _provider_factory(model: str, params: dict[str, Any], base_dir: Path) -> BaseLLMProvider:
    return make_provider(model, params, base_dir=base_dir)


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
        suites.append(LoadedSuite(suite, path, repo_relative(path, workspace)))
    return suites


def _needs_litellm(suites: list[LoadedSuite], settings: Settings) -> bool:
    models = settings.models or [m.model for s in suites for m in s.suite.models]
    return any(not m.startswith(REPLAY_PREFIX) for m in models)


async def _run_all(
    suites: list[LoadedSuite],
    settings: Settings,
    activity: Activity,
    ctx: EventContext,
    provider_factory: ProviderFactory,
    backend: Backend,
    now: Callable[[], datetime],
    workflow: Workflow,
) -> list[PairOutcome]:
    pairs: list[PairOutcome] = []
    for loaded in suites:
        for spec in models_for(loaded, settings):
            with workflow.group(f"PromptCanary: {loaded.repo_path} on {spec.model}"):
                pairs.append(
                    await run_pair(
                        loaded,
                        spec,
                        settings=settings,
                        activity=activity,
                        sha=ctx.head_sha or ctx.sha,
                        ref=activity.baseline_ref,
                        provider_factory=provider_factory,
                        backend=backend,
                        now=now,
                    )
                )
    return pairs


def action(
    settings: Settings,
    *,
    workflow: Workflow,
    github: publish.GitHubPort | None,
    backend_factory: Callable[[Settings, publish.GitHubPort | None, Path], Backend],
    provider_factory: ProviderFactory = _provider_factory,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    prewarm: Callable[[], object] | None = None,
) -> int:
    """Run the step with the given I/O objects; returns the exit code."""
    ctx = EventContext.from_env(settings.github)
    base_dir = (settings.github.workspace or Path.cwd()) / settings.working_directory
    report_dir = base_dir / settings.report_dir
    if settings.mode == "post-comment":
        return publish.post_comment_file(settings, ctx, github, workflow, report_dir)

    activity = decide(ctx, settings)
    for note in (*ctx.warnings, *activity.notes):
        workflow.notice(note)
    import_probe_modules(settings.probe_modules, base_dir=base_dir, label="input 'probe-modules'")
    suites = load_suites(settings, base_dir)
    if prewarm is not None and _needs_litellm(suites, settings):
        prewarm()  # overlap LiteLLM's slow import with baseline loading

    check_run = publish.start_check_run(settings, activity, ctx, github, workflow)
    try:
        return _run_and_report(
            settings,
            activity,
            ctx,
            suites,
            base_dir,
            report_dir,
            github=github,
            workflow=workflow,
            check_run=check_run,
            backend_factory=backend_factory,
            provider_factory=provider_factory,
            now=now,
        )
    except Exception as exc:
        # Whatever stops the step (a missing key, a usage error, a bug), main() reports it; the
        # check run must not stay "in progress" on the pull request. Re-raised unchanged.
        publish.abandon_check_run(check_run, str(exc), ctx=ctx, github=github, workflow=workflow)
        raise


def _run_and_report(
    settings: Settings,
    activity: Activity,
    ctx: EventContext,
    suites: list[LoadedSuite],
    base_dir: Path,
    report_dir: Path,
    *,
    github: publish.GitHubPort | None,
    workflow: Workflow,
    check_run: int | None,
    backend_factory: Callable[[Settings, publish.GitHubPort | None, Path], Backend],
    provider_factory: ProviderFactory,
    now: Callable[[], datetime],
) -> int:
    """Run every pair, write the reports and outputs, publish; returns the exit code."""
    backend = backend_factory(settings, github, base_dir)
    pairs = asyncio.run(
        _run_all(suites, settings, activity, ctx, provider_factory, backend, now, workflow)
    )
    outcome = build_outcome(
        pairs,
        settings,
        warnings=[*ctx.warnings, *activity.notes],
        event_name=ctx.event_name,
        pr_number=ctx.pr_number,
        sha=ctx.head_sha or ctx.sha,
        run_url=settings.github.run_url,
        report_files=[settings.report_dir],
    )

    # Results first, to disk and outputs; only then the network, which may fail.
    marker = comment_marker(settings.comment_id)
    comment = render_comment(outcome, marker)
    summary = render_summary(outcome)
    files = write_reports(outcome, report_dir, comment, summary)
    set_outputs(workflow, outcome, files, workspace=settings.github.workspace)
    workflow.add_summary(summary)
    _log_outcome(outcome, workflow)

    publish.publish(
        outcome,
        settings=settings,
        activity=activity,
        ctx=ctx,
        github=github,
        workflow=workflow,
        comment=comment,
        marker=marker,
        check_run=check_run,
    )
    if outcome.untrustworthy:
        workflow.error(outcome.verdict)
        return EXIT_UNTRUSTED
    broken = [p.baseline_error for p in outcome.pairs if p.baseline_error]
    for problem in broken:
        workflow.error(problem, title="PromptCanary: unreadable baseline")
    if broken:
        return EXIT_USAGE
    return EXIT_GATE if outcome.gate_failed else EXIT_OK


def _log_outcome(outcome: StepOutcome, workflow: Workflow) -> None:
    workflow.notice(outcome.verdict, title="PromptCanary")
    for pair in outcome.pairs:
        # Notes too (baseline not saved, not updated, stale): a push has no comment to show them.
        for warning in [*pair.notes, *(pair.drift.warnings if pair.drift else [])]:
            workflow.warning(warning, title=f"{pair.suite_name} on {pair.model}")


def main(
    environ: Mapping[str, str] | None = None, stdout: TextIO | None = None
) -> int:  # pragma: no cover - exercised by the end-to-end tests through entrypoint.py
    """Build the real objects from the environment and run; the one top-level error handler."""
    env = dict(os.environ if environ is None else environ)
    out = stdout or sys.stdout
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    github_out = env.get("GITHUB_OUTPUT")
    summary_out = env.get("GITHUB_STEP_SUMMARY")
    workflow = Workflow(
        out, Path(github_out) if github_out else None, Path(summary_out) if summary_out else None
    )
    warming: list[threading.Thread] = []
    try:
        settings = Settings.from_environ(env)
        from promptcanary.providers.litellm import prewarm
        from promptcanary_action.baselines.base import make_backend

        github = publish.make_github(settings)
        return action(
            settings,
            workflow=workflow,
            github=github,
            backend_factory=make_backend,
            prewarm=lambda: warming.append(prewarm()),
        )
    except (
        InputError,
        SuiteConfigError,
        ProbeModuleError,
        UsageError,
        publish.PostCommentError,
    ) as exc:
        workflow.error(str(exc), title="PromptCanary: configuration error")
        return EXIT_USAGE
    except ReplayFileError as exc:
        workflow.error(str(exc), title="PromptCanary: unreadable recording")
        return EXIT_USAGE
    except BaselineFileError as exc:
        workflow.error(str(exc), title="PromptCanary: unreadable baseline")
        return EXIT_USAGE
    except MissingCredentialsError as exc:
        workflow.error(str(exc), title="PromptCanary: missing credentials")
        return EXIT_UNTRUSTED
    finally:
        # The warming thread is a daemon: stopped mid-import at interpreter exit, it keeps that
        # module's import lock, and LiteLLM's finalizers (which import) then hang the process.
        for thread in warming:
            thread.join()
