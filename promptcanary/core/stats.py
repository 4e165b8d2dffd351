"""Statistics for repeated samples: one-sided tests, intervals, false-discovery-rate control.

Pure Python on purpose (``math`` only, no SciPy): SciPy would add tens of megabytes to the action's
container for a handful of formulas. Everything here is deterministic.

What :func:`compare` uses, and why:

* **Pass/fail** — Fisher's exact test on the 2×2 table, one-sided in each direction, from the
  hypergeometric distribution (``math.comb``). It is exact *conditionally on the margins* (total
  passes), which is what makes the untestable-hypothesis filter below valid. Lancaster's mid-p
  (``mid_p=True``) and Boschloo's unconditional test were weighed: for 10 vs 10 samples and a
  0.95 → 0.50 drop both raise single-test power from 0.63 to 0.72, and in ``bench/drift_signal.py``
  mid-p lifts detection at samples = 10 from 26% to 43% of runs. But mid-p is not a valid p-value
  conditionally on the margins (it can reject with up to twice the nominal probability), so with
  the filter its false-alarm control is only empirical: 5.2% of runs on the bench's all-flaky
  stress suite, against 2.0% for Fisher. Boschloo's minimum attainable p does not depend on the
  margins, so it would forfeit the filter altogether. Fisher stays the default: a merge gate must
  keep its false-alarm promise on every suite, not on average.
* **Scores** — the Mann–Whitney U test (normal approximation with tie and continuity correction),
  used only when scores carry more than the pass flag. The two tests are combined by Bonferroni
  over the component tests that can reach a p-value below 1 (given the pooled data, which is fixed
  under the permutation null, so this choice does not look at the labels).
* **Intervals** — Wilson score interval per proportion, Newcombe's hybrid score interval for the
  difference of pass rates, Welch's t interval for the difference of mean scores.
* **Latency, tokens, cost** — a percentile bootstrap stratified by prompt
  (:func:`bootstrap_change`): answers are resampled within each prompt, so the prompt set stays
  fixed and only the model's sampling varies. Welch's interval would fit a mean of tokens but
  not a 95th percentile of latency nor a percent change (a ratio), and latencies are too skewed
  for a t interval at ten samples; one method for all three keeps the reports consistent. The
  resampling draws from a seeded generator, so a report is reproducible.
* **Multiplicity** — Benjamini–Hochberg over the *testable* hypotheses only (Tarone 1990, Gilbert
  2005): a hypothesis whose smallest attainable p-value (given its margins) is above ``alpha / K``
  can never be rejected and is left out of the family, so probes that always pass do not dilute it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

Interval = tuple[float, float]

DEFAULT_ALPHA = 0.05
"""The false-discovery rate of a suite's regressions unless ``alpha`` says otherwise."""


@dataclass(frozen=True)
class OneSided:
    """One-sided p-values of a two-sample test and the smallest values the data could reach.

    ``worse`` means the current sample is lower than the baseline; ``better`` the reverse. The
    minimum attainable p-values depend only on what is fixed under the null (margins, pooled
    values), never on which sample an observation belongs to.
    """

    p_worse: float
    p_better: float
    min_p_worse: float
    min_p_better: float


@dataclass(frozen=True)
class SampleTest:
    """Everything :func:`compare` needs for one (prompt, probe) with repeated samples a side."""

    p_worse: float
    p_better: float
    min_p_worse: float
    min_p_better: float
    pass_rate_ci: Interval
    """Interval of (current − baseline) pass rate."""
    score_ci: Interval
    """Interval of (current − baseline) mean score."""
    method: str


# --------------------------------------------------------------------------------------------
# distributions


