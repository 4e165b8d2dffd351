"""How large a built pool must be: the exact power against a brute-force sum over every answer
sequence, and the building plan's promises (never past baseline-samples, stops once the power is
reached, asks at once what its rate says it needs)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from promptcanary.core.sampling import power
from promptcanary.core.sampling.sequential import Counts, Policy, log_e_worse, upper_rate

POLICY = Policy(baseline_samples=57)


def _brute_force(baseline: Counts, rate: float, sizes: tuple[int, ...], log_bar: float) -> float:
    """Every sequence of today's answers, weighed by its probability: crossed at some look?"""
    total = 0.0
    for answers in itertools.product((True, False), repeat=sizes[-1]):
        passes = sum(answers)
        weight = rate**passes * (1 - rate) ** (len(answers) - passes)
        if any(log_e_worse(baseline, Counts(sum(answers[:n]), n)) >= log_bar for n in sizes):
            total += weight
    return total


@pytest.mark.parametrize(
    ("baseline", "rate", "sizes", "bar"),
    [
        (Counts(20, 20), 0.5, (3, 4, 5, 7, 9, 12), 20.0),
        (Counts(38, 40), 0.45, (3, 4, 5, 7, 9, 12), 20.0),
        (Counts(9, 10), 0.2, (2, 5, 8, 11), 5.0),
        (Counts(30, 30), 0.05, (1, 2, 3, 6, 10), 2000.0),
    ],
)
def test_the_chance_of_crossing_is_the_sum_over_every_answer_sequence(
    baseline: Counts, rate: float, sizes: tuple[int, ...], bar: float
) -> None:
    exact = _brute_force(baseline, rate, sizes, math.log(bar))
    assert 0.0 < exact < 1.0  # a case where both outcomes happen
    assert power.chance_of_crossing(baseline, rate, sizes, math.log(bar)) == pytest.approx(
        exact, abs=1e-12
    )


def test_the_chance_of_crossing_agrees_with_a_simulation_of_the_stages() -> None:
    baseline, rate, sizes = Counts(54, 57), 0.5, power.stage_sizes(POLICY)
    log_bar = math.log(100 / POLICY.alpha)
    rng, hits, reps = random.Random(7), 0, 4000
    for _ in range(reps):
        passes, n = 0, 0
        for size in sizes:
            passes += sum(rng.random() < rate for _ in range(size - n))
            n = size
            if log_e_worse(baseline, Counts(passes, n)) >= log_bar:
                hits += 1
                break
    exact = power.chance_of_crossing(baseline, rate, sizes, log_bar)
    assert abs(hits / reps - exact) < 4 * math.sqrt(exact * (1 - exact) / reps)


def test_stage_sizes_are_the_pull_requests_looks() -> None:
    assert power.stage_sizes(Policy(max_samples=60)) == (
        3,
        4,
        5,
        7,
        9,
        12,
        15,
        19,
        24,
        30,
        38,
        48,
        60,
    )
    assert power.stage_sizes(Policy(max_samples=80))[-3:] == (60, 75, 80)
    assert power.stage_sizes(Policy(min_samples=5, max_samples=5)) == (5,)


def test_power_is_taken_at_the_upper_bound_not_at_the_observed_rate() -> None:
    # 38 of 40: the observed rate 0.95 drops to 0.45, the 95% upper bound (~0.99) to ~0.49: a
    # smaller drop, so less power, which is the point (building stops on a lucky streak).
    baseline = Counts(38, 40)
    bound = upper_rate(baseline, power.BUILD_LEVEL)
    assert 0.95 < bound < 1.0
    log_bar = math.log(100 / POLICY.alpha)
    sizes = power.stage_sizes(POLICY)
    at_bound = power.chance_of_crossing(baseline, bound - POLICY.margin, sizes, log_bar)
    at_rate = power.chance_of_crossing(baseline, 0.95 - POLICY.margin, sizes, log_bar)
    assert power.build_power(baseline, 100, POLICY) == pytest.approx(at_bound)
    assert at_bound < at_rate


