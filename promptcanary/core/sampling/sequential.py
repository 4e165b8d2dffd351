"""Sequential decisions for ``samples: auto``: when to stop asking a prompt, and what to conclude.

Pure functions of pass counts; no I/O, no randomness. ``docs/statistics.md`` explains the choice;
in short:

* **Regressions and improvements** are judged by an e-value per ``(prompt, probe)``: a mixture
  likelihood ratio over the *largest* likelihood the null ``p_current >= p_baseline`` allows
  (universal inference, Wasserman, Ramdas & Balakrishnan 2020). The mixture's prior puts
  ``p_baseline ~ Beta(PRIOR_WEIGHT, 1)`` (canary probes mostly pass) and ``p_current`` uniform below
  it. For every null parameter the mixture ratio is a test martingale as answers arrive, so the
  e-value stays valid however many looks are taken and whenever sampling stops (Ville's
  inequality). The suite-wide family is controlled by e-BH (Wang & Ramdas 2022), valid under any
  dependence between comparisons (probes of one prompt share answers).
* **"Same"** is a tested verdict: the drop of ``margin`` is placed below an upper confidence bound
  of the baseline rate (Clopper-Pearson at ``SAME_BASELINE_LEVEL``), and today's answers must rule
  it out by a likelihood ratio of ``1 / futility_level`` (a one-sided sequential test, valid at any
  look). A comparison wrongly called "same" after a drop of ``margin`` or more has probability at
  most ``SAME_BASELINE_LEVEL + futility_level`` (5% at the defaults).
* **Deterministic prompts**: when at least ``DETERMINISTIC_EVIDENCE`` pooled answers were one text
  and today's answers (two or more) are all one *other* text, the model is deterministic and
  changed: its pass flags decide. Today's answers repeating the pooled text settle nothing by
  themselves: a model that now passes half the time may repeat the old text half the time, so
  "same" is the tested verdict above for them too.
* **How large a baseline must be**: :func:`baseline_samples_for` is the default
  ``baseline-samples`` for a suite's size (``power.py`` decides when a built pool is large
  enough); :func:`answers_to_show` sizes a comparison whose pass flags shrink a drop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

from promptcanary.core import stats
from promptcanary.core.sampling.spread import correlation, effective, reference_rate

MAX_SAMPLES_CAP = 1_000
"""The largest ``max-samples`` accepted: beyond it a typo would buy a very large bill."""
MIN_SAMPLES = 3
"""``min-samples`` by default: answers every prompt gets in the first stage of ``auto``."""
MAX_SAMPLES = 80
"""``max-samples`` by default: answers after which an undecided comparison is inconclusive. 80
rather than 60: a drop of 0.95 to 0.50 on the first pull request is caught in 93% rather than
89% (exact, ``bench/day_one_validity.py --building``), and the first push builds less (a pool is
large enough sooner when today may take more answers); only a comparison still open at 60 pays."""
PRIOR_WEIGHT = 6
"""The regression e-value's prior on the baseline rate is ``Beta(PRIOR_WEIGHT, 1)``: mass near the
high pass rates canary probes have (``bench/day_one_validity.py`` prints its power)."""
SAME_BASELINE_LEVEL = 0.01
""""Same" tests against an upper bound of the baseline rate that fails this often."""
ANCHOR_WEIGHT = 0.5
"""The share of a comparison's regression e-value that weighs today against the pool's anchor (its
oldest runs) rather than the whole pool: a decline promoted run by run stays visible."""
DETERMINISTIC_EVIDENCE = 10
"""Identical pooled answers that make a prompt deterministic for the changed-answer rule: a
second wording used 1 time in 5 would have appeared in 10 answers 89% of the time."""
BASELINE_SAMPLES_TABLE: tuple[tuple[int, int], ...] = (
    (1, 24),
    (2, 28),
    (5, 34),
    (10, 38),
    (20, 44),
    (50, 51),
    (100, 57),
    (200, 63),
    (500, 72),
    (1000, 78),
    (2000, 86),
)
"""(comparisons m, baseline answers per prompt): the fewest baseline answers of a probe passing
95% of the time with which this e-value catches a drop to 50% in 93% of pull requests at e-BH's
bar ``m / 0.05`` (exact computation, ``bench/day_one_validity.py --derive``)."""


class Verdict(StrEnum):
    SAME = "same"
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNDECIDED = "undecided"
    """Still sampling; after :func:`finish`, a comparison left here is *inconclusive*."""


@dataclass(frozen=True)
class Counts:
    """Pass count ``passes`` out of ``n`` scored answers of one (prompt, probe) on one side."""

    passes: int
    n: int

    def __post_init__(self) -> None:
        if not 0 <= self.passes <= self.n:
            raise ValueError(f"passes must lie between 0 and n, got {self.passes} of {self.n}")

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passes + other.passes, self.n + other.n)

    @property
    def fails(self) -> int:
        return self.n - self.passes

    def flipped(self) -> Counts:
        """Passes and failures swapped: an improvement test is a regression test of failures."""
        return Counts(self.fails, self.n)


@dataclass(frozen=True)
class Policy:
    """The knobs of the procedure (defaults documented in ``docs/statistics.md``)."""

    alpha: float = stats.DEFAULT_ALPHA
    """False-discovery rate of the suite's regressions (and, separately, improvements)."""
    margin: float = 0.5
    """The pass-rate drop that "same" rules out; smaller drops are not chased."""
    futility_level: float = 1 / 25
    """How strongly "same" must rule the drop out (likelihood ratio ``1 / futility_level``)."""
    min_samples: int = MIN_SAMPLES
    max_samples: int = MAX_SAMPLES
    baseline_samples: int = 57
    """Answers per prompt a run builds the pool to when the pool cannot yet show a drop of
    ``margin`` (the runner derives it from the suite's size, :func:`baseline_samples_for`)."""
    top_up: bool = False
    """The run may become the baseline: prompts with no pool, or too small a one, are asked more."""

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must lie strictly between 0 and 1, got {self.alpha}")
        if not 0.0 < self.margin <= 1.0:
            raise ValueError(f"margin must lie in (0, 1], got {self.margin}")
        if not 0.0 < self.futility_level < 1.0:
            raise ValueError(f"futility_level must lie in (0, 1), got {self.futility_level}")
        if not 1 <= self.min_samples <= self.max_samples <= MAX_SAMPLES_CAP:
            raise ValueError(
                "need 1 <= min_samples <= max_samples <= "
                f"{MAX_SAMPLES_CAP}, got {self.min_samples} and {self.max_samples}"
            )
        if not 1 <= self.baseline_samples <= MAX_SAMPLES_CAP:
            raise ValueError(
                f"baseline_samples must lie between 1 and {MAX_SAMPLES_CAP}, "
                f"got {self.baseline_samples}"
            )

    def next_size(self, n: int, limit: int | None = None) -> int:
        """Answers a still-undecided prompt should have after the next stage (about +25%), up to
        ``limit`` (``max_samples`` by default)."""
        cap = self.max_samples if limit is None else limit
        return min(cap, max(self.min_samples, n + max(1, math.ceil(n / 4))))

    def build_size(self, pooled: int, n: int) -> int:
        """Answers today for a prompt whose pool (``pooled`` answers) is being built: first up to
        ``DETERMINISTIC_EVIDENCE``, then about +25%, up to ``baseline_samples`` in all."""
        room = max(0, self.baseline_samples - pooled)
        step = DETERMINISTIC_EVIDENCE if n < DETERMINISTIC_EVIDENCE else n + math.ceil(n / 4)
        return min(room, step)


