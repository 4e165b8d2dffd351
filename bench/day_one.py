"""Day one: how right the verdict of ``samples: auto`` is from a repository's first pull request.

A repository's history, played through the real code path: the first push to ``main`` runs the
suite with no baseline (``CanarySuite.run``: the real runner, with the seeded fake provider of
``bench/_drift_provider.py``), ``evaluate()`` (``core/verdict``: ``compare()`` and the real
promotion rule ``update-baseline: auto``; the usage figures are left out: no gate reads them)
decides whether it becomes the baseline, and every later
push does the same against the baseline it finds (runs with regressions or errors are not
promoted; the pool is what ``Evaluation.snapshot`` carries). After 1, 2, 3, 5, 10 and 20 pushes,
pull requests are run against the baseline of that moment (never promoted): one with no drift,
one where the 0.95 probe passes at 0.50, one where it passes at 0.75.

Columns: false alarm (share of no-drift pull requests with any regression), the 0.50 drop
caught / reported "same" / inconclusive, the 0.75 drop caught, answers per prompt of the no-drift
pull request and of the push itself, and the first push's cost. Seeded: two runs print the same
figures. Prints, never asserts.

``--histories N`` (the main table, default 300), ``--others N`` (the other tables, default 100; the
1,000-comparison table runs a quarter of it), ``--quick`` (40 and 20),
``--only default,moderate,wordings,large,spread-0.6,spread-1.0,decline`` picks tables (an unknown
name is an error). Every history is independent; two worker processes share them (the
machine's two cores).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _day_one_models as models
from bench import _drift_model as dm
from bench._common import machine_note, positive
from bench._drift_provider import SimProvider, sim_suite
from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, DriftReport
from promptcanary.core.run.options import RunOptions
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.evaluate import Evaluation, EvaluationPolicy, decide

SEED = 20261202
CHECKPOINTS = (1, 2, 3, 5, 10, 20)
DRIFT_KEY = models.DRIFT_KEY
PUSH = EvaluationPolicy(promotion="if_clean")
PULL = EvaluationPolicy(promotion="never")
# A push may become the baseline: it tops the pool up (RunOptions.top_up, when this version has it).
_PUSH_OPTIONS = {"top_up": True} if "top_up" in {f.name for f in fields(RunOptions)} else {}


@dataclass(frozen=True)
class Scenario:
    suite: str = "default"
    sd: float = 0.0
    """Run-to-run spread of the pass rates (logit sd); 0: none."""
    decline: bool = False
    """The 0.95 probe declines to 0.50 over the 20 pushes (promoted when not flagged)."""


@dataclass
class Row:
    """Counts at one checkpoint, summed over histories."""

    histories: int = 0
    alarms: int = 0
    caught: int = 0
    same: int = 0
    inconclusive: int = 0
    caught_75: int = 0
    pr_answers: float = 0.0
    push_answers: float = 0.0

    def add(self, other: Row) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class History:
    rows: dict[int, Row] = field(default_factory=dict)
    first_push: float = 0.0
    flagged: bool = False
    """decline: some push (or pull request) flagged the declining probe."""


def _run(suite: CanarySuite, model: dm.Model, rng: random.Random,
         snapshot: BaselineSnapshot | None, **options: object) -> CanaryRunResult:  # fmt: skip
    return suite.run(SimProvider(model, rng), show_progress=False, baseline=snapshot,
                     baseline_pool=DEFAULT_POOL, max_retries=0, **options)  # fmt: skip


def _evaluate(snapshot: BaselineSnapshot | None, run: CanaryRunResult,
              policy: EvaluationPolicy) -> Evaluation:  # fmt: skip
    """``evaluate()`` without its usage figures (latency bootstraps, no gate here): ``compare()``
    and ``decide()``, the gate and the promotion rule; the probes never change, so no re-score."""
    drift = compare(snapshot, run) if snapshot is not None else None
    return decide(run, drift, policy, baseline=snapshot)


def _verdict(report: DriftReport | None) -> str:
    for c in report.comparisons if report else []:
        if c.prompt_id == DRIFT_KEY:
            return c.verdict or ("regressed" if c.regression else "same")
    return "missing"


def _behaviour(scenario: Scenario, base: dict[str, dm.Draw], rng: random.Random,
               push: int | None = None) -> dict[str, dm.Draw]:  # fmt: skip
    """One run's behaviour: the suite's, redrawn under spread, declined on a decline push."""
    out = base
    if scenario.sd:
        out = models.spread(base, models.pass_rates(scenario.suite), scenario.sd, rng)
    if scenario.decline and push is not None:
        out = dm.drifted(out, 0.95 - 0.45 * (push - 1) / (CHECKPOINTS[-1] - 1))
    return out


@dataclass
class Repository:
    """One repository's state as its pushes are played: what a pull request is run against."""

    scenario: Scenario
    rng: random.Random
    base: dict[str, dm.Draw]
    suite: CanarySuite
    snapshot: BaselineSnapshot | None = None


def pushes(scenario: Scenario, seed: int) -> Iterator[tuple[int, CanaryRunResult, Evaluation,
                                                            Repository]]:  # fmt: skip
    """A repository's 20 pushes, each promoted when ``evaluate()`` allows it: per push its
    number, run and evaluation, and the repository after it (a consumer that draws from
    ``repo.rng`` between pushes draws in history order, so the figures stay seeded)."""
    base = models.BEHAVIOURS[scenario.suite]()
    repo = Repository(scenario, random.Random(seed), base, sim_suite(list(base)))
    for push in range(1, CHECKPOINTS[-1] + 1):
        model = models.model(scenario.suite, _behaviour(scenario, base, repo.rng, push))
        run = _run(repo.suite, model, repo.rng, repo.snapshot, **_PUSH_OPTIONS)
        evaluation = _evaluate(repo.snapshot, run, PUSH)
        if evaluation.promotion.allowed:
            repo.snapshot = evaluation.snapshot(DEFAULT_POOL)
        yield push, run, evaluation, repo


