"""Drift in meaning: today's answers against the pooled baseline answers of a prompt, in embedding
space. Pure functions of unit vectors; no I/O. ``docs/statistics.md`` ("Meaning") explains them.

* **The size of a change** is the centroid shift ``½‖μ_current − μ_baseline‖²`` of the unit
  answer vectors: the mean cosine distance between an answer of one side and one of the other,
  minus the mean cosine distance within each side (for unit vectors ``1 − cos(a, b) =
  ½‖a − b‖²``). It is 0 when both sides say the same things in the same proportions, whatever
  the wording; a prompt whose answers all moved to another meaning shifts by about the cosine
  distance between the two meanings. :func:`shift` is its unbiased estimate with a jackknife
  standard error.
* **The test** is a two-sample test by betting (Shekhar & Ramdas 2023): today's answer ``t`` is
  paired with a baseline answer ``X_t`` drawn without replacement from the pool (in a seeded order
  fixed before the answers are seen), and a bettor stakes on ``tanh(⟨w_t, Y_t − X_t⟩ / s_t)``, where
  the witness direction ``w_t`` points from the baseline's centroid (a held-out third of the pool
  and the past pairs) to the centroid of today's earlier answers. When both sides come from one
  distribution ``Y_t`` and ``X_t`` are exchangeable given the past, so the stake's mean is 0 and
  the wealth (an average over a grid of fixed bet sizes) is a test martingale: its value is an
  e-value at any look, however many looks are taken (Ville's inequality), and the baseline being
  a finite sample costs nothing, since every pair spends a fresh baseline answer.
* **min_shift**: the e-value counts only when the estimated shift is at least ``min_shift``
  (``e · 1[shift ≥ min_shift]`` is still an e-value), so answers that say the same thing in other
  words are never "changed", however many answers show that their wording moved. A comparison is
  *same* once the shift's upper bound is below a margin above ``min_shift``
  (:data:`promptcanary.core.sampling.meaning.SAME_MARGIN`): a non-binding futility stop, which can
  only remove rejections. The bound is the estimate plus ``FUTILITY_Z`` standard errors, the
  larger of the jackknife's and the one a shift *of the margin* would have along the direction
  the answers moved (:meth:`Shift.rules_out`).
"""

from __future__ import annotations

import hashlib
import math
import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass

from promptcanary.core.vectors import Vector

BETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The bet sizes the wealth averages over (a fixed mixture: no tuning on the data)."""
HOLD_OUT = 3
"""One baseline answer in ``HOLD_OUT`` estimates the baseline centroid; the rest are paired."""
FUTILITY_Z = 1.28
"""Standard errors above the estimate that must still be below the margin for *same*."""
INTERVAL_Z = 1.96
"""The reported interval of the shift: estimate ± this many standard errors (descriptive)."""
SCALE_REFERENCE = 12
"""Held-out baseline answers whose projections give the stake's scale."""
MIN_BASELINE = 4
"""Fewer pooled baseline vectors than this: not compared (inconclusive, said why)."""


@dataclass(frozen=True)
class Shift:
    """The estimated centroid shift, its standard error, and the answers it rests on.

    ``along`` is the variance of the difference of the two centroids along the direction it
    points (each side's variance of its answers' projections on that direction over its count):
    what :meth:`rules_out` scales to a shift of the margin."""

    estimate: float
    se: float
    baseline_n: int
    current_n: int
    along: float = 0.0

    def interval(self, z: float = INTERVAL_Z) -> tuple[float, float]:
        return (max(0.0, self.estimate - z * self.se), max(0.0, self.estimate + z * self.se))

    def rules_out(self, margin: float) -> bool:
        """Whether a shift of ``margin`` or more is ruled out: the verdict *same* rests on it."""
        return self.upper(margin) < margin

    def upper(self, margin: float) -> float:
        """The upper bound that must be below ``margin`` for *same*.

        The shift is half a squared distance, so its standard error (the delta method's
        ``‖Δ‖ · sd along Δ``) shrinks with the estimate: a share of answers moved far, of which
        today's look holds one or two, gives a small estimate *and* a small error, and a bound
        at the estimate calls it *same* (a single moved answer even gives 0 ± 0). So, as a score
        interval takes a proportion's variance at the null value rather than at the estimate
        (Wilson 1927), the error is at least what a shift of ``margin`` would have along the
        direction the answers moved: ``√(2 · margin · along)``."""
        at_margin = math.sqrt(2.0 * margin * self.along)
        return self.estimate + FUTILITY_Z * max(self.se, at_margin)


def _sum(vectors: Sequence[Vector], dim: int) -> list[float]:
    return [math.fsum(column) for column in zip(*vectors, strict=True)] if vectors else [0.0] * dim


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(map(operator.mul, a, b))


def _half_shift(cross: float, sq_b: float, nb: int, sq_c: float, nc: int) -> float:
    """½ (‖μ_b‖² + ‖μ_c‖² − 2⟨μ_b, μ_c⟩), each term unbiased: ``sq`` is the squared length of a
    side's sum of unit vectors, ``cross`` the inner product of the two sums."""
    norm_b = (sq_b - nb) / (nb * (nb - 1))
    norm_c = (sq_c - nc) / (nc * (nc - 1))
    return 0.5 * (norm_b + norm_c - 2.0 * cross / (nb * nc))