def test_a_pool_that_cannot_drop_by_the_margin_shows_it_at_once() -> None:
    # 2 passes in 30: even the upper bound is below 0.5, so no drop of 0.5 is possible.
    assert upper_rate(Counts(2, 30), power.BUILD_LEVEL) < POLICY.margin
    assert power.build_power(Counts(2, 30), 100, POLICY) == 1.0
    assert power.build_power(Counts(0, 0), 100, POLICY) == 0.0


def test_an_all_passing_pool_shows_a_drop_from_a_threshold_on() -> None:
    shown = [power.shows_drop(Counts(n, n), 100, POLICY) for n in range(10, 58)]
    first = shown.index(True)
    assert not any(shown[:first]) and all(shown[first:])
    n = 10 + first
    assert power.build_power(Counts(n, n), 100, POLICY) >= power.BUILD_POWER
    assert power.build_power(Counts(n - 1, n - 1), 100, POLICY) < power.BUILD_POWER
    # More comparisons, a higher bar: a bigger pool.
    more = [power.shows_drop(Counts(k, k), 1000, POLICY) for k in range(10, 58)]
    assert more.index(True) > first


def test_building_starts_with_the_first_stage_and_stops_once_the_drop_shows() -> None:
    m, nothing = 100, Counts(0, 0)
    assert power.build_size(nothing, nothing, m, POLICY) == power.FIRST_BUILD
    tiny = Policy(baseline_samples=4)
    assert power.build_size(nothing, nothing, m, tiny) == 4
    # All passing: asked at once up to the size that shows the drop, then done.
    size = power.build_size(nothing, Counts(10, 10), m, POLICY)
    assert power.shows_drop(Counts(size, size), m, POLICY)
    assert not power.shows_drop(Counts(size - 1, size - 1), m, POLICY)
    assert power.build_size(nothing, Counts(size, size), m, POLICY) == size


def test_building_grows_by_an_eighth_at_least_and_never_past_baseline_samples() -> None:
    m = 100
    # A flaky probe (3 of 4 pass) never shows a drop of 0.5 at e-BH's bar: up to the cap.
    pooled = Counts(30, 40)
    size = power.build_size(pooled, Counts(12, 16), m, POLICY)
    assert size == POLICY.baseline_samples - pooled.n
    assert power.build_size(Counts(30, 57), Counts(10, 10), m, POLICY) == 0
    # A pool nearly large enough still asks an eighth more, not one answer at a time.
    today = Counts(40, 40)
    nearly = Counts(0, 0)
    assert power.build_size(nearly, Counts(24, 24), m, POLICY) >= 24 + 3
    assert power.build_size(nearly, today, m, POLICY) == 40  # already shows it


def test_answers_to_detect_is_what_building_at_the_same_rate_needs() -> None:
    m = 100
    assert power.answers_to_detect(Counts(40, 40), m, POLICY) == 0
    more = power.answers_to_detect(Counts(10, 10), m, POLICY)
    assert more is not None and more > 0
    assert power.shows_drop(Counts(10 + more, 10 + more), m, POLICY)
    # 12 answers today can never reach the bar of a million comparisons, whatever the pool.
    assert power.answers_to_detect(Counts(3, 4), 10**6, Policy(max_samples=12)) is None


def test_the_e_value_falls_as_todays_passes_rise_wherever_it_is_above_one() -> None:
    # What _crossing_passes relies on: the crossing passes are 0 ... k at every look.
    sizes = power.stage_sizes(POLICY)
    checked = 0
    for nb in (1, 4, 20, 57):
        for xb in range(nb + 1):
            for n in sizes:
                values = [log_e_worse(Counts(xb, nb), Counts(x, n)) for x in range(n + 1)]
                for before, after in itertools.pairwise(values):
                    if after >= 0.0:
                        checked += 1
                        assert after <= before + 1e-9, (xb, nb, n)
    assert checked > 1000
