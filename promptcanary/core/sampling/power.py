"""How large a baseline must be: the exact power of today's test against it, and how far to build.

A run that may become the baseline builds the pool of a prompt until the pool can show a drop of
``margin``. "Can show" is a probability computed exactly, not a rule of thumb: the chance that
today's answers, asked in the stages a pull request uses (3, 4, 5, 7, … ``max_samples``), make
the regression e-value reach e-BH's bar for one discovery (``m / alpha``) at some stage, when
today's pass rate is ``margin`` below the baseline's 95% upper confidence bound
(:data:`BUILD_LEVEL`). Building stops once that chance reaches :data:`BUILD_POWER`.

Why the upper bound rather than the observed rate: building stops the first time the answers
look good enough, so the observed rate of a stopped pool leans high, and a drop from it is
larger than the drop the model will really show; a power of 90% computed at the observed rate
was 80-86% in fact for a probe passing 95% of the time (``bench/day_one_validity.py``).

Pure functions of counts; the results are cached (the same counts recur across prompts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from promptcanary.core.sampling.sequential import (
    MAX_SAMPLES_CAP,
    Counts,
    Policy,
    futile,
    log_e_worse,
    upper_rate,
)

BUILD_LEVEL = 0.05
"""The drop building must be able to show starts at the baseline's upper confidence bound at this
level (Clopper-Pearson), not at its observed rate."""
BUILD_POWER = 0.97
"""The exact chance of catching that drop a built pool must give, ignoring "same": a tested
"same" ends about 3% of drops to 0.50 after five straight passes (within its claim: the drop is
under the margin), so 0.97 here is about 93% caught for a probe at 0.95 (``bench/day_one_validity.py
--building``) at a first push of about 28.6 answers per prompt on the bench suite."""
FIRST_BUILD = 10
"""Answers in a building prompt's first stage: enough to read a rate from before sizing the rest
(fewer than any pool that shows a drop of 0.5 at one comparison, so none is wasted)."""


def stage_sizes(policy: Policy) -> tuple[int, ...]:
    """The answers a comparison has at each look when it stays undecided to ``max_samples``."""
    sizes = [policy.min_samples]
    while sizes[-1] < policy.max_samples:
        sizes.append(policy.next_size(sizes[-1]))
    return tuple(sizes)


def answers_to_settle(baseline: Counts, policy: Policy) -> int:
    """The answers after which a comparison whose answers all pass is "same" against
    ``baseline``: the first stage at which :func:`futile` rules out a drop of ``margin``
    (``max_samples`` when none does)."""
    return next(
        (n for n in stage_sizes(policy) if futile(baseline, Counts(n, n), policy)),
        policy.max_samples,
    )


def pmf(n: int, p: float) -> list[float]:
    """The binomial distribution of passes in ``n`` answers at rate ``p``."""
    if p <= 0.0 or p >= 1.0:
        out = [0.0] * (n + 1)
        out[n if p >= 1.0 else 0] = 1.0
        return out
    log_p, log_q = math.log(p), math.log1p(-p)
    return [
        math.exp(
            math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * log_p + (n - k) * log_q
        )
        for k in range(n + 1)
    ]  # fmt: skip


def _crossing_passes(baseline: Counts, n: int, log_bar: float) -> int:
    """The most passes in ``n`` answers at which the e-value still reaches the bar (-1: none).
    Wherever the e-value is at least 1 it falls as today's passes rise (tested), so the crossing
    passes are ``0 … returned``: a bisection finds the end."""
    low, high = -1, n + 1  # reaches the bar at low (or none yet), not at high
    while high - low > 1:
        mid = (low + high) // 2
        if log_e_worse(baseline, Counts(mid, n)) >= log_bar:
            low = mid
        else:
            high = mid
    return low


def grow(dist: Sequence[float], more: int, rate: float) -> list[float]:
    """The distribution of passes (index: passes) after ``more`` answers at ``rate``, from
    ``dist`` (the paths already stopped carry weight 0)."""
    step = pmf(more, rate)
    out = [0.0] * (len(dist) + more)
    for x, w in enumerate(dist):
        if w > 1e-15:
            for j, q in enumerate(step):
                out[x + j] += w * q
    return out


def chance_of_crossing(
    baseline: Counts, rate: float, sizes: Sequence[int], log_bar: float
) -> float:
    """The exact chance that today's answers at pass rate ``rate``, looked at after each of
    ``sizes`` answers, make the regression e-value against ``baseline`` reach ``exp(log_bar)``."""
    dist, n, hit = [1.0], 0, 0.0
    for size in sizes:
        new = grow(dist, size - n, rate)
        top = _crossing_passes(baseline, size, log_bar)
        hit += math.fsum(new[: top + 1])
        new[: top + 1] = [0.0] * (top + 1)
        dist, n = new, size
    return min(1.0, hit)


@lru_cache(maxsize=65536)
def build_power(baseline: Counts, comparisons: int, policy: Policy) -> float:
    """The chance that a pull request catches a drop of ``margin`` from the baseline's upper
    bound (:data:`BUILD_LEVEL`) at e-BH's bar for one discovery among ``comparisons``; 1 when
    no such drop is possible (the bound is below ``margin``)."""
    if baseline.n == 0:
        return 0.0
    rate = upper_rate(baseline, BUILD_LEVEL) - policy.margin
    if rate <= 0.0:
        return 1.0
    log_bar = math.log(max(1, comparisons) / policy.alpha)
    return chance_of_crossing(baseline, rate, stage_sizes(policy), log_bar)


def shows_drop(baseline: Counts, comparisons: int, policy: Policy) -> bool:
    """Whether a pool of ``baseline`` answers is large enough: :func:`build_power` reaches
    :data:`BUILD_POWER`."""
    return build_power(baseline, comparisons, policy) >= BUILD_POWER


def _at_rate(counts: Counts, n: int) -> Counts:
    rate = counts.passes / counts.n if counts.n else 1.0
    return Counts(min(n, round(rate * n)), n)


def answers_to_detect(baseline: Counts, comparisons: int, policy: Policy) -> int | None:
    """Baseline answers to add (at the same pass rate) before :func:`shows_drop` holds; ``None``
    beyond ``MAX_SAMPLES_CAP`` more."""
    if shows_drop(baseline, comparisons, policy):
        return 0
    extra = 1
    while extra <= MAX_SAMPLES_CAP:
        if shows_drop(_at_rate(baseline, baseline.n + extra), comparisons, policy):
            return extra
        extra += max(1, extra // 4)
    return None


def build_size(pooled: Counts, today: Counts, comparisons: int, policy: Policy) -> int:
    """Answers today for one probe of a prompt whose pool is being built: ``FIRST_BUILD`` first,
    then as many as its rate so far says :func:`shows_drop` needs (at least an eighth more, so a
    prompt takes few stages), never past ``baseline_samples`` pooled and today together.
    ``today.n`` or fewer: building is done."""
    room = max(0, policy.baseline_samples - pooled.n)
    both = pooled + today
    if both.n and shows_drop(both, comparisons, policy):
        return today.n
    if today.n < FIRST_BUILD:
        return min(room, FIRST_BUILD)
    least = today.n + max(1, math.ceil(today.n / 8))
    target = today.n
    while target < room:
        target += 1
        if target >= least and shows_drop(_at_rate(both, pooled.n + target), comparisons, policy):
            break
    return min(room, target)
