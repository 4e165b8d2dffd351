"""``mode: merge``: read the legs' report folders and merge their runs, one run per pair.

A matrix job's legs each upload their ``report-dir`` as an artifact; the merge job downloads them
all into its own ``report-dir`` (``actions/download-artifact`` with ``pattern:`` and without
``merge-multiple`` makes one subfolder per artifact)::

    <report-dir>/promptcanary-leg-1/step.json
    <report-dir>/promptcanary-leg-2/step.json
    …

Each ``step.json`` holds the leg's whole outcome, runs included. The runs of one (suite, model)
pair are merged by the engine (:func:`promptcanary.core.run.shards.merge_runs`); everything after
that (comparison, gate, promotion, comment) is the normal step's, fed with the merged runs: a
:data:`JudgeMergedRun` evaluates each as a run of this step.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from promptcanary.core.models import CanaryRunResult
from promptcanary.core.run.shards import MergeError, RunPart, Shard, merge_runs
from promptcanary_action.activity import Activity
from promptcanary_action.errors import UsageError
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.pipeline import LoadedSuite
from promptcanary_action.report_dir import STEP_FILE


@dataclass(frozen=True)
class Leg:
    """One downloaded leg: its artifact folder's name and the outcome it wrote."""

    name: str
    outcome: StepOutcome


@dataclass(frozen=True)
class MergedPair:
    """One (suite, model) pair's run, merged from every leg that ran part of it."""

    suite_name: str
    model: str
    run: CanaryRunResult
    legs: tuple[str, ...]


def _read_leg(path: Path, report_dir: Path) -> Leg:
    try:
        outcome = StepOutcome.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"mode: merge: cannot read {path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise UsageError(
            f"mode: merge: {path} is not a leg's step.json ({where}: {first['msg']}); upload "
            "each leg's whole report-dir, unchanged"
        ) from None
    return Leg(path.parent.relative_to(report_dir).as_posix(), outcome)


def _natural(name: str) -> list[tuple[int, str]]:
    """``leg-2`` before ``leg-10``: the matrix's order, not the alphabet's."""
    return [(int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name)]


def read_legs(report_dir: Path) -> list[Leg]:
    """Every ``<report-dir>/<artifact>/step.json``, in folder-name order (numbers as numbers).

    Raises:
        UsageError: no leg there, an unreadable leg, or legs of different commits.
    """
    found = report_dir.glob(f"*/{STEP_FILE}") if report_dir.is_dir() else []
    files = sorted(found, key=lambda path: _natural(path.parent.name))
    if not files:
        raise UsageError(
            f"mode: merge: no leg report in {report_dir}: expected <report-dir>/<artifact>/"
            f"{STEP_FILE}. Download the legs' artifacts into report-dir with "
            "actions/download-artifact (pattern: promptcanary-leg-*, no merge-multiple)"
        )
    legs = [_read_leg(path, report_dir) for path in files]
    _check_one_commit(legs)
    return legs


def _check_one_commit(legs: list[Leg]) -> None:
    """Legs split by model or suite share no pair to merge, yet must be of one commit too."""
    commits: dict[str, list[str]] = defaultdict(list)
    for leg in legs:
        commits[leg.outcome.sha].append(leg.name)
    if len(commits) > 1:
        listed = "; ".join(f"{sha or '(none)'} in {', '.join(n)}" for sha, n in commits.items())
        raise UsageError(
            f"mode: merge: legs of different commits: {listed}. Merge only the legs of one "
            "workflow run (name the artifacts per run, or re-run all legs)"
        )


def merge_legs(legs: list[Leg]) -> list[MergedPair]:
    """One merged run per (suite, model) pair, in the order the pairs first appear.

    Raises:
        UsageError: the runs of a pair cannot be merged (the engine's reason, naming the legs).
    """
    parts: dict[tuple[str, str], list[RunPart]] = defaultdict(list)
    for leg in legs:
        for pair in leg.outcome.pairs:
            parts[(pair.suite_name, pair.model)].append(RunPart(pair.run, leg.name))
    merged: list[MergedPair] = []
    for (suite_name, model), runs in parts.items():
        try:
            run = merge_runs(runs)
        except MergeError as exc:
            raise UsageError(f"mode: merge: {suite_name} on {model}: {exc}") from None
        merged.append(MergedPair(suite_name, model, run, tuple(p.source for p in runs)))
    return merged


def leg_activity(activity: Activity, shard: Shard) -> Activity:
    """A leg compares its share with the baseline and writes its report; it publishes nothing.

    One comment, one check run and one promotion come from the merge job, over every leg: a
    leg's own would overwrite the others' (same comment marker) or promote part of a suite.
    """
    note = (
        f"This step is leg {shard} of a matrix job: it posts no comment or check run, opens no "
        "issue and updates no baseline; the `mode: merge` job publishes all legs as one run "
        "and decides the gate."
    )
    return replace(
        activity,
        comment=False,
        check_run=False,
        promotion="never",
        may_create_baseline=False,
        issue_on_drift=False,
        notes=(*activity.notes, note),
    )


JudgeMergedRun = Callable[[LoadedSuite, str, CanaryRunResult], PairOutcome]
"""``(suite, model id, merged run) -> PairOutcome``: the merged run evaluated and promoted as a
run of this step is (:func:`promptcanary_action.pipeline.judge_run`)."""


def judge_legs(
    legs: list[Leg], suites: Sequence[LoadedSuite], judge: JudgeMergedRun
) -> list[PairOutcome]:
    """Each merged pair judged like a run of this step, in the order of the ``config`` suites.

    Raises:
        UsageError: a leg ran a suite this step does not load, or another version of it.
    """
    by_name = {loaded.suite.name: loaded for loaded in suites}
    merged = merge_legs(legs)
    for pair in merged:
        loaded = by_name.get(pair.suite_name)
        if loaded is None:
            raise UsageError(
                f"mode: merge: {', '.join(pair.legs)} ran suite {pair.suite_name!r}, which "
                f"input 'config' does not load here ({', '.join(sorted(by_name)) or 'none'}); "
                "give the merge job the legs' config"
            )
        if pair.run.provenance.suite_hash != loaded.suite.suite_hash:
            raise UsageError(
                f"mode: merge: {', '.join(pair.legs)} ran another version of {loaded.path} "
                f"(suite hash {pair.run.provenance.suite_hash}, here {loaded.suite.suite_hash}); "
                "check out the legs' commit in the merge job"
            )
    order = {name: k for k, name in enumerate(by_name)}
    merged.sort(key=lambda pair: order[pair.suite_name])  # stable: models keep the legs' order
    return [judge(by_name[p.suite_name], p.model, p.run) for p in merged]
