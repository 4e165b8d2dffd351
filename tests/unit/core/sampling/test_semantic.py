"""The meaning test's statistics: the centroid shift, its error, and the betting e-value."""

from __future__ import annotations

import math
import random

import pytest

from promptcanary.core.sampling import semantic
from promptcanary.core.vectors import Vector, checked

DIM = 8


def _draw(rng: random.Random, centre: Vector, noise: float = 0.4) -> Vector:
    return checked([c + noise * rng.gauss(0.0, 1.0) / math.sqrt(DIM) for c in centre])


def _centre(rng: random.Random) -> Vector:
    return checked([rng.gauss(0.0, 1.0) for _ in range(DIM)])


E1 = (1.0, 0.0, 0.0)
E2 = (0.0, 1.0, 0.0)


def test_the_shift_of_two_points_apart_is_half_their_squared_distance() -> None:
    # Centroids e1 and e2: ½‖e1 − e2‖² = 1 = the cosine distance between the two sides.
    assert semantic.shift([E1, E1], [E2, E2]).estimate == pytest.approx(1.0)
    assert semantic.shift([E1, E1, E1], [E1, E1, E1]).estimate == pytest.approx(0.0)


def test_the_shift_is_unbiased_where_a_plug_in_estimate_is_not() -> None:
    rng = random.Random(1)
    centre = _centre(rng)
    estimates = [
        semantic.shift(
            [_draw(rng, centre) for _ in range(20)], [_draw(rng, centre) for _ in range(4)]
        ).estimate
        for _ in range(400)
    ]
    mean = sum(estimates) / len(estimates)
    # The plug-in ½‖m_c − m_b‖² averages about ½ tr(Σ)(1/4 + 1/20) > 0.01 here.
    assert abs(mean) < 0.003


def test_the_shift_needs_two_vectors_a_side() -> None:
    with pytest.raises(ValueError, match="two vectors a side"):
        semantic.shift([E1], [E2, E2])


def test_the_interval_covers_the_true_shift_about_as_often_as_it_says() -> None:
    rng = random.Random(2)
    base, moved = _centre(rng), _centre(rng)
    # The true shift of these two clusters, from many draws.
    truth = semantic.shift(
        [_draw(rng, base) for _ in range(3000)], [_draw(rng, moved) for _ in range(3000)]
    ).estimate
    covered = 0
    for _ in range(200):
        size = semantic.shift(
            [_draw(rng, base) for _ in range(60)], [_draw(rng, moved) for _ in range(20)]
        )
        low, high = size.interval()
        covered += low <= truth <= high
    assert covered >= 0.88 * 200


def test_same_rules_out_the_margin_only_when_the_upper_bound_is_below_it() -> None:
    size = semantic.Shift(estimate=0.01, se=0.005, baseline_n=60, current_n=20)
    upper = 0.01 + semantic.FUTILITY_Z * 0.005
    assert size.rules_out(upper + 1e-9)
    assert not size.rules_out(upper - 1e-9)


def test_the_pairing_order_is_a_permutation_fixed_by_its_seed() -> None:
    order = semantic.pairing_order(30, "p1\x00run-a")
    assert sorted(order) == list(range(30))
    assert order == semantic.pairing_order(30, "p1\x00run-a")
    assert order != semantic.pairing_order(30, "p1\x00run-b")


def test_under_no_change_the_wealth_is_an_e_value() -> None:
    """P(wealth ≥ c) at most 1/c (Markov; Ville's inequality for the running maximum), over many
    seeded pools. (The sample mean is no test: one wealth in a few hundred may be in the
    hundreds, as an e-value may.)"""
    rng = random.Random(3)
    values = []
    for trial in range(400):
        centre = _centre(rng)
        pool = [_draw(rng, centre) for _ in range(60)]
        today = [_draw(rng, centre) for _ in range(30)]
        values.append(semantic.wealth(pool, today, f"seed-{trial}").e_value)
    for level in (2.0, 5.0, 20.0):
        assert sum(v >= level for v in values) / len(values) <= 1.0 / level


def test_a_change_of_meaning_grows_the_wealth_fast() -> None:
    rng = random.Random(4)
    base, moved = _centre(rng), _centre(rng)
    pool = [_draw(rng, base) for _ in range(60)]
    today = [_draw(rng, moved) for _ in range(25)]
    wealth = semantic.wealth(pool, today, "seed")
    assert wealth.pairs == 24  # the first answer has no witness yet
    assert wealth.e_value > 1e4


def test_pairs_stop_when_the_pool_is_spent() -> None:
    rng = random.Random(5)
    centre = _centre(rng)
    pool = [_draw(rng, centre) for _ in range(9)]  # 3 held out, 6 to pair
    wealth = semantic.wealth(pool, [_draw(rng, centre) for _ in range(20)], "seed")
    assert wealth.pairs == 5


def test_one_moved_answer_in_eight_is_not_same() -> None:
    """One of today's 8 answers moved to an orthogonal meaning: the unbiased estimate and its
    jackknife error are both 0 (no pair of moved answers), yet a share 1/8 is consistent with a
    shift of the margin 0.1 (a share of √0.1 ≈ 0.32). The error at the margin keeps it open."""
    size = semantic.shift([E1] * 60, [E2] + [E1] * 7)
    assert size.estimate == pytest.approx(0.0, abs=1e-12) and size.se == pytest.approx(0.0)
    # Today's projections on Δ = (E2 − E1) / 8 are 1/8 once and −1/8 seven times: sample
    # variance 1/128, over 8 answers, over ‖Δ‖² = 1/32 (the pool's projections are all equal).
    assert size.along == pytest.approx(1 / 32)
    assert not size.rules_out(0.1)
    assert size.upper(0.1) == pytest.approx(semantic.FUTILITY_Z * math.sqrt(2 * 0.1 / 32))


def test_same_at_the_margin_errs_near_its_nominal_rate_against_the_worst_mixture() -> None:
    """A share √margin of today's answers moved to an orthogonal meaning puts the shift exactly
    at the margin. One look at 16 answers calls it *same* in about 8% of draws (nominal 10%; a
    bound at the jackknife's error alone: about 19%, since a draw holding two or three moved
    answers has a small estimate and a small error)."""
    rng = random.Random(5)
    margin = 0.1
    share = math.sqrt(margin)

    def answer(moved: bool) -> list[float]:
        return checked([float(k == int(moved)) + 0.05 * rng.gauss(0.0, 1.0) for k in range(3)])

    wrong = 0
    for _ in range(400):
        pool = [answer(False) for _ in range(60)]
        today = [answer(rng.random() < share) for _ in range(16)]
        wrong += semantic.shift(pool, today).rules_out(margin)
    assert wrong <= 0.13 * 400