def baseline_samples_for(comparisons: int) -> int:
    """The default ``baseline-samples`` for a suite of ``comparisons`` (prompt, probe) pairs."""
    for m, samples in BASELINE_SAMPLES_TABLE:
        if comparisons <= m:
            return samples
    return BASELINE_SAMPLES_TABLE[-1][1]


# --------------------------------------------------------------------------------------------
# the e-value


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def prob_greater(a1: int, b1: int, a2: int, b2: int) -> float:
    """P(X > Y) for independent X ~ Beta(a1, b1), Y ~ Beta(a2, b2) with integer parameters.

    The finite sum for integer shape parameters (e.g. Evan Miller, "Formulas for Bayesian A/B
    testing", 2015), summed over whichever first parameter is smaller.
    """
    if min(a1, b1, a2, b2) < 1:
        raise ValueError("prob_greater needs integer shape parameters >= 1")
    if a1 > a2:
        return 1.0 - prob_greater(a2, b2, a1, b1)
    # P(X > Y) = sum_{i < a1} B(a2 + i, b1 + b2) / ((b1 + i) B(1 + i, b1) B(a2, b2))
    log_norm = _log_beta(a2, b2)
    total = math.fsum(
        math.exp(_log_beta(a2 + i, b1 + b2) - math.log(b1 + i) - _log_beta(1 + i, b1) - log_norm)
        for i in range(a1)
    )
    return min(1.0, max(0.0, total))


