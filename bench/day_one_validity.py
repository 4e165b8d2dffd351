"""Exact validity and power of one ``samples: auto`` comparison: every outcome summed, no dice.

For a baseline of ``nb`` answers at pass rate ``p_b`` and today's answers at ``p_c``, asked in the
stages the runner uses (3, 4, 5, 7, 9, 12, 15, 19, 24, 30, 38, 48, 60 at the defaults), the chance
that a comparison is *ever* called regressed (the e-value reaching the bar at some stage) or
*ever* called "same" (the futility test ruling the drop out at some stage) is summed exactly over
every baseline count and every path of today's answers. Stopping earlier (a decision on another
probe, futility) can only remove looks, so these are upper bounds for the runner's procedure.

1. **False alarm of one comparison** under the null ``p_c = p_b`` (the null's worst case: a
   better current rate only lowers the e-value) for ``p_b`` in 0.50 … 1.00 and pool sizes 1 … 200,
   at the bar ``1 / alpha`` of a lone comparison (any e-BH bar ``m / alpha`` is higher): at most
   ``alpha`` = 5% is the claim.
2. **"Same" after a drop of the margin** (``p_c = p_b - 0.5``): at most
   ``SAME_BASELINE_LEVEL + futility_level`` = 5% is the claim.
3. ``--spread`` (simulated, seeded): the false alarm of one comparison when the pass rate varies
   from run to run (logit sd 0.6 and 1.0) and nothing drifted. A suite of 10 comparisons at one
   rate shares the spread; its pool is the first push (57 answers) and ``K - 1`` promoted runs of
   5; the spread is estimated from the pool as the runner does (``pool_spread``), today's run is
   another draw, asked in the stages above; each comparison alone at the bar ``1 / alpha``, with
   and without the widening (``spread = 0``: the pool as one binomial).
4. ``--building``: the first push's pool of one probe under the library's building plan
   (``promptcanary/core/sampling/power.py``), every pool it can stop at with its exact
   probability: its mean cost by pass rate and the exact chance that the first pull request
   catches a drop to 0.50 against it.
5. ``--first-spread``: the first pull request, whose pool is one run and cannot show a spread,
   compared as if the runs varied by an assumed logit variance (0, 0.1, 0.25, 0.5): the exact
   chance of catching 0.95 -> 0.50 with no spread, against one comparison's false alarm when
   the runs do vary (rates drawn per run, ``--pairs`` of them; exact over the answers).
6. ``--young`` (simulated, seeded): a young pool (2, 3, 5 runs) of the bench suite's 10 flaky
   probes whose later runs hold 6 answers (as pushes ask now) or 20: any false alarm at the
   suite's bar under a spread of sd 1.0 (widened by the pool's reading, and by the true spread
   for reference), and the 0.50 drop caught with no spread.
7. ``--derive``: the power of the e-value against 0.95 → 0.50 at e-BH's single-discovery bar
   ``m / 0.05``, and the fewest baseline answers reaching 93% (``BASELINE_SAMPLES_TABLE``); slow
   (minutes per row), so not part of the default run.

Prints, never asserts. ``--quick``: fewer pool sizes and rates.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note
from bench._drift_model import FLAKY_RATES
from promptcanary.core.sampling import power
from promptcanary.core.sampling import sequential as seq
from promptcanary.core.sampling.sequencer import PooledPrompt, Sequencer
from promptcanary.core.sampling.sequential import Counts, Look, Policy, Verdict, step
from promptcanary.core.sampling.spread import anchor_runs

POLICY = Policy()


def looks(policy: Policy = POLICY) -> list[int]:
    """The stage sizes of one comparison that stays undecided to ``max_samples``."""
    return list(power.stage_sizes(policy))


def walk(
    deciders: Sequence[Callable[[int, int], bool]], p: float, sizes: Sequence[int]
) -> tuple[list[float], float]:
    """Chance that each of ``deciders(passes, n)`` is the first to hold at some stage (checked in
    order at a look, as ``sequential.step`` checks a regression before "same"), answers at
    rate ``p``; and the expected answers asked (the last size when none holds)."""
    dist, n, hits, answers = [1.0], 0, [0.0] * len(deciders), 0.0
    for size in sizes:
        dist, n = power.grow(dist, size - n, p), size
        for x, w in enumerate(dist):
            if w:
                for i, decides in enumerate(deciders):
                    if decides(x, n):
                        hits[i] += w
                        answers += w * n
                        dist[x] = 0.0
                        break
    return hits, answers + sum(dist) * n


def ends(
    deciders: Sequence[Callable[[int, int], bool]], p: float, sizes: Sequence[int]
) -> list[float]:
    """The chances of :func:`walk`."""
    return walk(deciders, p, sizes)[0]


def ever(decides: Callable[[int, int], bool], p: float, sizes: Sequence[int]) -> float:
    """Chance that ``decides(passes, n)`` holds at some stage, answers at rate ``p``."""
    return ends([decides], p, sizes)[0]


@cache
def _crosses(baseline: Counts, passes: int, n: int, bar: float) -> bool:
    return seq.log_e_worse(baseline, Counts(passes, n)) >= math.log(bar)


def _over_baselines(
    nb: int, p_b: float, p_c: float, sizes: Sequence[int],
    decides: Callable[[Counts, int, int], bool],
) -> float:  # fmt: skip
    """Chance of ``decides(baseline, passes, n)`` at some stage, summed over baseline counts."""
    total = 0.0
    for xb, weight in enumerate(power.pmf(nb, p_b)):
        if weight >= 1e-12:
            baseline = Counts(xb, nb)
            total += weight * ever(lambda x, n, b=baseline: decides(b, x, n), p_c, sizes)
    return total


def regressed(nb: int, p_b: float, p_c: float, bar: float, sizes: Sequence[int]) -> float:
    return _over_baselines(nb, p_b, p_c, sizes, lambda b, x, n: _crosses(b, x, n, bar))


def said_same(nb: int, p_b: float, p_c: float, sizes: Sequence[int]) -> float:
    return _over_baselines(nb, p_b, p_c, sizes, lambda b, x, n: seq.futile(b, Counts(x, n), POLICY))


def validity(pools: Sequence[int], rates: Sequence[float]) -> None:
    sizes = looks()
    print(f"\nStages: {sizes}; bar 1/alpha = {1 / POLICY.alpha:g} (one comparison alone).")
    print("\n| pool answers | worst p_b | largest false alarm | worst p_b (same) | largest 'same' "
          "after a drop of 0.5 |")  # fmt: skip
    print("|---|---|---|---|---|")
    worst_fa, worst_same = 0.0, 0.0
    for nb in pools:
        fa = max((regressed(nb, p, p, 1 / POLICY.alpha, sizes), p) for p in rates)
        same = max((said_same(nb, p, p - POLICY.margin, sizes), p) for p in rates)
        worst_fa, worst_same = max(worst_fa, fa[0]), max(worst_same, same[0])
        print(f"| {nb} | {fa[1]:.2f} | {100 * fa[0]:.2f}% | {same[1]:.2f} | {100 * same[0]:.2f}% |")
        sys.stdout.flush()
    print(f"\nLargest false alarm over the grid: {100 * worst_fa:.2f}% (claim ≤ "
          f"{100 * POLICY.alpha:g}%); largest 'same' after a drop of {POLICY.margin}: "
          f"{100 * worst_same:.2f}% (claim ≤ "
          f"{100 * (seq.SAME_BASELINE_LEVEL + POLICY.futility_level):g}%).")  # fmt: skip


def _draw_rate(rate: float, sd: float, rng: random.Random) -> float:
    return 1 / (1 + math.exp(-(math.log(rate / (1 - rate)) + rng.gauss(0.0, sd))))


def _binomial(n: int, p: float, rng: random.Random) -> int:
    return sum(rng.random() < p for _ in range(n))


def _spread_alarm(runs: tuple[Counts, ...], spread: float, p_today: float,
                  rng: random.Random, family: int = 1) -> bool:  # fmt: skip
    """One comparison ever called regressed at e-BH's bar for one discovery among ``family``
    (1: the lone bar), today's answers at ``p_today``."""
    oldest = anchor_runs(runs, least=POLICY.baseline_samples)  # as the runner reads it
    total = sum(runs, Counts(0, 0))
    anchor = sum(oldest, Counts(0, 0)) if oldest else None
    decision, passes, n = None, 0, 0
    for size in looks():
        passes += _binomial(size - n, p_today, rng)
        n = size
        look = Look(total, Counts(passes, n), spread=spread, baseline_runs=tuple(c.n for c in runs),
                    anchor=anchor, anchor_runs=tuple(c.n for c in oldest))  # fmt: skip
        (decision,) = step([decision], [look], POLICY, family=family)
        if decision.decided:
            return decision.verdict is Verdict.REGRESSED
    return False


