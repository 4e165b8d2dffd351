"""How much a judge that errs hides of a drop: the attenuation of its judged comparisons.

A judge that fails a good answer with probability ``a`` and passes a bad one with probability
``b`` reports a pass rate of ``b + p (1 - a - b)`` for a true rate ``p``: every drop in the
model's pass rate shows shrunk by ``1 - a - b`` (``1 - 2 f`` for a judge flipping a share ``f``
of its verdicts either way). ``samples: auto`` would then call a real drop "same", or stop
asking before it shows. The judge's canaries (``judge_checks:``, known verdicts) measure ``a``
on those expected to pass and ``b`` on those expected to fail; each is bounded from above
(Clopper-Pearson at ``NOISE_LEVEL``, so a few lucky votes do not make a noisy judge look exact),
turned into the error of a majority of ``judge_samples`` votes, and the attenuation
``1 - a - b`` goes with the run (``provenance.judge.attenuation``) to the sequencer, which rules
out and chases the shrunk drop on the judged comparisons. ``bench/judge_drift.py`` measures the
result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from promptcanary.core.models import JudgeCheckResult
from promptcanary.core.probes.llm_judge import LLMJudgeProbe
from promptcanary.core.sampling.sequential import Counts, upper_rate
from promptcanary.core.spec import SuiteSpec

NOISE_LEVEL = 0.25
"""The canaries' error rates are taken at an upper bound they exceed this often: lower would
chase drops a judge does not hide (more answers); higher would trust a few lucky votes."""
MIN_ATTENUATION = 0.25
"""The smallest attenuation used: a judge wrong that often is near a coin (its canaries call it
changed at the default tolerance), and chasing a drop shrunk further costs without end."""


def error_bound(votes: int, wrong: int) -> float | None:
    """An upper bound of a judge's error rate from ``wrong`` of ``votes``; ``None``: no votes."""
    if votes == 0:
        return None
    return upper_rate(Counts(wrong, votes), NOISE_LEVEL)


def majority_error(rate: float, votes: int) -> float:
    """The chance that the majority of ``votes`` (odd) independent votes is wrong."""
    need = votes // 2 + 1
    return math.fsum(
        math.comb(votes, k) * rate**k * (1 - rate) ** (votes - k) for k in range(need, votes + 1)
    )


def attenuation(checks: Sequence[JudgeCheckResult], judge_samples: int = 1) -> float:
    """The share of a drop the verdicts of a majority of ``judge_samples`` votes show.

    1 without canary votes (nothing measured; the changed-judge rule reports such a judge).
    When only one kind of canary (expected to pass, or to fail) has votes, its error bound
    stands for both."""
    bounds: dict[str, float | None] = {}
    for expected in ("pass", "fail"):
        votes = [v for c in checks if c.expected == expected for v in c.verdicts]
        bounds[expected] = error_bound(len(votes), sum(1 for v in votes if v != expected))
    known = [b for b in bounds.values() if b is not None]
    if not known:
        return 1.0
    a = bounds["pass"] if bounds["pass"] is not None else known[0]
    b = bounds["fail"] if bounds["fail"] is not None else known[0]
    shown = 1.0 - majority_error(a, judge_samples) - majority_error(b, judge_samples)
    return round(min(1.0, max(MIN_ATTENUATION, shown)), 4)


def judged_attenuation(suite: SuiteSpec, checks: Sequence[JudgeCheckResult]) -> dict[str, float]:
    """probe key → the attenuation of each ``llm_judge`` entry of ``suite`` (its own
    ``judge_samples``); empty without canary votes."""
    if not any(c.verdicts for c in checks):
        return {}
    return {
        b.key: attenuation(checks, b.probe.judge_samples)
        for b in suite.bindings
        if isinstance(b.probe, LLMJudgeProbe)
    }
