"""The fewest answers a tested "same" can take when nothing drifted: floors no rule goes below.

"Same" rules out a drop of the margin (0.5) with an error of at most 5%, whatever the baseline's
rate. Two floors of the expected answers of one comparison at no drift (today's rate still the
baseline's ``p``), over every rule, randomised ones included; a comparison that never settles
ends at ``max-samples``, as the runner's do.

1. **The baseline's rate known exactly.** The least expected answers of a rule whose "same" errs
   at most 5% after a drop to ``p - 0.5`` is a linear programme over stopping rules: its
   Lagrangian (answers plus a price on the error) is solved exactly by backward induction over
   every (answers, passes) state, and the two rules around 5% are mixed to err exactly 5%. In
   the runner's stages (3, 4, 5, 7, 9, 12, ... ``max-samples``) and with a look after every
   answer (the least any schedule can do).
2. **The baseline estimated from the first push's pool** (``day_one_validity.built_pools``, the
   library's building plan). A rule that must hold its error at every baseline rate holds it in
   particular against a baseline a little better than ``p``, ``p + d``, dropping to
   ``p + d - 0.5``: a pool cannot tell ``p`` from ``p + d`` for small ``d``, and today's answers
   then have a smaller drop to show. By weak duality, for every price ``l`` the sum over pools of
   the cheapest rule's value at the price ``l`` times the pool's likelihood ratio, less ``l``
   times 5%, is a lower bound (the value is concave in the price, so the chord between two
   computed prices bounds it from below); the best ``l`` and the worst ``d`` give the floor. In
   the runner's stages.

Beside them the shipped rule's expected answers against the first push's pool, exact. Then the
two suites ``bench/day_one.py`` measures: the bench suite (85 probes that always pass, ten at
0.90-0.97, five continuous scores whose pass flags pass at their rates) and the moderate suite
(99 probes at 0.60-0.90, one at 0.95; the rates here in steps of 0.01). For a probe that always
passes four passes after a drop to 0.50 come up 6.25% of the time, so a rule that may not toss a
coin needs five; the floor's 4.40 mixes stopping at four (60% of the time) with five.
``--pool-sizes 57,114,228,456``: the moderate suite's floor against pools of those sizes
(minutes). Prints, never asserts; about 90 s.
"""

from __future__ import annotations

import bisect
import math
import sys
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note
from bench._drift_model import FLAKY_RATES, SCORE_PASS, SCORE_SHAPES
from bench.day_one_validity import built_pools, walk
from promptcanary.core.sampling import power
from promptcanary.core.sampling import sequential as seq
from promptcanary.core.sampling.sequential import Counts, Policy

POLICY = Policy()
ERROR = 0.05
"""The error "same" is held to after a drop of the margin."""
STAGES = tuple(power.stage_sizes(POLICY))
EVERY = tuple(range(1, POLICY.max_samples + 1))
COMPARISONS = 100
"""The suites' size: the first push builds its pools for e-BH over this many."""
PRICES = tuple(10 ** (-2 + 8 * i / 159) for i in range(160))
"""The prices on the error at which the cheapest rule is computed for the pooled floor."""
DUAL_PRICES = tuple(10 ** (-2 + 8 * i / 199) for i in range(200))
"""The prices of the dual the pooled floor maximises over."""
SHIFTS = tuple(0.01 * i for i in range(16))
"""How much better than ``p`` the baseline of the pooled floor's alternative may be."""
LOG_BAR = math.log(COMPARISONS / POLICY.alpha)
"""e-BH's bar for one discovery among ``COMPARISONS``, as a log."""