def _log_likelihood(c: Counts, p: float) -> float:
    # 0 * log(0) is 0: a rate of exactly 0 or 1 is the maximum for all-fail or all-pass data.
    out = 0.0
    if c.passes:
        out += c.passes * math.log(p)
    if c.fails:
        out += c.fails * math.log1p(-p)
    return out


@lru_cache(maxsize=65536)
def log_e_worse(baseline: Counts, current: Counts, weight: int = PRIOR_WEIGHT) -> float:
    """Log e-value against "the current pass rate is at least the baseline's".

    Numerator: the likelihood of both samples averaged over the prior ``p_b ~ Beta(weight, 1)``,
    ``p_c | p_b`` uniform on ``(0, p_b)`` (density ``weight p_b^(weight-2)`` on the triangle
    ``p_c < p_b``; ``weight = 2`` is the uniform triangle), in closed form
    ``weight B(xb+weight-1, fb+1) B(xc+1, fc+1) P(p_c < p_b | data)``. Denominator: the
    likelihood maximised over the null (at the pooled rate when the current sample looks worse,
    else at the two observed rates). The value may be below 0 (an e-value below 1): clamping it
    up would break validity. Without current answers there is nothing to weigh: 0.
    """
    if baseline.n == 0 or current.n == 0:
        return 0.0
    shape_b = baseline.passes + weight - 1
    p_less = prob_greater(shape_b, baseline.fails + 1, current.passes + 1, current.fails + 1)
    if p_less <= 0.0:
        return -math.inf
    numerator = (
        math.log(weight * p_less)
        + _log_beta(shape_b, baseline.fails + 1)
        + _log_beta(current.passes + 1, current.fails + 1)
    )
    rate_b, rate_c = baseline.passes / baseline.n, current.passes / current.n
    if rate_c >= rate_b:
        denominator = _log_likelihood(baseline, rate_b) + _log_likelihood(current, rate_c)
    else:
        pooled = (baseline.passes + current.passes) / (baseline.n + current.n)
        denominator = _log_likelihood(baseline, pooled) + _log_likelihood(current, pooled)
    return numerator - denominator


def e_worse(baseline: Counts, current: Counts) -> float:
    """The e-value of :func:`log_e_worse` (``inf`` beyond float range)."""
    log_e = log_e_worse(baseline, current)
    return math.exp(log_e) if log_e < 700.0 else math.inf  # exp(-inf) is 0.0


def e_better(baseline: Counts, current: Counts) -> float:
    """E-value against "the current pass rate is at most the baseline's" (an improvement).

    The uniform triangle prior (weight 2): a failure rate has no reason to sit near 1."""
    log_e = log_e_worse(baseline.flipped(), current.flipped(), 2)
    return math.exp(log_e) if log_e < 700.0 else math.inf