def normal_cdf(z: float) -> float:
    # erfc keeps precision in the far lower tail, where 1 - erf would round to 0.
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Inverse of :func:`normal_cdf` by bisection (plenty fast for a handful of calls)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"normal_quantile needs 0 < p < 1, got {p}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if normal_cdf(mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    # Modified Lentz evaluation of the continued fraction for the incomplete beta function.
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast only on this side of the mean; use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t cumulative distribution function (df may be fractional, as in Welch's test)."""
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """Inverse of :func:`t_cdf` by bisection; cached because Welch dfs repeat across probes."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile needs 0 < p < 1, got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


# --------------------------------------------------------------------------------------------
# tests


@lru_cache(maxsize=4096)
def fisher_one_sided(
    baseline_passes: int, baseline_n: int, current_passes: int, current_n: int, mid_p: bool = False
) -> OneSided:
    """One-sided Fisher exact test on the 2×2 pass/fail table, in both directions.

    Conditionally on the total number of passes, the baseline's passes X are hypergeometric; the
    current run is *worse* when X is large. ``mid_p`` gives Lancaster's mid-p (half the
    probability of the observed table), which is not conditionally valid; see the module notes.
    """
    if not (0 <= baseline_passes <= baseline_n and 0 <= current_passes <= current_n):
        raise ValueError("passes must lie between 0 and the number of samples")
    if baseline_n == 0 or current_n == 0:
        return OneSided(1.0, 1.0, 1.0, 1.0)
    total, passes = baseline_n + current_n, baseline_passes + current_passes
    lo, hi = max(0, passes - current_n), min(passes, baseline_n)
    denominator = math.comb(total, baseline_n)
    probs = {
        k: math.comb(passes, k) * math.comb(total - passes, baseline_n - k) / denominator
        for k in range(lo, hi + 1)
    }
    x = baseline_passes
    upper = sum(p for k, p in probs.items() if k >= x)
    lower = sum(p for k, p in probs.items() if k <= x)
    half = 0.5 if mid_p else 0.0
    return OneSided(
        p_worse=min(1.0, upper - half * probs[x]),
        p_better=min(1.0, lower - half * probs[x]),
        # One-point margins (lo == hi) leave nothing to test: the p-value is 1 either way.
        min_p_worse=1.0 if lo == hi else min(1.0, probs[hi] * (1.0 - half)),
        min_p_better=1.0 if lo == hi else min(1.0, probs[lo] * (1.0 - half)),
    )


def _tie_groups(ordered: Sequence[float]) -> list[int]:
    """Sizes of the runs of equal values in an ascending sequence."""
    sizes: list[int] = []
    for i, v in enumerate(ordered):
        if i and v == ordered[i - 1]:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes


def mann_whitney_one_sided(baseline: Sequence[float], current: Sequence[float]) -> OneSided:
    """One-sided Mann–Whitney U test, normal approximation with tie and continuity correction.

    U counts the (current, baseline) pairs where the current value is larger (ties count half);
    a small U means the current run is *worse*. All-tied data carry no evidence: every p is 1.
    """
    nb, nc = len(baseline), len(current)
    if nb == 0 or nc == 0:
        return OneSided(1.0, 1.0, 1.0, 1.0)
    n = nb + nc
    pooled = sorted([*baseline, *current])
    groups = _tie_groups(pooled)
    ranks: list[float] = []  # midranks, aligned with ``pooled``
    for size in groups:
        ranks.extend([len(ranks) + (size + 1) / 2.0] * size)
    rank_of = dict(zip(pooled, ranks, strict=True))  # equal values share one midrank
    offset = nc * (nc + 1) / 2.0
    u = sum(rank_of[v] for v in current) - offset
    tie_sum = sum(t**3 - t for t in groups)
    variance = nb * nc / 12.0 * ((n + 1) - tie_sum / (n * (n - 1)))
    if variance <= 0.0:
        return OneSided(1.0, 1.0, 1.0, 1.0)
    mean, sd = nb * nc / 2.0, math.sqrt(variance)

    def lower_tail(u_value: float) -> float:
        return min(1.0, normal_cdf((u_value - mean + 0.5) / sd))

    def upper_tail(u_value: float) -> float:
        return min(1.0, normal_cdf(-(u_value - mean - 0.5) / sd))

    # Extremes of U over every relabelling of the pooled values: current takes the lowest (or
    # highest) nc positions.
    u_min = sum(ranks[:nc]) - offset
    u_max = sum(ranks[n - nc :]) - offset
    return OneSided(lower_tail(u), upper_tail(u), lower_tail(u_min), upper_tail(u_max))


def _bonferroni(parts: Sequence[OneSided]) -> OneSided:
    """Combine one-sided tests per direction by Bonferroni over the parts able to reach p < 1."""

    def combine(ps: list[tuple[float, float]]) -> tuple[float, float]:
        live = [(p, m) for p, m in ps if m < 1.0]
        if not live:
            return 1.0, 1.0
        k = len(live)
        return min(1.0, k * min(p for p, _ in live)), min(1.0, k * min(m for _, m in live))

    worse = combine([(t.p_worse, t.min_p_worse) for t in parts])
    better = combine([(t.p_better, t.min_p_better) for t in parts])
    return OneSided(worse[0], better[0], worse[1], better[1])


# --------------------------------------------------------------------------------------------
# intervals


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return _z_cached(confidence)


@lru_cache(maxsize=16)
def _z_cached(confidence: float) -> float:
    return normal_quantile(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion; with no trials, the whole of [0, 1]."""
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and n, got {successes} of {n}")
    z = _z(confidence)
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe_interval(
    successes1: int, n1: int, successes2: int, n2: int, confidence: float = 0.95
) -> Interval:
    """Newcombe's hybrid score interval (his method 10) for p1 − p2 from two Wilson intervals."""
    l1, u1 = wilson_interval(successes1, n1, confidence)
    l2, u2 = wilson_interval(successes2, n2, confidence)
    p1 = successes1 / n1 if n1 else 0.5
    p2 = successes2 / n2 if n2 else 0.5
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def welch_interval(
    sample1: Sequence[float], sample2: Sequence[float], confidence: float = 0.95
) -> Interval:
    """Welch's t interval for mean(sample1) − mean(sample2).

    Two samples without any spread give the degenerate interval (d, d): the t interval has nothing
    to say about variability it never observed.
    """
    n1, n2 = len(sample1), len(sample2)
    if n1 < 2 or n2 < 2:
        raise ValueError(f"welch_interval needs at least 2 values a side, got {n1} and {n2}")
    m1, m2 = sum(sample1) / n1, sum(sample2) / n2
    v1 = sum((x - m1) ** 2 for x in sample1) / (n1 - 1) / n1
    v2 = sum((x - m2) ** 2 for x in sample2) / (n2 - 1) / n2
    d = m1 - m2
    se2 = v1 + v2
    if se2 <= 0.0:
        return (d, d)
    df = se2 * se2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
    _z(confidence)  # validates the level
    half = t_quantile(0.5 + confidence / 2.0, round(df, 9)) * math.sqrt(se2)
    return (d - half, d + half)