class ShiftTracker:
    """:func:`shift` kept up to date as today's answers arrive: the pool's sums are computed once,
    an added answer costs one inner product per answer of today's, and a look one per pooled
    answer (the baseline side of the jackknife)."""

    def __init__(self, baseline: Sequence[Vector]) -> None:
        self.baseline = list(baseline)
        dim = len(self.baseline[0]) if self.baseline else 0
        self._sb = _sum(self.baseline, dim)
        self._sq_b = _dot(self._sb, self._sb)
        self._b_sb = [_dot(v, self._sb) for v in self.baseline]
        self._sc = [0.0] * dim
        self._sq_c = 0.0
        self._cross = 0.0
        self.current: list[Vector] = []
        self._c_sc: list[float] = []
        self._c_sb: list[float] = []

    def add(self, vector: Vector) -> None:
        """One more of today's answer vectors."""
        to_c = [_dot(vector, c) for c in self.current]
        self._c_sc = [total + d for total, d in zip(self._c_sc, to_c, strict=True)]
        self._sq_c += 2.0 * math.fsum(to_c) + 1.0
        self._cross += _dot(vector, self._sb)
        self._sc = list(map(operator.add, self._sc, vector))
        self.current.append(vector)
        self._c_sc.append(math.fsum(to_c) + 1.0)
        self._c_sb.append(_dot(vector, self._sb))

    def shift(self) -> Shift:
        """The shift of the answers added so far (see :func:`shift`)."""
        nb, nc = len(self.baseline), len(self.current)
        if nb < 2 or nc < 2:
            raise ValueError("the shift needs at least two vectors a side")
        sq_b, sq_c, cross = self._sq_b, self._sq_c, self._cross
        estimate = _half_shift(cross, sq_b, nb, sq_c, nc)
        b_sc = [_dot(v, self._sc) for v in self.baseline]
        variance = 0.0
        if nb >= 3:
            # Deleting baseline answer v changes the estimate by a linear function of v,
            # ⟨v, sc⟩ / ((nb−1) nc) − ⟨v, sb⟩ / ((nb−1)(nb−2)) plus a constant.
            k = nb - 1
            variance += _jackknife(
                [c / (k * nc) - b / (k * (k - 1)) for c, b in zip(b_sc, self._b_sb, strict=True)]
            )
        if nc >= 3:
            variance += _jackknife(
                [
                    _half_shift(cross - v_sb, sq_b, nb, sq_c - 2.0 * v_sc + 1.0, nc - 1)
                    for v_sc, v_sb in zip(self._c_sc, self._c_sb, strict=True)
                ]
            )
        along = self._along(b_sc, nb, nc)
        return Shift(estimate, math.sqrt(variance), nb, nc, along)

    def _along(self, b_sc: Sequence[float], nb: int, nc: int) -> float:
        """The variance of ``Δ = μ_c − μ_b`` along ``Δ`` itself: each side's sample variance of
        ``⟨v, Δ⟩`` over its count, divided by ``‖Δ‖²`` (0 when the centroids coincide)."""
        norm_sq = self._sq_c / (nc * nc) + self._sq_b / (nb * nb) - 2.0 * self._cross / (nb * nc)
        if norm_sq <= 1e-18:
            return 0.0
        on_b = _squared_deviations(_on_delta(b_sc, self._b_sb, nb, nc)) / (nb - 1)
        on_c = _squared_deviations(_on_delta(self._c_sc, self._c_sb, nb, nc)) / (nc - 1)
        return (on_c / nc + on_b / nb) / norm_sq


def _on_delta(to_sc: Sequence[float], to_sb: Sequence[float], nb: int, nc: int) -> list[float]:
    """Each answer's ``⟨v, Δ⟩`` from its inner products with the two sides' sums."""
    return [c / nc - b / nb for c, b in zip(to_sc, to_sb, strict=True)]


def shift(baseline: Sequence[Vector], current: Sequence[Vector]) -> Shift:
    """The unbiased estimate of ``½‖μ_c − μ_b‖²`` (U-statistics) and its jackknife error
    (deleting one answer of either side at a time). Needs two vectors a side (else ValueError)."""
    tracker = ShiftTracker(baseline)
    for vector in current:
        tracker.add(vector)
    return tracker.shift()