def spread_validity(reps: int, seed: int = 20261202) -> None:
    bar = 1 / POLICY.alpha
    print(f"\nRun-to-run spread, no drift: share of comparisons ever called regressed at the "
          f"lone bar {bar:g} ({reps} suites of 10 comparisons a cell, seeded).")  # fmt: skip
    print("\n| logit sd | pass rate | pooled runs | mean estimated sd | false alarm, widened "
          "| …pool as one binomial |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    rng = random.Random(seed)
    for sd in (0.6, 1.0):
        for rate in (0.7, 0.9, 0.95):
            for k in (2, 5, 10, 20):
                alarms, plain, estimated = 0, 0, 0.0
                for _ in range(reps):
                    suite = [
                        tuple(Counts(_binomial(n, _draw_rate(rate, sd, rng), rng), n)
                              for n in [5] * (k - 1) + [57])
                        for _ in range(10)
                    ]  # fmt: skip
                    pooled = {
                        str(i): PooledPrompt(k, {}, None, by_run={"p": runs})
                        for i, runs in enumerate(suite)
                    }
                    reading = Sequencer(pooled, POLICY).spread
                    estimated += math.sqrt(reading.suite)
                    for i, runs in enumerate(suite):
                        today = _draw_rate(rate, sd, rng)
                        alarms += _spread_alarm(runs, reading.of((str(i), "p")), today, rng)
                        plain += _spread_alarm(runs, 0.0, today, rng)
                cells = 10 * reps
                print(f"| {sd} | {rate} | {k} | {estimated / reps:.2f} | "
                      f"{100 * alarms / cells:.2f}% | {100 * plain / cells:.2f}% |")  # fmt: skip
                sys.stdout.flush()


def _young_suite(k: int, later: int, sd: float, rng: random.Random) -> dict[str, PooledPrompt]:
    """The flaky probes' pools after ``k`` runs: the first push's 57 answers, then runs of
    ``later``, each run at its own rate (logit sd ``sd``)."""
    return {
        str(i): PooledPrompt(k, {}, None, by_run={"p": tuple(
            Counts(_binomial(n, _draw_rate(rate, sd, rng) if sd else rate, rng), n)
            for n in [later] * (k - 1) + [57]
        )})
        for i, rate in enumerate(FLAKY_RATES)
    }  # fmt: skip


def young_pool(reps: int, seed: int = 20261206) -> None:
    """What asking a young pool's flaky prompts more answers per push would buy, at the bar of
    the bench suite (100 comparisons, 2,000): any false alarm among its 10 flaky probes under a
    spread of sd 1.0, widened by the pool's reading and by the true spread; and power against
    0.95 -> 0.50 with no spread."""
    family = 100
    print(
        f"\nA young pool, by the answers of its later runs ({reps} suites a cell, seeded): "
        f"any of the bench suite's 10 flaky probes called regressed at the bar "
        f"{family / POLICY.alpha:g}, no drift, logit sd 1.0; and 0.95 -> 0.50 caught, no spread."
    )
    print(
        "\n| later runs | pooled runs | false alarm, sd 1.0 | …widened by the true spread "
        "| 0.50 drop caught, no spread |"
    )
    print("|---|---|---|---|---|")
    rng = random.Random(seed)
    for later in (6, 20):
        for k in (2, 3, 5):
            alarms, known, caught = 0, 0, 0
            for _ in range(reps):
                pooled = _young_suite(k, later, 1.0, rng)
                reading = Sequencer(pooled, POLICY).spread
                today = {i: _draw_rate(FLAKY_RATES[int(i)], 1.0, rng) for i in pooled}
                alarms += any(
                    [
                        _spread_alarm(p.by_run["p"], reading.of((i, "p")), today[i], rng, family)
                        for i, p in pooled.items()
                    ]
                )
                known += any(
                    [
                        _spread_alarm(p.by_run["p"], 1.0, today[i], rng, family)
                        for i, p in pooled.items()
                    ]
                )
                pooled = _young_suite(k, later, 0.0, rng)
                reading = Sequencer(pooled, POLICY).spread
                caught += _spread_alarm(
                    pooled["0"].by_run["p"], reading.of(("0", "p")), 0.5, rng, family
                )
            print(
                f"| {later} | {k} | {100 * alarms / reps:.1f}% | {100 * known / reps:.1f}% "
                f"| {100 * caught / reps:.1f}% |"
            )
            sys.stdout.flush()


def derive(ms: Sequence[int], target: float = 0.93) -> None:
    sizes = looks()
    print(f"\nPower against 0.95 → 0.50 at e-BH's bar m / {POLICY.alpha}; fewest baseline answers "
          f"reaching {target:.0%}:")  # fmt: skip
    print("\n| comparisons m | baseline answers | power there |")
    print("|---|---|---|")
    nb = 8
    for m in ms:
        bar = m / POLICY.alpha
        while regressed(nb, 0.95, 0.50, bar, sizes) < target:
            nb += 1
        print(f"| {m} | {nb} | {100 * regressed(nb, 0.95, 0.50, bar, sizes):.1f}% |")
        sys.stdout.flush()


def built_pools(rate: float, comparisons: int, policy: Policy = POLICY) -> dict[Counts, float]:
    """The first push's pool of one probe answering at ``rate``: every pool the library's
    building plan (``power.build_size``) can stop at, with its exact probability."""
    nothing = Counts(0, 0)
    frontier, out = {nothing: 1.0}, {}
    while frontier:
        grown: dict[Counts, float] = {}
        for today, weight in frontier.items():
            target = power.build_size(nothing, today, comparisons, policy)
            if target <= today.n:
                out[today] = out.get(today, 0.0) + weight
                continue
            for j, chance in enumerate(power.pmf(target - today.n, rate)):
                q = weight * chance
                if q > 1e-13:
                    key = Counts(today.passes + j, target)
                    grown[key] = grown.get(key, 0.0) + q
        frontier = grown
    return out


def outcome(baseline: Counts, rate: float, bar: float) -> tuple[float, float]:
    """Exact chances that one comparison ends regressed, and "same", today's answers at ``rate``
    looked at in the stages."""
    caught, same = ends(
        [lambda x, n: _crosses(baseline, x, n, bar),
         lambda x, n: seq.futile(baseline, Counts(x, n), POLICY)],
        rate, looks(),
    )  # fmt: skip
    return caught, same


def building(comparisons: int = 100) -> None:
    """The first push's cost and the first pull request's exact power, by pass rate."""
    bar = comparisons / POLICY.alpha
    log_bar, sizes = math.log(bar), looks()
    print(
        f"\nThe first push (building to power {power.BUILD_POWER:g} against a drop of "
        f"{POLICY.margin:g} from the {1 - power.BUILD_LEVEL:.0%} upper bound, m = "
        f"{comparisons}, baseline-samples {POLICY.baseline_samples}), and the first pull "
        "request's exact chance of catching a drop to 0.50 (e-BH's bar for one discovery):"
    )
    print("\n| pass rate | answers built (mean) | largest | caught ignoring 'same' | caught "
          "| 'same' | inconclusive |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for rate in (1.0, 0.97, 0.95, 0.92, 0.9, 0.75):
        pools = built_pools(rate, comparisons)
        cost = sum(w * c.n for c, w in pools.items())
        alone = sum(w * power.chance_of_crossing(c, 0.5, sizes, log_bar)
                    for c, w in pools.items())  # fmt: skip
        ends = [(w, outcome(c, 0.5, bar)) for c, w in pools.items()]
        caught = sum(w * c for w, (c, _) in ends)
        same = sum(w * s for w, (_, s) in ends)
        print(
            f"| {rate} | {cost:.1f} | {max(c.n for c in pools)} | {100 * alone:.1f}% | "
            f"{100 * caught:.1f}% | {100 * same:.1f}% | {100 * (1 - caught - same):.1f}% |"
        )
        sys.stdout.flush()


@cache
def _crosses_widened(baseline: Counts, passes: int, n: int, bar: float, spread: float) -> bool:
    look = Look(baseline, Counts(passes, n), spread=spread, baseline_runs=(baseline.n,))
    return seq.evidence(look, POLICY)[0] >= bar


def _caught(pools: dict[Counts, float], rate: float, bar: float, spread: float) -> float:
    return sum(
        w * ever(lambda x, n, b=c: _crosses_widened(b, x, n, bar, spread), rate, looks())
        for c, w in pools.items()
    )


def first_spread(pairs: int, comparisons: int = 100, seed: int = 20261205) -> None:
    """The first pull request (a pool of one run) with an assumed spread: what widening buys
    under real spread and costs without it. Exact over answers, simulated over run rates."""
    bar = comparisons / POLICY.alpha
    print(f"\nThe first pull request with an assumed logit variance: 0.95 -> 0.50 caught with no "
          f"spread (exact), and one comparison's false alarm at no drift when each run draws its "
          f"rate with logit sd 0.6 or 1.0 ({pairs} pairs of run rates, exact inside; bar "
          f"{bar:g}).")  # fmt: skip
    print("\n| assumed variance | caught, no spread | false alarm p=0.90, sd 0.6 | …sd 1.0 "
          "| p=0.95, sd 0.6 | …sd 1.0 |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for assumed in (0.0, 0.1, 0.25, 0.5):
        cells = [_caught(built_pools(0.95, comparisons), 0.5, bar, assumed)]
        for rate in (0.9, 0.95):
            for sd in (0.6, 1.0):
                rng, total = random.Random(seed), 0.0
                for _ in range(pairs):
                    first, today = _draw_rate(rate, sd, rng), _draw_rate(rate, sd, rng)
                    total += _caught(built_pools(first, comparisons), today, bar, assumed)
                cells.append(total / pairs)
        print(f"| {assumed:g} | " + " | ".join(f"{100 * c:.2f}%" for c in cells) + " |")
        sys.stdout.flush()


def _option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main() -> None:
    started = time.perf_counter()
    print(machine_note())
    quick = "--quick" in sys.argv
    pools = [1, 2, 5, 20, 60] if quick else [1, 2, 3, 5, 10, 20, 30, 50, 100, 200]
    rates = [0.5, 0.7, 0.9, 0.95, 1.0] if quick else [0.5 + 0.05 * i for i in range(11)]
    if "--spread" in sys.argv:
        spread_validity(int(_option("--reps", "40" if quick else "200")))
    elif "--young" not in sys.argv:
        validity(pools, rates)
    if "--building" in sys.argv:
        building()
    if "--first-spread" in sys.argv:
        first_spread(int(_option("--pairs", "20" if quick else "60")))
    if "--young" in sys.argv:
        young_pool(int(_option("--reps", "60" if quick else "300")))
    if "--derive" in sys.argv:
        derive([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000])
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
