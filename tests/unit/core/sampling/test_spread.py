"""Runs as the pool's unit: the design effect, the anchor, and what they do to
one comparison's verdict."""

from __future__ import annotations

import math

from promptcanary.core.sampling import sequential as seq
from promptcanary.core.sampling.sequential import Counts, Look, Policy, Verdict
from promptcanary.core.sampling.spread import (
    anchor_runs,
    correlation,
    design_effect,
    effective,
)


class TestDesignEffect:
    def test_runs_of_one_answer_are_independent(self) -> None:
        assert design_effect([1] * 30, 0.2) == 1.0

    def test_one_run_counts_as_about_one_over_rho_answers_at_most(self) -> None:
        rho = 0.05
        assert math.isclose(design_effect([60], rho), 1 + rho * 59)
        assert effective(54, 60, [60], rho)[1] < 1 / rho

    def test_no_spread_leaves_counts_alone(self) -> None:
        assert effective(57, 60, [60], 0.0) == (57, 60)

    def test_effective_counts_keep_the_rate(self) -> None:
        passes, n = effective(45, 60, [60], 0.05)
        assert n < 60 and abs(passes / n - 0.75) < 0.5 / n

    def test_correlation_follows_the_binomial_variance(self) -> None:
        assert correlation(0.5, 1.0) > correlation(0.95, 1.0) > correlation(1.0, 1.0) == 0.0


class TestAnchor:
    def test_oldest_runs_holding_half_the_answers(self) -> None:
        newest_first = (Counts(3, 5), Counts(4, 5), Counts(5, 5), Counts(50, 57))
        assert anchor_runs(newest_first) == (Counts(50, 57),)

    def test_a_first_push_of_baseline_samples_stays_the_anchor(self) -> None:
        # A first push of 57 answers, then 19 promoted runs of 5 (152 answers): half of them
        # would take in the four runs after it; baseline-samples keeps the first push alone.
        newest_first = (*[Counts(3, 5)] * 19, Counts(55, 57))
        assert len(anchor_runs(newest_first)) == 5
        assert anchor_runs(newest_first, least=57) == (Counts(55, 57),)

    def test_half_the_answers_when_that_is_fewer_than_baseline_samples(self) -> None:
        newest_first = (Counts(3, 5), Counts(4, 5), Counts(5, 5), Counts(20, 20))
        assert anchor_runs(newest_first, least=57) == (Counts(20, 20),)

    def test_no_anchor_when_it_would_be_the_whole_pool(self) -> None:
        assert anchor_runs((Counts(50, 57),)) == ()
        assert anchor_runs(()) == ()


# ── what they do to a verdict ──────────────────────────────────────────────────


BAR = 100 / 0.05  # e-BH's single-discovery bar for 100 comparisons


def _verdict(look: Look) -> Verdict:
    (decision,) = seq.step([None], [look], Policy(), family=100)
    return decision.verdict


def test_a_low_run_within_the_spread_is_not_a_regression() -> None:
    pool = tuple([Counts(5, 5)] * 10 + [Counts(4, 5)] * 5 + [Counts(54, 57)])
    total = sum(pool, Counts(0, 0))
    today = Counts(40, 60)  # a run at 0.67 against a pool at 0.94
    sizes = tuple(c.n for c in pool)
    assert _verdict(Look(total, today, spread=0.0, baseline_runs=sizes)) is Verdict.REGRESSED
    assert _verdict(Look(total, today, spread=1.0, baseline_runs=sizes)) is not Verdict.REGRESSED


def test_a_drop_to_half_is_still_caught_under_spread() -> None:
    pool = tuple([Counts(5, 5)] * 10 + [Counts(4, 5)] * 5 + [Counts(54, 57)])
    total = sum(pool, Counts(0, 0))
    look = Look(total, Counts(22, 60), spread=0.6, baseline_runs=tuple(c.n for c in pool))
    assert _verdict(look) is Verdict.REGRESSED


def test_the_anchor_flags_a_decline_the_pool_absorbed() -> None:
    recent = (Counts(33, 50), Counts(35, 50), Counts(37, 50), Counts(40, 50))
    first = Counts(55, 57)
    pool = sum(recent, first)
    today = Counts(33, 60)
    assert _verdict(Look(pool, today)) is not Verdict.REGRESSED
    with_anchor = Look(pool, today, anchor=first, anchor_runs=(57,))
    assert _verdict(with_anchor) is Verdict.REGRESSED


def test_same_must_hold_against_the_anchor_too() -> None:
    policy = Policy()
    pool, first, today = Counts(150, 250), Counts(57, 57), Counts(14, 20)
    assert seq.evidence(Look(pool, today), policy)[2]
    assert not seq.evidence(Look(pool, today, anchor=first, anchor_runs=(57,)), policy)[2]


def _binom(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def test_averaging_with_the_anchor_keeps_an_e_value() -> None:
    """The average of the pool's and the anchor's e-values is an e-value: its expectation under
    no drift (every answer at one rate p) is at most 1, summed exactly over every outcome of the
    anchor (10 answers), the rest of the pool (10) and today (12)."""
    for p in (0.5, 0.8, 0.95):
        mean = 0.0
        for xa in range(11):
            for xr in range(11):
                anchor, pool = Counts(xa, 10), Counts(xa + xr, 20)
                for xc in range(13):
                    look = Look(pool, Counts(xc, 12), anchor=anchor, anchor_runs=(10,))
                    weight = _binom(xa, 10, p) * _binom(xr, 10, p) * _binom(xc, 12, p)
                    mean += weight * seq.evidence(look, Policy())[0]
        assert mean <= 1.0, p