# --------------------------------------------------------------------------------------------
# multiplicity


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values in input order (monotone in p, capped at 1)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def testable(min_pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Tarone's selection of the hypotheses worth testing, as used by Gilbert (2005) with BH.

    K is the smallest k such that at most k hypotheses can reach a p-value of alpha / k; the
    hypotheses that can reach alpha / K form the family. The choice looks only at minimum
    attainable p-values, which are fixed by the margins, so the BH guarantee carries over.
    """
    m = len(min_pvalues)
    for k in range(1, m + 1):
        chosen = [p <= alpha / k for p in min_pvalues]
        if sum(chosen) <= k:
            return chosen
    return [False] * m


# --------------------------------------------------------------------------------------------
# the entry point of compare()


def _is_pass_indicator(scores: Sequence[float], passes: Sequence[bool]) -> bool:
    return all(s == (1.0 if p else 0.0) for s, p in zip(scores, passes, strict=True))


def test_samples(
    baseline_scores: Sequence[float],
    baseline_passes: Sequence[bool],
    current_scores: Sequence[float],
    current_passes: Sequence[bool],
    *,
    confidence: float = 0.95,
    mid_p: bool = False,
) -> SampleTest:
    """Test whether the current samples of one (prompt, probe) are worse or better than baseline.

    Fisher's test alone when every score is just its pass flag; otherwise Fisher and Mann–Whitney
    combined by Bonferroni. Intervals are of (current − baseline).
    """
    if len(baseline_scores) != len(baseline_passes) or len(current_scores) != len(current_passes):
        raise ValueError("every sample needs both a score and a pass flag")
    nb, nc = len(baseline_scores), len(current_scores)
    xb, xc = sum(map(bool, baseline_passes)), sum(map(bool, current_passes))
    fisher = fisher_one_sided(xb, nb, xc, nc, mid_p)
    if _is_pass_indicator(baseline_scores, baseline_passes) and _is_pass_indicator(
        current_scores, current_passes
    ):
        combined, method = fisher, "fisher"
    else:
        rank = mann_whitney_one_sided(baseline_scores, current_scores)
        combined, method = _bonferroni([fisher, rank]), "fisher+mann-whitney"
    if nb >= 2 and nc >= 2:
        lo, hi = welch_interval(current_scores, baseline_scores, confidence)
        score_ci = (max(-1.0, lo), min(1.0, hi))
    else:
        score_ci = (-1.0, 1.0)
    return SampleTest(
        p_worse=combined.p_worse,
        p_better=combined.p_better,
        min_p_worse=combined.min_p_worse,
        min_p_better=combined.min_p_better,
        pass_rate_ci=newcombe_interval(xc, nc, xb, nb, confidence),
        score_ci=score_ci,
        method=method,
    )


# --------------------------------------------------------------------------------------------
# latency, tokens, cost: location statistics and their change

BOOTSTRAP_RESAMPLES = 1000
Strata = Sequence[Sequence[float]]
"""Values grouped by prompt: one inner sequence per prompt, one value per sample."""


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile by linear interpolation between order statistics (NumPy's default)."""
    if not values:
        raise ValueError("quantile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile needs 0 <= q <= 1, got {q}")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def percent_change(baseline: float, current: float) -> float | None:
    """``100 * (current / baseline - 1)``; None when the baseline is 0 (no finite change)."""
    return None if baseline == 0 else 100.0 * (current / baseline - 1.0)


def bootstrap_change(
    baseline: Strata,
    current: Strata,
    statistic: Callable[[Strata], float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval | None:
    """Percentile interval of the percent change of ``statistic`` from baseline to current.

    Resamples each prompt's samples with replacement, on each side. None when no prompt has two
    samples on both sides (nothing to resample: one answer a prompt says nothing about spread)
    or when a resampled baseline statistic is 0.
    """
    if not any(len(b) > 1 for b in baseline) or not any(len(c) > 1 for c in current):
        return None
    _z(confidence)  # validates the level
    rng = random.Random(seed)

    def resample(strata: Strata) -> list[list[float]]:
        return [rng.choices(stratum, k=len(stratum)) if stratum else [] for stratum in strata]

    changes: list[float] = []
    for _ in range(resamples):
        change = percent_change(statistic(resample(baseline)), statistic(resample(current)))
        if change is None:
            return None
        changes.append(change)
    tail = (1.0 - confidence) / 2.0
    return (quantile(changes, tail), quantile(changes, 1.0 - tail))
