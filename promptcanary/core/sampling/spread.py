"""Runs, not answers, as the pool's unit: run-to-run spread and the pool's anchor.

Pure functions of pass counts, used by :mod:`promptcanary.core.sampling.sequencer` to read the
pool and by :mod:`promptcanary.core.sampling.sequential` to widen a comparison.

* **Spread.** A model's pass rate varies from run to run (provider load, batching, silent minor
  updates). Model it on the logit scale: run ``j`` passes at ``logit(p_j) = logit(p) + u_j`` with
  ``u_j`` of variance ``tau2``, shared by the whole suite (it is the provider's, not a prompt's).
  By the delta method the answers of one run are then correlated, with intra-run correlation
  ``rho = p (1 - p) tau2``, and a rate estimated from runs of sizes ``n_j`` has the binomial
  variance times the design effect ``1 + rho (sum n_j^2 / N - 1)`` (Kish 1965; Fleiss 1981 for
  the beta-binomial moments). Today's run is one draw of the run-level rate: its design effect is
  ``1 + rho (n - 1)``, so however many answers today takes, its information saturates at about
  ``1 / rho`` answers. A comparison is widened by dividing both sides' counts by their design
  effects (an effective sample size) before the e-value is computed.
* **The estimate.** ``tau2`` is fitted by :mod:`promptcanary.core.sampling.spread_fit` from the
  pooled runs of every comparison (never from today's answers, so it is fixed before today's
  look).
* **The anchor.** A slow decline promoted run by run becomes the pool; the oldest pooled runs
  still remember the rate before it. :func:`anchor_runs` picks them; the sequential rule averages
  the e-value against the pool with the one against the anchor (an average of e-values is an
  e-value, so the family's guarantee is unchanged) and calls a comparison "same" only when a drop
  is ruled out against both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

ANCHOR_SHARE = 0.5
"""The anchor is the oldest pooled runs holding at least this share of the pooled answers (or
``baseline-samples`` answers, when fewer: :func:`anchor_runs`)."""


class Tally(Protocol):
    """Pass count out of answers (``sequential.Counts``; this module does not import it)."""

    @property
    def passes(self) -> int: ...

    @property
    def n(self) -> int: ...


T = TypeVar("T", bound=Tally)


def correlation(rate: float, spread: float) -> float:
    """Intra-run correlation of answers at pass rate ``rate`` under logit variance ``spread``."""
    return min(1.0, max(0.0, rate * (1.0 - rate) * spread))


def design_effect(sizes: Sequence[int], rho: float) -> float:
    """Variance inflation of a rate estimated from runs of ``sizes`` answers."""
    total = sum(sizes)
    if total == 0 or rho <= 0.0:
        return 1.0
    return 1.0 + rho * (sum(n * n for n in sizes) / total - 1.0)


def effective(passes: int, n: int, sizes: Sequence[int], rho: float) -> tuple[int, int]:
    """``passes`` of ``n`` at their effective sample size (counts / design effect), rounded: the
    binomial counts that weigh as much as these correlated answers."""
    deff = design_effect(sizes, rho)
    if n == 0 or deff <= 1.0 + 1e-9:
        return passes, n
    size = max(1, round(n / deff))
    return min(size, round(passes * size / n)), size


def reference_rate(counts: Tally) -> float:
    """The rate that sets a comparison's correlation: the reference side's, smoothed (never 0
    or 1, so an all-pass pool still widens a little under a large spread)."""
    return (counts.passes + 0.5) / (counts.n + 1.0)


def anchor_runs(
    runs: Sequence[T], share: float = ANCHOR_SHARE, least: int | None = None
) -> tuple[T, ...]:
    """The oldest of ``runs`` (newest first) holding at least ``share`` of their answers, or
    ``least`` answers when that is fewer; empty when that would be every run (the anchor would be
    the pool itself).

    ``least`` is ``baseline-samples``, the size a pool is built to: a first push's big baseline
    then stays the anchor as promoted runs pile up, where "half the answers" would soon take in
    runs of a slow decline."""
    total = sum(c.n for c in runs)
    if total == 0:
        return ()
    needed = share * total if least is None else min(share * total, least)
    kept: list[T] = []
    held = 0
    for c in reversed(runs):
        kept.append(c)
        held += c.n
        if held >= needed:
            break
    if len(kept) >= len(runs):
        return ()
    return tuple(reversed(kept))