def _policy(rate: float, dropped: float, price: float, sizes: Sequence[int]) -> tuple[float, float]:
    """The rule that minimises expected answers at ``rate`` plus ``price`` times the chance of
    "same" at ``dropped`` (backward induction over every state): its two terms.

    At a look with ``x`` passes of ``n``, stopping for "same" costs ``price`` times the
    likelihood ratio of ``dropped`` against ``rate`` there (the chance of the same path after
    the drop, per unit chance at no drift); going on costs the answers of the next stage and
    what follows. At ``max-samples`` the comparison ends undecided at no further cost."""
    per_pass = math.log(dropped / rate)
    per_fail = math.log((1 - dropped) / (1 - rate)) if rate < 1.0 else math.inf

    def ratio(n: int, x: int) -> float:  # a fail cannot come at no drift when rate is 1
        return math.exp(x * per_pass + (n - x) * per_fail) if x < n else math.exp(n * per_pass)

    stop: list[list[bool]] = [[False] * (n + 1) for n in sizes]
    value = [0.0] * (sizes[-1] + 1)  # per unit chance at no drift, at the last look
    for k in range(len(sizes) - 2, -1, -1):
        step = sizes[k + 1] - sizes[k]
        grow = power.pmf(step, rate)
        states = range(sizes[k] + 1)
        later = [step + sum(q * value[x + j] for j, q in enumerate(grow)) for x in states]
        stop[k] = [price * ratio(sizes[k], x) < later[x] for x in states]
        value = [min(price * ratio(sizes[k], x), later[x]) for x in states]
    return _follow((rate, dropped), sizes, stop)


def _follow(
    rates: tuple[float, float], sizes: Sequence[int], stop: list[list[bool]]
) -> tuple[float, float]:
    """Expected answers at the first rate, and the chance of "same" at the second, under
    ``stop``."""
    look = {n: k for k, n in enumerate(sizes)}
    stops = [lambda x, n: stop[look[n]][x]]
    answers = walk(stops, rates[0], sizes)[1]
    return answers, walk(stops, rates[1], sizes)[0][0]


@cache
def fewest(rate: float, sizes: tuple[int, ...]) -> float:
    """Floor 1: the baseline rate known; the Lagrangian's two rules around ``ERROR``, mixed (a
    randomised rule) to err exactly ``ERROR``."""
    dropped = rate - POLICY.margin
    low, high = 1e-3, 1e6  # prices: a high price stops less often for "same"
    for _ in range(60):
        mid = math.sqrt(low * high)
        if _policy(rate, dropped, mid, sizes)[1] > ERROR:
            low = mid
        else:
            high = mid
    cheap, err_cheap = _policy(rate, dropped, low, sizes)
    dear, err_dear = _policy(rate, dropped, high, sizes)
    if err_cheap <= ERROR or err_cheap == err_dear:
        return dear if err_cheap > ERROR else cheap
    share = (err_cheap - ERROR) / (err_cheap - err_dear)  # of the dear rule in the mixture
    return share * dear + (1 - share) * cheap


@cache
def _values(rate: float, dropped: float) -> list[float]:
    """The cheapest rule's value (answers plus price times error) at each of ``PRICES``."""
    out = []
    for price in PRICES:
        answers, error = _policy(rate, dropped, price, STAGES)
        out.append(answers + price * error)
    return out


def _below(values: Sequence[float], price: float) -> float:
    """A lower bound of the (concave, increasing) value at ``price``: the chord of the grid."""
    if price >= PRICES[-1]:
        return values[-1]
    i = bisect.bisect_right(PRICES, price)
    if i == 0:
        return STAGES[0]  # at price 0 the value is the first look's answers
    t = (price - PRICES[i - 1]) / (PRICES[i] - PRICES[i - 1])
    return values[i - 1] + t * (values[i] - values[i - 1])


@cache
def _pools(rate: float, size: int | None) -> dict[Counts, float]:
    """The first push's pool as the library builds it (``size`` None), or ``size`` answers."""
    if size is None:
        return built_pools(rate, COMPARISONS)
    return {Counts(x, size): w for x, w in enumerate(power.pmf(size, rate)) if w > 1e-15}