# --------------------------------------------------------------------------------------------
# the family


def e_bh_adjusted(evalues: Sequence[float]) -> list[float]:
    """e-BH adjusted levels: comparison i is rejected at level alpha iff its value <= alpha.

    e-BH rejects the k largest e-values where the k-th is at least m / (alpha k); that is BH
    applied to ``1 / e`` (Wang & Ramdas 2022), so BH's adjusted p-values of ``1 / e`` are the
    adjusted levels. Unlike BH on p-values it needs no assumption on the dependence.
    """
    return stats.benjamini_hochberg([1.0 / e if e > 0 else math.inf for e in evalues])


def e_bh(evalues: Sequence[float], alpha: float) -> list[bool]:
    """Which hypotheses e-BH rejects at false-discovery rate ``alpha``."""
    return [level <= alpha for level in e_bh_adjusted(evalues)]


# --------------------------------------------------------------------------------------------
# futility


@lru_cache(maxsize=16384)
def upper_rate(baseline: Counts, level: float = SAME_BASELINE_LEVEL) -> float:
    """Clopper-Pearson upper confidence bound of the baseline rate: below it but with
    probability ``level`` (1 when every answer passed)."""
    if baseline.fails == 0:
        return 1.0
    low, high = baseline.passes / baseline.n, 1.0
    for _ in range(50):  # bisection: P(X <= passes | p) falls as p rises
        mid = (low + high) / 2
        # P(X <= passes | n, p) = I_{1-p}(n - passes, passes + 1)
        if stats.regularized_beta(baseline.fails, baseline.passes + 1, 1 - mid) > level:
            low = mid
        else:
            high = mid
    return high


def log_no_drop_evidence(baseline: Counts, current: Counts, margin: float) -> float:
    """Log likelihood ratio of today's answers: "as the baseline" against "``margin`` below the
    baseline's upper confidence bound".

    "As the baseline" is its Jeffreys posterior mean (never exactly 0 or 1). The null is
    ``p_c <= upper_rate(baseline) - margin``; for a one-sided Bernoulli null the ratio against a
    higher point is a test supermartingale at every rate of the null, so the evidence is valid at
    any look. A bound below ``margin`` leaves no drop of ``margin`` possible: infinite evidence.
    """
    rate = (baseline.passes + 0.5) / (baseline.n + 1.0)
    lower = upper_rate(baseline) - margin
    if lower <= 0.0:
        return math.inf
    if rate <= lower:
        return 0.0  # no alternative above the null to weigh: no evidence either way
    return _log_likelihood(current, rate) - _log_likelihood(current, lower)


def futile(baseline: Counts, current: Counts, policy: Policy, attenuation: float = 1.0) -> bool:
    """True when a drop of ``policy.margin`` is ruled out: stop, the comparison is the same.

    ``attenuation``: the share of a pass-rate drop the pass flags show (a scorer that errs
    shrinks every drop); "same" then rules out the shrunk drop ``margin * attenuation``."""
    evidence = log_no_drop_evidence(baseline, current, policy.margin * attenuation)
    return evidence >= -math.log(policy.futility_level)


Z_97 = 2.0
"""A normal quantile: about the 97.7th percentile."""


def _quantile_passes(rate: float, n: int, z: float) -> int:
    """About the percentile ``z`` of passes in ``n`` answers at ``rate`` (normal approximation)."""
    spread = z * math.sqrt(n * rate * (1 - rate))
    return min(n, math.ceil(rate * n + spread))


