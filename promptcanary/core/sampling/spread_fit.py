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

Each comparison is widened by the spread read from the *other* comparisons (leave one out): the
spread is the provider's and shows in every flaky prompt, while a prompt whose own runs slide
(a decline promoted push by push) would otherwise read its own drift as spread and excuse it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from promptcanary.core.sampling.spread import Tally, correlation

ONE_RUN_SPREAD = 0.0
"""``tau2`` for a pool of one run, which cannot show a spread: none. Any value above 0 costs the
first pull request power against a real drop: 0.1 takes a 0.95 -> 0.50 drop from 96% caught to
81% and halves the false alarm under a spread of sd 1.0 (exact, ``bench/day_one_validity.py
--first-spread``); see docs/statistics.md."""
MAX_SPREAD = 4.0
"""The largest ``tau2`` fitted (a logit sd of 2): beyond it a pool's runs share nothing."""
_GRID = (
    0.0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0,
    1.2, 1.4, 1.7, 2.0, 2.5, 3.0, 3.5, MAX_SPREAD,
)  # fmt: skip
"""Where each comparison's adjusted likelihood is computed; the maximum of a sum of them is
refined by a parabola through the best point and its neighbours (sums of other comparisons
then cost no new likelihood)."""
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


def _vertex(values: Sequence[float]) -> float:
    """The maximiser of a function known on :data:`_GRID`: the vertex of the parabola through
    the best grid point and its neighbours, kept between them (the best point at an end)."""
    best = max(range(len(_GRID)), key=values.__getitem__)
    if best in (0, len(_GRID) - 1):
        return _GRID[best]
    (x0, x1, x2), (y0, y1, y2) = _GRID[best - 1 : best + 2], values[best - 1 : best + 2]
    slope01, slope12 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
    curve = (slope12 - slope01) / (x2 - x0)
    if curve >= 0.0:
        return x1
    vertex = (x0 + x1) / 2.0 - slope01 / (2.0 * curve)
    return min(x2, max(x0, vertex))


@dataclass(frozen=True)
class SpreadReading:
    """The pool's run-to-run spread (logit variance): ``suite`` from every comparison, and per
    comparison that shows one (``others``) the spread read without it."""

    suite: float
    others: Mapping[Hashable, float] = field(default_factory=dict)

    def of(self, key: Hashable) -> float:
        """The spread that widens comparison ``key``: read from the other comparisons."""
        return self.others.get(key, self.suite)


def read_spread(
    comparisons: Mapping[Hashable, Sequence[Tally]], lone: float = ONE_RUN_SPREAD
) -> SpreadReading:
    """The spread of the suite's pooled runs (per comparison the counts of each run): the
    maximiser of the summed Cox-Reid adjusted profile likelihoods on 0 to :data:`MAX_SPREAD`,
    for the suite and for each informative comparison without its own term; ``lone`` when no
    comparison holds two runs with answers, 0 when none (or no other) shows a pass and a fail."""
    if not any(sum(1 for c in runs if c.n) >= 2 for runs in comparisons.values()):
        return SpreadReading(min(MAX_SPREAD, max(0.0, lone)))
    profiles: dict[Hashable, list[float]] = {}
    for key, runs in comparisons.items():
        informative = _informative(runs)
        if informative is not None:
            profiles[key] = [adjusted_profile(informative, t) for t in _GRID]
    if not profiles:
        return SpreadReading(0.0)
    total = [sum(column) for column in zip(*profiles.values(), strict=True)]
    others = {
        key: _vertex([t - own for t, own in zip(total, mine, strict=True)])
        if len(profiles) > 1 else 0.0
        for key, mine in profiles.items()
    }  # fmt: skip
    return SpreadReading(_vertex(total), others)


def estimate_spread(comparisons: Iterable[Sequence[Tally]], lone: float = ONE_RUN_SPREAD) -> float:
    """The suite's logit-scale run-to-run variance ``tau2`` from every comparison's pooled runs
    (:func:`read_spread`'s ``suite``)."""
    return read_spread(dict(enumerate(comparisons)), lone).suite
