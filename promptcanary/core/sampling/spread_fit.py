"""Reading the suite's run-to-run spread from the pooled runs: a likelihood fit that the way
``samples: auto`` sizes its runs cannot bias.

Runs of the pool are sized by their answers: a clean run stops after a few passes, one that
fails grows in stages. A method-of-moments estimate weighs each run by its size, as if sizes were
fixed in advance, and reads a logit variance of 1.0 as about 0.4 (``bench/spread_estimate.py``).
A likelihood does not care how the sizes came about: when the decision to ask more depends only
on answers already seen, the probability of the observed answers is the product of their
Bernoulli terms, whatever the stopping rule (the likelihood principle; Berger & Wolpert 1988).

The model is :mod:`promptcanary.core.sampling.spread`'s: run ``j`` of comparison ``i`` passes at a
rate drawn around the comparison's mean ``m_i`` with intra-run correlation
``rho_i = m_i (1 - m_i) tau2``, here as a beta-binomial (the conjugate form of that spread;
Williams 1982). ``tau2`` is common to the suite; every ``m_i`` is a nuisance. Profiling out a
nuisance per comparison biases a variance down when each comparison has few runs (Neyman &
Scott 1948: two runs leave one degree of freedom each), so each comparison's profile
log-likelihood is adjusted by Cox & Reid (1987): minus half the log of the observed information
for ``m_i``, the correction edgeR uses for a dispersion shared by many genes (McCarthy, Chen &
Smyth 2012).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from promptcanary.core.sampling.spread import Tally, correlation

ONE_RUN_SPREAD = 0.0
"""``tau2`` for a pool of one run, which cannot show a spread: none. Any value above 0 costs the
first pull request power against a real drop: 0.1 takes a 0.95 -> 0.50 drop from 96% caught to
81% and halves the false alarm under a spread of sd 1.0 (exact, ``bench/day_one_validity.py
--first-spread``); see docs/statistics.md."""
MAX_SPREAD = 4.0
"""The largest ``tau2`` fitted (a logit sd of 2): beyond it a pool's runs share nothing."""
_GRID = (0.0, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0, 1.5, 2.0, 3.0, MAX_SPREAD)
"""Where the suite's adjusted likelihood is first looked at, before the best cell is refined."""
_MAX_CORRELATION = 0.99
_STEP = 1e-3
"""Finite-difference step (logit scale) of the observed information."""

Runs = Counter[tuple[int, int]]
"""One comparison's pooled runs as ``(passes, answers) -> how many runs``."""


def _golden(f: Callable[[float], float], lo: float, hi: float, rounds: int) -> tuple[float, float]:
    """The maximiser of ``f`` on ``[lo, hi]`` by golden-section search, and its value."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(rounds):
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = f(d)
    return (c, fc) if fc > fd else (d, fd)


def log_likelihood(runs: Runs, mean_logit: float, spread: float) -> float:
    """Beta-binomial log-likelihood (constants dropped) of one comparison's runs at mean
    ``expit(mean_logit)`` and logit variance ``spread``."""
    m = 1.0 / (1.0 + math.exp(-mean_logit))
    rho = min(_MAX_CORRELATION, correlation(m, spread))
    if rho <= 1e-12:
        log_m, log_rest = math.log(m), math.log1p(-m)
        return sum(k * (s * log_m + (n - s) * log_rest) for (s, n), k in runs.items())
    size = 1.0 / rho - 1.0
    a, b = m * size, (1.0 - m) * size
    lg = math.lgamma
    norm = lg(size) - lg(a) - lg(b)
    return sum(k * (lg(s + a) + lg(n - s + b) - lg(n + size) + norm) for (s, n), k in runs.items())


def adjusted_profile(runs: Runs, spread: float) -> float:
    """One comparison's profile log-likelihood of ``spread`` with the Cox-Reid adjustment:
    the mean maximised out, minus half the log of its observed information (on the rate scale,
    where mean and spread are near orthogonal)."""
    passes = sum(k * s for (s, _), k in runs.items())
    total = sum(k * n for (_, n), k in runs.items())
    centre = math.log(passes / (total - passes))

    def at(x: float) -> float:
        return log_likelihood(runs, x, spread)

    x, top = _golden(at, centre - 4.0, centre + 4.0, 24)
    curvature = -(at(x + _STEP) - 2.0 * top + at(x - _STEP)) / _STEP**2
    m = 1.0 / (1.0 + math.exp(-x))
    # information on the rate scale = curvature on the logit scale / (m (1 - m))^2
    return top - 0.5 * math.log(max(curvature, 1e-12)) + math.log(m * (1.0 - m))


def _informative(runs: Sequence[Tally]) -> Runs | None:
    """A comparison's runs when they can show a spread: two runs with answers, a pass and a fail
    among them (an all-pass pool fits any spread equally well)."""
    used = [(c.passes, c.n) for c in runs if c.n]
    passes, total = sum(s for s, _ in used), sum(n for _, n in used)
    if len(used) < 2 or passes in (0, total):
        return None
    return Counter(used)


def estimate_spread(comparisons: Iterable[Sequence[Tally]], lone: float = ONE_RUN_SPREAD) -> float:
    """The suite's logit-scale run-to-run variance ``tau2`` from its pooled runs (per comparison
    the counts of each run): the maximiser of the summed Cox-Reid adjusted profile likelihoods,
    between 0 and :data:`MAX_SPREAD`; ``lone`` when no comparison holds two runs with answers,
    0 when none shows a pass and a fail."""
    seen = False
    fitted: list[Runs] = []
    for runs in comparisons:
        seen = seen or sum(1 for c in runs if c.n) >= 2
        informative = _informative(runs)
        if informative is not None:
            fitted.append(informative)
    if not seen:
        return min(MAX_SPREAD, max(0.0, lone))
    if not fitted:
        return 0.0

    def suite(spread: float) -> float:
        return sum(adjusted_profile(runs, spread) for runs in fitted)

    values = [suite(t) for t in _GRID]
    best = max(range(len(_GRID)), key=values.__getitem__)
    lo, hi = _GRID[max(0, best - 1)], _GRID[min(len(_GRID) - 1, best + 1)]
    spread, value = _golden(suite, lo, hi, 12)
    return spread if value > values[best] else _GRID[best]