def detectable(baseline: Counts, comparisons: int, policy: Policy) -> bool:
    """Whether ``baseline`` can show a drop of ``margin`` from its rate in ``max_samples`` answers,
    by a quick normal approximation that sizes judged comparisons (:func:`answers_to_show`; a
    built pool is sized exactly, ``power.py``): the e-value at a high percentile of passes
    after such a drop reaches e-BH's bar for one discovery among ``comparisons`` (the 97.7th
    percentile: a shrunk drop sits near the margin it is chased at). A rate below ``margin``
    cannot drop by it: detectable."""
    if baseline.n == 0:
        return False
    dropped = baseline.passes / baseline.n - policy.margin
    if dropped <= 0.0:
        return True
    n = policy.max_samples
    current = Counts(_quantile_passes(dropped, n, Z_97), n)
    return log_e_worse(baseline, current) >= math.log(max(1, comparisons) / policy.alpha)


def answers_to_show(
    baseline: Counts, comparisons: int, policy: Policy, attenuation: float = 1.0
) -> int:
    """The ``max-samples`` a comparison needs so that a drop of ``margin * attenuation`` is
    :func:`detectable` against ``baseline`` at the 97.7th percentile (a shrunk drop sits near
    the margin it is chased at, so the power asked is higher than for exact pass flags):
    ``max_samples`` itself when nothing shrinks the drop, else grown by about 25% at a time, up
    to ``MAX_SAMPLES_CAP``."""
    if attenuation >= 1.0 or baseline.n == 0:
        return policy.max_samples
    shrunk = replace(policy, margin=policy.margin * attenuation)
    n = policy.max_samples
    while n < MAX_SAMPLES_CAP and not detectable(
        baseline, comparisons, replace(shrunk, max_samples=n)
    ):
        n = min(MAX_SAMPLES_CAP, n + max(1, n // 4))
    return n


# --------------------------------------------------------------------------------------------
# decisions


@dataclass(frozen=True)
class Look:
    """One comparison at one look: the pooled baseline, today's answers so far."""

    baseline: Counts
    current: Counts
    changed: bool = False
    """Every baseline answer had one text, and today's answers (two or more) all had another."""
    spread: float = 0.0
    """The logit-scale run-to-run variance the other comparisons' pooled runs show
    (``spread_fit.read_spread``); 0: every answer independent, the pool one binomial."""
    baseline_runs: tuple[int, ...] = ()
    """Answers of each pooled run behind ``baseline`` (empty: one run)."""
    anchor: Counts | None = None
    """The pool's oldest runs (``spread.anchor_runs``), when the pool holds more than them."""
    anchor_runs: tuple[int, ...] = ()
    attenuation: float = 1.0
    """The share of a pass-rate drop the pass flags show (1: they are exact; an LLM judge that
    errs shows less): "same" rules out a drop of ``margin * attenuation``."""


@dataclass(frozen=True)
class Decision:
    """Where one comparison stands; decided comparisons are frozen at the counts they had."""

    verdict: Verdict
    baseline: Counts
    current: Counts
    e_worse: float
    e_better: float
    p_adjusted: float | None = None
    """After :func:`finish`: the e-BH adjusted level in the direction of the verdict."""
    deterministic: bool = False
    """Decided by the changed-answer rule (a deterministic prompt's new text: its pass flags)."""

    @property
    def decided(self) -> bool:
        return self.verdict is not Verdict.UNDECIDED


def widen(
    reference: Counts, sizes: Sequence[int], current: Counts, spread: float
) -> tuple[Counts, Counts]:
    """Both sides of a comparison at their effective sizes under run-to-run ``spread``: the
    reference's runs of ``sizes`` answers, and today's answers as one run."""
    if spread <= 0.0 or reference.n == 0:
        return reference, current
    rho = correlation(reference_rate(reference), spread)
    widened_ref = Counts(*effective(reference.passes, reference.n, sizes or (reference.n,), rho))
    return widened_ref, Counts(*effective(current.passes, current.n, (current.n,), rho))


def evidence(look: Look, policy: Policy) -> tuple[float, float, bool]:
    """A look's regression and improvement e-values and whether a drop of the margin is ruled
    out, each side widened for spread; with an anchor, the regression e-value averages the
    pool's and the anchor's, and "same" must hold against both."""
    base, today = widen(look.baseline, look.baseline_runs, look.current, look.spread)
    worse, better = e_worse(base, today), e_better(base, today)
    same = futile(base, today, policy, look.attenuation)
    if look.anchor is not None and look.anchor.n:
        anchor, against = widen(look.anchor, look.anchor_runs, look.current, look.spread)
        worse = ANCHOR_WEIGHT * e_worse(anchor, against) + (1.0 - ANCHOR_WEIGHT) * worse
        same = same and futile(anchor, against, policy, look.attenuation)
    return worse, better, same


def _decide_look(look: Look, bar: float, policy: Policy) -> Decision:
    """One comparison at one look: the changed-answer rule, else the e-values and futility."""
    worse, better, same = evidence(look, policy)
    if look.changed:
        # A deterministic model that now answers another text: nothing varies, so its pass
        # flags are the verdict (no statistics to do).
        rate_b = look.baseline.passes / look.baseline.n if look.baseline.n else 0.0
        rate_c = look.current.passes / look.current.n if look.current.n else 0.0
        verdict = (
            Verdict.REGRESSED if rate_c < rate_b
            else Verdict.IMPROVED if rate_c > rate_b
            else Verdict.SAME
        )  # fmt: skip
        return Decision(verdict, look.baseline, look.current, worse, better, deterministic=True)
    if worse >= bar:
        verdict = Verdict.REGRESSED
    elif better >= bar:
        verdict = Verdict.IMPROVED
    elif same:
        verdict = Verdict.SAME
    else:
        verdict = Verdict.UNDECIDED
    return Decision(verdict, look.baseline, look.current, worse, better)


def step(
    previous: Sequence[Decision | None],
    looks: Sequence[Look],
    policy: Policy,
    family: int | None = None,
) -> list[Decision]:
    """One look at the whole suite: decided comparisons stay as they were, the rest are judged.

    A comparison is decided early as regressed (improved) only when its e-value alone reaches
    e-BH's bar for a single discovery, ``m / alpha``; :func:`finish` applies e-BH to all of them.
    Freezing a decided comparison at its counts is what makes its e-value a stopped e-process
    (valid), even when its prompt keeps sampling for another probe. ``family``: the size of the
    e-BH family when it holds more than these looks (the meaning comparisons of semantic_drift:).
    """
    if len(previous) != len(looks):
        raise ValueError("previous decisions and looks must be aligned")
    bar = (family if family is not None else len(looks)) / policy.alpha
    return [
        before if before is not None and before.decided else _decide_look(look, bar, policy)
        for before, look in zip(previous, looks, strict=True)
    ]


def finish(decisions: Sequence[Decision], policy: Policy) -> list[Decision]:
    """Final verdicts: e-BH over every comparison's e-value, each direction its own family.

    A comparison rejected by e-BH is regressed (improved) whatever its interim state; one still
    undecided and not rejected stays undecided, i.e. inconclusive. A comparison settled as same
    keeps that verdict unless e-BH rejects it.
    """
    worse = e_bh_adjusted([d.e_worse for d in decisions])
    better = e_bh_adjusted([d.e_better for d in decisions])
    out: list[Decision] = []
    for d, level_w, level_b in zip(decisions, worse, better, strict=True):
        if d.deterministic:
            out.append(d)  # decided without statistics: no level to report
            continue
        if level_w <= policy.alpha:
            verdict, level = Verdict.REGRESSED, level_w
        elif level_b <= policy.alpha:
            verdict, level = Verdict.IMPROVED, level_b
        else:
            # An interim regression/improvement passed the bar m / alpha, so e-BH rejects it too.
            verdict = d.verdict
            drop = d.current.passes * d.baseline.n <= d.baseline.passes * d.current.n
            level = level_w if drop else level_b
        out.append(replace(d, verdict=verdict, p_adjusted=min(1.0, level)))
    return out