def play(scenario: Scenario, seed: int) -> History:
    """One repository: 20 pushes, pull requests at the checkpoints."""
    out = History()
    for push, run, evaluation, repo in pushes(scenario, seed):
        prompts = len(repo.base)
        if push == 1:
            out.first_push = len(run.llm_responses) / prompts
        if scenario.decline and _verdict(evaluation.drift) == "regressed":
            out.flagged = True
        if push in CHECKPOINTS and not scenario.decline:
            row = _pulls(scenario, repo.suite, repo.base, repo.snapshot, repo.rng)
            row.push_answers = len(run.llm_responses) / prompts
            out.rows[push] = row
    return out


def _pulls(scenario: Scenario, suite: CanarySuite, base: dict[str, dm.Draw],
           snapshot: BaselineSnapshot | None, rng: random.Random) -> Row:  # fmt: skip
    row = Row(histories=1)
    prompts = len(base)
    for rate in (None, 0.50, 0.75):
        behaviour = _behaviour(scenario, base, rng)
        if rate is not None:
            behaviour = dm.drifted(behaviour, rate)
        run = _run(suite, models.model(scenario.suite, behaviour), rng, snapshot)
        report = _evaluate(snapshot, run, PULL).drift
        verdict = _verdict(report)
        if rate is None:
            row.alarms += bool(report and report.regressions)
            row.pr_answers = len(run.llm_responses) / prompts
        elif rate == 0.50:
            row.caught += verdict == "regressed"
            row.same += verdict == "same"
            row.inconclusive += verdict == "inconclusive"
        else:
            row.caught_75 += verdict == "regressed"
    return row


def _job(args: tuple[Scenario, int]) -> History:
    return play(*args)


def _pct(count: float, total: int) -> str:
    return f"{100.0 * count / total:.1f}%" if total else "-"


def table(title: str, scenario: Scenario, histories: int, pool: multiprocessing.pool.Pool) -> None:
    started = time.perf_counter()
    jobs = [(scenario, SEED + 1000 * h) for h in range(histories)]
    results = pool.map(_job, jobs, chunksize=1)
    elapsed = time.perf_counter() - started
    first = sum(r.first_push for r in results) / histories
    print(f"\n### {title}: {histories} histories, {elapsed:.0f} s ({machine_note()})\n")
    if scenario.decline:
        flagged = sum(r.flagged for r in results)
        print(
            f"0.95 → 0.50 declining over {CHECKPOINTS[-1]} pushes, flagged by a push by the "
            f"end: {_pct(flagged, histories)}; first push {first:.1f} answers per prompt"
        )
        return
    print("| pushes so far | PR false alarm | 0.95→0.50 caught | …same | …inconclusive "
          "| 0.95→0.75 caught | answers/prompt per PR | …per push |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for k in CHECKPOINTS:
        row = Row()
        for r in results:
            row.add(r.rows[k])
        n = row.histories
        print(f"| {k} | {_pct(row.alarms, n)} | {_pct(row.caught, n)} | {_pct(row.same, n)} | "
              f"{_pct(row.inconclusive, n)} | {_pct(row.caught_75, n)} | "
              f"{row.pr_answers / n:.2f} | {row.push_answers / n:.2f} |")  # fmt: skip
    print(f"\nFirst push: {first:.1f} answers per prompt.")
    sys.stdout.flush()


TABLES: dict[str, tuple[str, Scenario]] = {
    "default": ("bench suite, 100 comparisons", Scenario()),
    "moderate": ("moderate pass rates (0.60-0.90), 100 comparisons", Scenario("moderate")),
    "wordings": ("two wordings per flaky prompt (90/10)", Scenario("wordings")),
    "large": ("1,000 comparisons", Scenario("large")),
    "spread-0.6": ("run-to-run spread, logit sd 0.6, no drift", Scenario(sd=0.6)),
    "spread-1.0": ("run-to-run spread, logit sd 1.0, no drift", Scenario(sd=1.0)),
    "decline": ("slow decline", Scenario(decline=True)),
}


def _tables(text: str) -> list[str]:
    names = text.split(",")
    unknown = [name for name in names if name not in TABLES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"no table {', '.join(unknown)}; the tables: {', '.join(TABLES)}"
        )
    return names


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="40 and 20 histories")
    parser.add_argument("--histories", type=positive, help="the main table's histories (300)")
    parser.add_argument("--others", type=positive, help="the other tables' histories (100)")
    parser.add_argument("--only", type=_tables, default=list(TABLES), help="comma-separated")
    args = parser.parse_args(argv)
    main_n = args.histories if args.histories is not None else 40 if args.quick else 300
    other_n = args.others if args.others is not None else 20 if args.quick else 100
    started = time.perf_counter()
    print(machine_note())
    print(f"push options: {_PUSH_OPTIONS or 'none (this version has no top-up)'}")
    with multiprocessing.Pool(2) as pool:
        for name in args.only:
            title, scenario = TABLES[name]
            n = main_n if name == "default" else other_n
            if name == "large":
                n = max(1, n // 4)  # ten times the work per run
            table(title, scenario, n, pool)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
