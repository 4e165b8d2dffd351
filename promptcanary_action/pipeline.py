"""Run every (suite, model) pair, compare it with its baseline, promote, and judge the gate.

I/O arrives as parameters (provider factory, baseline backend, clock); this module decides what
to do with their answers. Publishing to GitHub happens later, in :mod:`publish`.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptcanary.core.comparator import compare
from promptcanary.core.gate import untrustworthy
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult
from promptcanary.core.rescore import needs_rescore, rescore
from promptcanary.core.suite import CanarySuite, ModelSpec
from promptcanary.providers.base import BaseLLMProvider
from promptcanary.storage.base import BaselineFileError
from promptcanary_action.activity import Activity
from promptcanary_action.baselines.base import BaselineBackend as Backend
from promptcanary_action.baselines.base import BaselineStoreError
from promptcanary_action.errors import UsageError
from promptcanary_action.outcome import BaselineStatus, PairOutcome
from promptcanary_action.settings import Settings

ProviderFactory = Callable[[str, dict[str, Any], Path], BaseLLMProvider]


@dataclass(frozen=True)
class LoadedSuite:
    suite: CanarySuite
    path: Path
    repo_path: str
    """The path relative to the repository root, as check-run annotations need it."""


def find_suite_files(patterns: Sequence[str], base_dir: Path) -> list[Path]:
    """Expand ``config`` entries (paths or globs relative to ``base_dir``), in order, once each."""
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
        return [ModelSpec(model=m) for m in settings.models]
    if suite.suite.models:
        return list(suite.suite.models)
    raise UsageError(
        f"{suite.path}: no model to run: add `models:` to the suite or set the action's "
        "`models` input (e.g. `openai/gpt-4o-mini`, or `replay:recordings/run.jsonl` offline)"
    )


def promotion_allowed(policy: str, run: CanaryRunResult, has_regressions: bool) -> tuple[bool, str]:
    """Whether this run may become the baseline under ``policy``, and why not."""
    if policy == "always":
        return True, ""
    if policy == "never":
        return False, "update-baseline does not allow it for this event"
    if has_regressions:
        return False, "the run has regressions"
    if run.error_count:
        return False, f"{run.error_count} response(s) errored"
    return True, ""


def _age_note(snapshot: BaselineSnapshot, now: datetime, max_age_days: int) -> str | None:
    created = snapshot.created_at
    if created.tzinfo is None:  # hand-written or older documents: read a bare time as UTC
        created = created.replace(tzinfo=UTC)
    age = (now - created).days
    if max_age_days and age > max_age_days:
        return (
            f"The baseline is {age} days old (limit {max_age_days}): drift may have accumulated "
            "since; consider re-creating it."
        )
    return None


async def run_pair(
    loaded: LoadedSuite,
    spec: ModelSpec,
    *,
    settings: Settings,
    activity: Activity,
    sha: str,
    ref: str,
    provider_factory: ProviderFactory,
    backend: Backend,
    now: Callable[[], datetime],
) -> PairOutcome:
    """Run one suite on one model, compare with the baseline and promote per ``activity``."""
    suite = loaded.suite
    provider = provider_factory(spec.model, dict(spec.params), loaded.path.parent)
    # Baselines are keyed by the model that answered: a replay of a recording made with
    # openai/gpt-4o-mini compares with (and may become) that model's baseline.
    model_id = provider.config.model_id
    baseline: BaselineSnapshot | None = None
    baseline_error: str | None = None
    if activity.compare:
        try:
            baseline = backend.load(suite.name, model_id, for_ref=activity.baseline_ref)
        except BaselineFileError as exc:
            # Run anyway: the results are reported and written; the step still exits 2.
            baseline_error = str(exc)
    run = await suite.arun(
        provider,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        seed=settings.seed,
        samples=settings.samples if settings.samples != 1 else None,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        git_sha=sha or None,
        git_ref=ref or None,
    )
    notes: list[str] = []
    drift = None
    if baseline is not None:
        rescored = 0
        if needs_rescore(baseline, suite):
            # Probe edits must not read as model drift: score stored answers with today's probes.
            baseline, rescored = rescore(baseline, suite)
        drift = compare(
            baseline,
            run,
            regression_threshold=settings.regression_threshold,
            improvement_threshold=settings.improvement_threshold,
            alpha=settings.alpha,
        ).model_copy(update={"rescored_responses": rescored})
        age = _age_note(baseline, now(), settings.baseline_max_age_days)
        if age:
            notes.append(age)

    status = BaselineStatus.FOUND if baseline is not None else BaselineStatus.MISSING
    location: str | None = None
    allowed, why_not = promotion_allowed(
        activity.promotion, run, bool(drift and drift.has_regressions)
    )
    if allowed and untrustworthy(run, settings.max_error_rate):
        # Not even under `always`: the step exits 3, and an outage must not become the reference.
        allowed = False
        why_not = (
            f"{run.error_count} of {len(run.llm_responses)} responses errored, above "
            f"max-error-rate {settings.max_error_rate:g}"
        )
    may_write = baseline is not None or (activity.may_create_baseline and not baseline_error)
    if activity.compare and allowed and may_write:
        snapshot = BaselineSnapshot(suite_name=suite.name, provider=run.provider, run_result=run)
        try:
            location = backend.save(
                snapshot,
                sha=sha,
                ref=activity.baseline_ref,
                regressions=len(drift.regressions) if drift else 0,
            )
            status = BaselineStatus.CREATED if baseline is None else BaselineStatus.UPDATED
        except BaselineStoreError as exc:
            # The run is still reported; only the promotion is lost, and the user is told why.
            notes.append(f"The baseline could not be saved: {exc}")
    elif activity.compare and activity.promotion != "never" and why_not:
        notes.append(f"The baseline was not updated: {why_not}.")

    return PairOutcome(
        suite_name=suite.name,
        suite_file=loaded.repo_path,
        model=model_id,
        run=run,
        drift=drift,
        baseline_run=baseline.run_result if baseline is not None else None,
        baseline_status=status,
        baseline_location=location,
        baseline_error=baseline_error,
        notes=notes,
        prompt_lines=dict(suite.prompt_lines),
        probe_lines=suite.probe_lines,
    )