def _squared_deviations(values: Sequence[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.fsum((x - mean) ** 2 for x in values)


def _jackknife(leave_one_out: Sequence[float]) -> float:
    n = len(leave_one_out)
    return (n - 1) / n * _squared_deviations(leave_one_out)


def pairing_order(n: int, seed: str) -> list[int]:
    """The order baseline answers are spent in: a permutation fixed by ``seed`` alone."""
    order = list(range(n))
    random.Random(hashlib.sha256(seed.encode()).digest()).shuffle(order)
    return order


@dataclass(frozen=True)
class Wealth:
    """The betting e-value after ``pairs`` pairs (1.0 before any bet)."""

    e_value: float
    pairs: int


class _Witness:
    """The running sums behind ``w_t``: today's earlier answers and the baseline's reference
    answers (the held-out third, then every spent pair), with the projections of up to
    :data:`SCALE_REFERENCE` held-out answers on both sums (the stake's scale under no change)."""

    def __init__(self, reference: Sequence[Vector]) -> None:
        dim = len(reference[0])
        self.scale_set = list(reference[:SCALE_REFERENCE])
        self.ref_sum, self.ref_n = _sum(reference, dim), len(reference)
        self.cur_sum, self.cur_n = [0.0] * dim, 0
        self.ref_proj = [_dot(self.ref_sum, r) for r in self.scale_set]
        self.cur_proj = [0.0] * len(self.scale_set)
        # ‖cur_sum‖², ‖ref_sum‖², ⟨cur_sum, ref_sum⟩, kept up to date as vectors are added.
        self.cc, self.rr, self.cr = 0.0, _dot(self.ref_sum, self.ref_sum), 0.0

    def add(self, vector: Vector, *, current: bool) -> None:
        to_cur, to_ref = _dot(vector, self.cur_sum), _dot(vector, self.ref_sum)
        projections = [_dot(vector, r) for r in self.scale_set]
        if current:
            self.cc += 2.0 * to_cur + 1.0
            self.cr += to_ref
            self.cur_sum = list(map(operator.add, self.cur_sum, vector))
            self.cur_proj = list(map(operator.add, self.cur_proj, projections))
            self.cur_n += 1
        else:
            self.rr += 2.0 * to_ref + 1.0
            self.cr += to_cur
            self.ref_sum = list(map(operator.add, self.ref_sum, vector))
            self.ref_proj = list(map(operator.add, self.ref_proj, projections))
            self.ref_n += 1

    def stake(self, y: Vector, x: Vector) -> float | None:
        """``tanh(⟨w, y − x⟩ / (‖w‖ s))``; ``None`` before today's first answer or for ``w = 0``."""
        n, m = self.cur_n, self.ref_n
        if n == 0:
            return None
        norm_sq = self.cc / (n * n) + self.rr / (m * m) - 2.0 * self.cr / (n * m)
        if norm_sq <= 1e-18:
            return None
        diff = list(map(operator.sub, y, x))
        side = _dot(self.cur_sum, diff) / n - _dot(self.ref_sum, diff) / m
        norm = math.sqrt(norm_sq)
        projections = [
            (c / n - r / m) / norm for c, r in zip(self.cur_proj, self.ref_proj, strict=True)
        ]
        return math.tanh(side / norm / _spread(projections))


def _spread(projections: Sequence[float]) -> float:
    """The scale of ``⟨w, X − X'⟩ / ‖w‖`` under no change, from held-out baseline answers: √2
    times the standard deviation of their projections on ``w`` (at least 0.01)."""
    if len(projections) < 2:
        return 0.1
    mean = math.fsum(projections) / len(projections)
    sd = math.sqrt(math.fsum((p - mean) ** 2 for p in projections) / (len(projections) - 1))
    return max(0.01, math.sqrt(2.0) * sd)


class WealthTracker:
    """The betting wealth kept up to date as today's answers arrive, in sample order (see
    :func:`wealth`): the witness and the bettors' wealth carry over from one look to the next."""

    def __init__(self, baseline: Sequence[Vector], seed: str) -> None:
        order = pairing_order(len(baseline), seed)
        held = max(1, len(baseline) // HOLD_OUT)
        self._queue = [baseline[i] for i in order[held:]]
        self._witness = _Witness([baseline[i] for i in order[:held]])
        self._log_wealth = [0.0] * len(BETS)
        self._pairs = 0
        self._seen = 0

    def add(self, y: Vector) -> None:
        """Today's next answer: bet on it against the next unspent baseline answer, if any (later
        answers still refine the witness)."""
        witness, t = self._witness, self._seen
        if t < len(self._queue):
            stake = witness.stake(y, self._queue[t])
            if stake is not None:
                self._log_wealth = [
                    w + math.log1p(b * stake) for w, b in zip(self._log_wealth, BETS, strict=True)
                ]
                self._pairs += 1
            witness.add(self._queue[t], current=False)
        witness.add(y, current=True)
        self._seen += 1

    def wealth(self) -> Wealth:
        top = max(self._log_wealth)
        mixed = top + math.log(math.fsum(math.exp(w - top) for w in self._log_wealth) / len(BETS))
        return Wealth(math.exp(mixed) if mixed < 700.0 else math.inf, self._pairs)


def wealth(baseline: Sequence[Vector], current: Sequence[Vector], seed: str) -> Wealth:
    """The test's wealth after today's answers in ``current`` (in sample order); see module doc.

    Pairs stop when the pool's paired part is spent; later answers still refine the witness.
    """
    tracker = WealthTracker(baseline, seed)
    for y in current:
        tracker.add(y)
    return tracker.wealth()
