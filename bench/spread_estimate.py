"""Why run-to-run spread still raises false alarms: how well the pool's spread estimate reads it.

Two parts, seeded, printing and never asserting:

1. **The estimator alone** (seconds): ``spread_fit.estimate_spread`` on pools of 10 comparisons
   (pass rates 0.90-0.97, a logit-normal spread per run), each pool a first run of 28 answers and
   9 later runs; the later runs either have a fixed size (10 answers) or are sampled the way
   ``samples: auto`` samples them: they stop at 5 answers when all pass and grow in stages when
   one fails. The method-of-moments estimate assumes run sizes fixed in advance; sizes that
   depend on the answers are not, and the excess it reads shrinks.
2. **Through the real runner** (``bench/day_one.py``'s history with a spread of logit sd 1.0,
   10 histories, 6 no-drift pull requests at each checkpoint): the mean estimate the pool gives,
   and the false alarm with that estimate and with the true spread put in its place (the only
   change: ``sequencer.pool_spread`` returns the true ``sd**2``), which isolates the estimate
   from the widening.

Part 1 also prints how often a young pool (2, 3 or 5 runs: a first run of 57 answers and later
runs of 6 or of 20) reads a variance as below 0.1: what larger promoted runs would buy.

``--histories N`` (default 10), ``--prs K`` (6), ``--only estimator`` skips part 2.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _day_one_models as models
from bench import day_one
from bench._common import machine_note, positive
from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.sampling import sequencer
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.sampling.power import answers_to_settle, stage_sizes
from promptcanary.core.sampling.sequential import Counts, Policy
from promptcanary.core.sampling.spread_fit import SpreadReading, estimate_spread

RATES = tuple(models.pass_rates("default").values())
FIRST_RUN = 28
"""Answers per prompt of a pool's first run (the default suite's first push builds about 28)."""
# The stages a later run takes from the size at which an all-pass comparison is "same" against
# such a pool.
_SETTLES = answers_to_settle(Counts(FIRST_RUN, FIRST_RUN), Policy())
STAGES = tuple(n for n in stage_sizes(Policy()) if n >= _SETTLES)
CHECKPOINTS = (2, 5, 10, 20)


def _fixed(p: float, n: int, rng: random.Random) -> Counts:
    return Counts(sum(rng.random() < p for _ in range(n)), n)


def _staged(p: float, rng: random.Random) -> Counts:
    """A run that stops when its answers all pass and otherwise asks the next stage."""
    passes = n = 0
    for size in STAGES:
        passes += sum(rng.random() < p for _ in range(size - n))
        n = size
        if passes == n:
            break
    return Counts(passes, n)


def _pool(
    sd: float, first: int, later: Callable[[float], Counts], runs: int, rng: random.Random
) -> list[list[Counts]]:
    """One simulated pool: per comparison a first run of ``first`` answers, then ``runs`` later
    runs drawn by ``later`` from each run's own rate (logit-normal, sd ``sd``)."""
    return [
        [_fixed(models.logit_normal(r, sd, rng), first, rng)]
        + [later(models.logit_normal(r, sd, rng)) for _ in range(runs)]
        for r in RATES
    ]


def estimator_table(reps: int = 100) -> None:
    rng = random.Random(20261205)
    print("\n### The estimator alone: mean estimated logit variance, 100 pools a cell\n")
    print("| true logit sd | true variance | later runs of fixed size | …sized by their answers |")
    print("|---|---|---|---|")
    for sd in (0.0, 0.6, 1.0):
        means = []
        for later in (lambda p: _fixed(p, 10, rng), lambda p: _staged(p, rng)):
            total = 0.0
            for _ in range(reps):
                total += estimate_spread(_pool(sd, FIRST_RUN, later, 9, rng))
            means.append(total / reps)
        print(f"| {sd} | {sd * sd:.2f} | {means[0]:.2f} | {means[1]:.2f} |")


