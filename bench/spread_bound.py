"""The least false alarm any rule must raise under run-to-run spread while the pool is young.

The day-one targets ask two things of one rule: catch 0.95 -> 0.50 on the first pull request in
at least 90% of repositories whose runs do not vary, and raise a false alarm in at most 5% of
no-drift runs when each run's pass rate varies (logit sd 1.0). A young pool cannot tell the two
worlds apart, so the rule pays in one of them. This computes, exactly (every count summed, the
spread integrated on a fine grid), the least it must pay, for any rule at all that decides a
comparison from that comparison's pooled runs and today's answers, knowing both worlds exactly:

* **drop** (the power target): the pool is the first push, built by the library's plan
  (``power.build_size``, ``day_one_validity.built_pools``) at 0.95, and ``pushes - 1`` later runs
  of ``--later`` answers at 0.95; today ``--today`` answers (``max-samples``: a sequential rule
  sees at most that many, so it can do no better than one that sees them all) at 0.50;
* **spread** (the false-alarm target): the bench suite's 10 flaky comparisons
  (``FLAKY_RATES``), every run of each (the first push, each later run, today) at its own rate,
  logit-normal around the comparison's with sd ``--sd``; nothing drifted.

By the Neyman-Pearson lemma the rule that meets the power with the least summed false alarm
over the 10 comparisons rejects the outcomes with the highest ratio P(drop) / sum of
P(spread_i); later runs enter through the multiset of their counts (they are exchangeable in
both worlds). The run's false alarm, the chance that any of the 10 rings, is then at least
``S - S**2 / 2`` for the least sum ``S`` (Bonferroni's second inequality), and at most ``S``.

What this does not bound: a rule that reads the spread from *other* comparisons. From two runs on
the shipped rule does (each comparison widened by the spread the others' pooled runs show), so
for two pushes and more the rows below bound only rules that look at one comparison at a time.
A pool of one run shows no spread whoever reads it (a prompt's own rate is unknown, and one run
of each cannot separate its rate from its run's draw); reading the spread from today's answers of
other prompts would excuse a regression of several prompts at once. Promotion (only clean runs
join the pool) is left out, and later runs have a fixed size where the runner's vary with their
answers (6-8 a flaky prompt on the bench suite).

Prints, never asserts; ``--sd 0.6,1.0``, ``--later 6``, ``--today 80``, ``--pushes 1,2,3,4,5``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, positive
from bench._drift_model import FLAKY_RATES
from bench.day_one_validity import built_pools
from promptcanary.core.sampling import power

COMPARISONS = 100
"""The bench suite's size: the first push builds its pool for e-BH over this many."""
POWERS = (0.90, 0.925, 0.95)
GRID = 61
"""Points of the normal grid on -6 ... 6 sd the spread is integrated over."""

Dist = dict[object, float]


def _normal_grid() -> tuple[tuple[float, float], ...]:
    zs = [-6.0 + 12.0 * i / (GRID - 1) for i in range(GRID)]
    weights = [math.exp(-z * z / 2) for z in zs]
    total = sum(weights)
    return tuple((z, w / total) for z, w in zip(zs, weights, strict=True))


NORMAL = _normal_grid()


def _outcomes(p: float, answers: int | None) -> Dist:
    """One run's outcomes at rate ``p``: the first push as the library builds it (``answers``
    None), or the passes of ``answers`` answers."""
    if answers is None:
        return dict(built_pools(p, COMPARISONS))
    return dict(enumerate(power.pmf(answers, p)))


@cache
def _run_outcomes(rate: float, sd: float, answers: int | None) -> Dist:
    """:func:`_outcomes` when the run's rate is logit-normal around ``rate`` with sd ``sd``
    (0: the rate itself). Cached: every number of pushes asks the same runs."""
    if sd == 0.0:
        return _outcomes(rate, answers)
    out: Dist = {}
    centre = math.log(rate / (1 - rate))
    for z, w in NORMAL:
        for key, q in _outcomes(1 / (1 + math.exp(-centre - sd * z)), answers).items():
            out[key] = out.get(key, 0.0) + w * q
    return out


def _later_runs(one_run: Dist, runs: int) -> Dist:
    """The multiset of ``runs`` independent later runs' pass counts (sorted tuple)."""
    out: Dist = {}
    for combo in itertools.combinations_with_replacement(sorted(one_run), runs):
        ways = math.factorial(runs)
        for repeats in Counter(combo).values():
            ways //= math.factorial(repeats)
        out[combo] = ways * math.prod(one_run[x] for x in combo)
    return out


def _world(
    rate: float, today_rate: float, sd: float, pushes: int, later: int, today: int
) -> tuple[Dist, Dist, Dist]:
    """A comparison's pool (first push, later runs as a multiset) and today's answers."""
    return (
        _run_outcomes(rate, sd, None),
        _later_runs(_run_outcomes(rate, sd, later), pushes - 1),
        _run_outcomes(today_rate, sd, today),
    )


def least_false_alarm(
    sd: float, pushes: int, later: int, today: int, powers: Sequence[float]
) -> list[float]:
    """The least summed false alarm of the 10 comparisons at each power (Neyman-Pearson)."""
    drop = _world(0.95, 0.50, 0.0, pushes, later, today)
    nulls = [_world(r, r, sd, pushes, later, today) for r in FLAKY_RATES]
    cells: list[tuple[float, float, float]] = []
    for (a, pa), (b, pb), (c, pc) in itertools.product(*(w.items() for w in drop)):
        p1 = pa * pb * pc
        if p1 < 1e-15:
            continue
        p0 = sum(n[0].get(a, 0.0) * n[1].get(b, 0.0) * n[2].get(c, 0.0) for n in nulls)
        cells.append((p1 / p0 if p0 > 0 else math.inf, p1, p0))
    cells.sort(key=lambda cell: -cell[0])
    out = []
    for target in powers:
        caught = alarm = 0.0
        for _, p1, p0 in cells:
            take = min(1.0, (target - caught) / p1)  # the last outcome taken in part
            caught, alarm = caught + take * p1, alarm + take * p0
            if caught >= target - 1e-12:
                break
        out.append(alarm)
    return out


def _csv(kind: Callable[[str], float | int]) -> Callable[[str], list[float | int]]:
    return lambda text: [kind(part) for part in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sd", type=_csv(float), default=[1.0, 0.6])
    parser.add_argument("--later", type=positive, default=6)
    parser.add_argument("--today", type=positive, default=80)
    parser.add_argument("--pushes", type=_csv(positive), default=[1, 2, 3, 4, 5])
    args = parser.parse_args()
    started = time.perf_counter()
    print(machine_note())
    print(
        f"\nLeast false alarm of a run (any of the bench suite's {len(FLAKY_RATES)} flaky "
        f"comparisons) for any rule deciding each comparison from its own pool and today's "
        f"{args.today} answers, at the power it keeps against 0.95 -> 0.50 with no spread; later "
        f"runs of {args.later} answers. Each cell: at least S - S^2/2, at most S (the least sum)."
    )
    header = " | ".join(f"power {100 * p:g}%" for p in POWERS)
    print(f"\n| logit sd | pushes so far | {header} |")
    print("|---|---|" + "---|" * len(POWERS))
    for sd in args.sd:
        for pushes in args.pushes:
            sums = least_false_alarm(float(sd), int(pushes), args.later, args.today, POWERS)
            cells = " | ".join(f"{100 * (s - s * s / 2):.2f}–{100 * s:.2f}%" for s in sums)
            print(f"| {sd:g} | {pushes} | {cells} |")
            sys.stdout.flush()
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