@cache
def fewest_pooled(rate: float, size: int | None = None) -> float:
    """Floor 2: the baseline estimated from a pool (:func:`_pools`), in the runner's stages."""
    base = _pools(rate, size)
    best = 0.0
    for shift in SHIFTS:
        better, dropped = rate + shift, rate + shift - POLICY.margin
        if better > 1.0 + 1e-9:
            break
        values = _values(rate, dropped)
        if shift == 0.0:
            weights = [(1.0, 1.0)]
        else:
            alt = _pools(min(better, 1.0), size)
            weights = [(w, alt.get(pool, 0.0) / w) for pool, w in base.items()]
        for price in DUAL_PRICES:
            dual = sum(w * _below(values, price * lr) for w, lr in weights) - ERROR * price
            best = max(best, dual)
    # Knowing the rate, a rule could draw a pool itself: the known floor holds here too.
    return max(best, fewest(rate, STAGES))


def _settles(pool: Counts, passes: int, n: int) -> bool:
    today = Counts(passes, n)
    return seq.log_e_worse(pool, today) >= LOG_BAR or seq.futile(pool, today, POLICY)


@cache
def shipped(rate: float) -> float:
    """The shipped rule's expected answers at no drift against the first push's pool (exact):
    regressed at e-BH's bar for one discovery, or "same"; ``max-samples`` otherwise."""
    return sum(
        weight * walk([lambda x, n, pool=pool: _settles(pool, x, n)], rate, STAGES)[1]
        for pool, weight in _pools(rate, None).items()
    )


def score_rate(mean: float, sd: float) -> float:
    """Pass rate of a score ~ Normal(mean, sd) rounded to 0.01, passing at ``SCORE_PASS``."""
    return 1.0 - NormalDist(mean, sd).cdf(SCORE_PASS - 0.005)


def suites() -> dict[str, list[tuple[float, float]]]:
    """Each suite's pass rates with their share of its comparisons."""
    moderate = [(round(0.60 + 0.01 * i, 2), 0.99 / 31) for i in range(31)]
    flaky = [*FLAKY_RATES, *(round(score_rate(m, s), 4) for m, s in SCORE_SHAPES)]
    return {
        "bench suite": [(1.0, 0.85)] + [(r, 0.01) for r in flaky],
        "moderate": [(0.95, 0.01), *moderate],
    }


def main() -> None:
    started = time.perf_counter()
    print(machine_note())
    print(f"\nThe fewest answers of a tested 'same' at no drift, any rule (randomised ones "
          f"included) whose 'same' errs at most {ERROR:.0%} after a drop of "
          f"{POLICY.margin:g}: the baseline rate p known (runner's stages; a look after every "
          f"answer), or estimated from the first push's pool (runner's stages); and the "
          f"shipped rule against that pool (exact):")  # fmt: skip
    header = "known: stages | known: every answer | first push's pool: stages | shipped rule"
    print(f"\n| pass rate | {header} |")
    print("|---|---|---|---|---|")
    for rate in (0.60, 0.70, 0.80, 0.90, 0.95, 0.97, 1.0):
        cells = (fewest(rate, STAGES), fewest(rate, EVERY), fewest_pooled(rate), shipped(rate))
        print(f"| {rate:.2f} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
        sys.stdout.flush()
    print(f"\n| suite | {header} |")
    print("|---|---|---|---|---|")
    for name, rates in suites().items():
        cells = (
            sum(w * fewest(r, STAGES) for r, w in rates),
            sum(w * fewest(r, EVERY) for r, w in rates),
            sum(w * fewest_pooled(r) for r, w in rates),
            sum(w * shipped(r) for r, w in rates),
        )
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
        sys.stdout.flush()
    if "--pool-sizes" in sys.argv:
        sizes = [int(n) for n in sys.argv[sys.argv.index("--pool-sizes") + 1].split(",")]
        print("\nThe moderate suite's floor with a pool of N answers at each probe's rate:")
        print("\n| pooled answers | floor, runner's stages |")
        print("|---|---|")
        for size in sizes:
            floor = sum(w * fewest_pooled(r, size) for r, w in suites()["moderate"])
            print(f"| {size} | {floor:.2f} |")
            sys.stdout.flush()
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