def _history_row(seed: int, sd: float, prs: int) -> dict[int, tuple[float, int, int]]:
    """Per checkpoint: the pool's estimate, false alarms with it and with the true spread."""
    out: dict[int, tuple[float, int, int]] = {}
    for push, _run, _evaluation, repo in day_one.pushes(day_one.Scenario(sd=sd), seed):
        if push not in CHECKPOINTS or repo.snapshot is None:
            continue
        ids = [p.id for p in repo.suite.prompts]
        pooled = sequencer.pooled_baseline(repo.snapshot, DEFAULT_POOL, {}, ids)
        estimate = sequencer.pool_spread(pooled.prompts).suite
        alarms = [_alarms(repo, repo.snapshot, prs, spread) for spread in (None, sd * sd)]
        out[push] = (estimate, alarms[0], alarms[1])
    return out


def _alarms(
    repo: day_one.Repository, snapshot: BaselineSnapshot, prs: int, spread: float | None
) -> int:
    estimated: Callable[..., SpreadReading] = sequencer.pool_spread
    if spread is not None:  # the true spread in place of the estimate, nothing else changed
        sequencer.pool_spread = lambda pooled: SpreadReading(spread)
    try:
        count = 0
        for _ in range(prs):
            behaviour = day_one._behaviour(repo.scenario, repo.base, repo.rng)
            model = models.model("default", behaviour)
            run = day_one._run(repo.suite, model, repo.rng, snapshot)
            report = day_one._evaluate(snapshot, run, day_one.PULL).drift
            count += bool(report and report.regressions)
        return count
    finally:
        sequencer.pool_spread = estimated


def young_pool_table(reps: int = 150, first: int = 57) -> None:
    """How often a young pool reads a spread as none (below 0.1), by the size of its later runs:
    what larger promoted runs would buy while the pool holds few runs."""
    rng = random.Random(20261206)
    print(f"\n### A young pool: share of suites reading the variance below 0.1, {reps} suites "
          f"a cell (a first run of {first} answers, K - 1 later runs of 6 or 20)\n")  # fmt: skip
    print("| true variance | later runs | K = 2 | K = 3 | K = 5 |")
    print("|---|---|---|---|---|")
    for sd in (0.0, 1.0):
        for size in (6, 20):
            shares = []
            for k in (2, 3, 5):
                low = 0
                for _ in range(reps):
                    later = functools.partial(_fixed, n=size, rng=rng)
                    low += estimate_spread(_pool(sd, first, later, k - 1, rng)) < 0.1
                shares.append(f"{100 * low / reps:.0f}%")
            print(f"| {sd * sd:.2f} | {size} | " + " | ".join(shares) + " |")


def runner_table(histories: int, prs: int, sd: float = 1.0) -> None:
    rows = [_history_row(day_one.SEED + 1000 * h, sd, prs) for h in range(histories)]
    print(f"\n### Through the real runner, logit sd {sd}: {histories} histories × {prs} "
          f"no-drift pull requests a checkpoint ({machine_note()})\n")  # fmt: skip
    print(f"| pushes so far | mean estimate (true {sd * sd:.2f}) | false alarm, estimated spread "
          "| …true spread |")  # fmt: skip
    print("|---|---|---|---|")
    for k in CHECKPOINTS:
        cells = [r[k] for r in rows if k in r]
        n = len(cells) * prs
        estimate = sum(c[0] for c in cells) / len(cells)
        print(f"| {k} | {estimate:.2f} | {100 * sum(c[1] for c in cells) / n:.1f}% "
              f"| {100 * sum(c[2] for c in cells) / n:.1f}% |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", choices=["estimator"], help="the estimator tables alone")
    parser.add_argument("--histories", type=positive, default=10)
    parser.add_argument(
        "--prs", type=positive, default=6, help="no-drift pull requests a checkpoint"
    )
    args = parser.parse_args()
    print(machine_note())
    estimator_table()
    young_pool_table()
    if args.only == "estimator":
        return
    runner_table(args.histories, args.prs)


if __name__ == "__main__":
    main()
