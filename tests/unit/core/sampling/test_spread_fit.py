"""The spread fit: the suite's run-to-run logit variance read from pooled runs by a Cox-Reid
adjusted beta-binomial likelihood, whatever decided each run's size."""

from __future__ import annotations

import math
import random
from collections import Counter

from promptcanary.core.sampling.sequential import Counts
from promptcanary.core.sampling.spread_fit import (
    MAX_SPREAD,
    SpreadReading,
    adjusted_profile,
    estimate_spread,
    log_likelihood,
    read_spread,
)


def _logit_normal(rate: float, sd: float, rng: random.Random) -> float:
    return 1 / (1 + math.exp(-(math.log(rate / (1 - rate)) + rng.gauss(0.0, sd))))


def _fixed(rate: float, sd: float, size: int, runs: int, rng: random.Random) -> list[Counts]:
    out = []
    for _ in range(runs):
        p = _logit_normal(rate, sd, rng)
        out.append(Counts(sum(rng.random() < p for _ in range(size)), size))
    return out


def _staged(rate: float, sd: float, runs: int, rng: random.Random) -> list[Counts]:
    """Runs sized by their answers, as ``samples: auto`` sizes them: a run stops at 5 answers
    when all pass and grows (10, 20, 40) while one fails."""
    out = []
    for _ in range(runs):
        p = _logit_normal(rate, sd, rng)
        passes = n = 0
        for size in (5, 10, 20, 40):
            passes += sum(rng.random() < p for _ in range(size - n))
            n = size
            if passes == n:
                break
        out.append(Counts(passes, n))
    return out


class TestWhatCannotShowASpread:
    def test_a_pool_of_one_run_is_the_one_run_value(self) -> None:
        assert estimate_spread([[Counts(40, 50)]], lone=0.2) == 0.2
        assert estimate_spread([[Counts(40, 50)]]) == 0.0  # no spread on the first pull request
        assert estimate_spread([]) == 0.0

    def test_all_pass_comparisons_carry_no_weight(self) -> None:
        assert estimate_spread([[Counts(10, 10), Counts(3, 3)]], lone=0.5) == 0.0
        rng = random.Random(4)
        varied = [_fixed(0.85, 1.0, 30, 5, rng) for _ in range(40)]
        clean = [[Counts(30, 30), Counts(5, 5)]] * 40
        assert estimate_spread(varied + clean) == estimate_spread(varied) > 0.3


class TestRecovery:
    def test_runs_at_one_rate_show_almost_no_spread(self) -> None:
        rng = random.Random(1)
        comparisons = [_fixed(0.8, 0.0, 30, 20, rng) for _ in range(50)]
        assert estimate_spread(comparisons) < 0.05

    def test_recovers_the_logit_variance_of_a_spread_model(self) -> None:
        rng = random.Random(2)
        comparisons = [_fixed(0.85, 1.0, 40, 20, rng) for _ in range(200)]
        # The beta-binomial's correlation p(1-p)tau2 is the delta method's: within 30%.
        assert 0.7 < estimate_spread(comparisons) < 1.3

    def test_runs_sized_by_their_answers_do_not_shrink_it(self) -> None:
        # A method-of-moments estimate weighs runs by their size as if fixed in advance and
        # reads this spread as about half of it; the likelihood ignores the stopping rule.
        rng = random.Random(3)
        comparisons = [
            _fixed(rate, 1.0, 28, 1, rng) + _staged(rate, 1.0, 9, rng)
            for rate in (0.9, 0.93, 0.95, 0.97) * 50
        ]
        assert 0.7 < estimate_spread(comparisons) < 1.3

    def test_two_runs_a_comparison_are_not_read_as_half(self) -> None:
        # Profiling out each comparison's mean leaves one degree of freedom of two runs and
        # halves a plain likelihood's variance (Neyman-Scott); the Cox-Reid term restores it.
        rng = random.Random(5)
        comparisons = [_fixed(0.85, 1.0, 30, 2, rng) for _ in range(300)]
        adjusted = estimate_spread(comparisons)
        grid = [i / 20 for i in range(41)]
        plain = max(grid, key=lambda t: sum(_profile(c, t) for c in comparisons))
        assert adjusted > 0.6 and plain < 0.75 * adjusted

    def test_more_spread_in_the_runs_gives_a_larger_estimate(self) -> None:
        calm = [[Counts(45, 50), Counts(44, 50), Counts(46, 50)]] * 5
        wild = [[Counts(49, 50), Counts(35, 50), Counts(47, 50)]] * 5
        assert estimate_spread(wild) > estimate_spread(calm)


class TestLeaveOneOut:
    def test_a_prompt_whose_runs_slide_does_not_widen_itself(self) -> None:
        # Nine steady flaky comparisons and one whose promoted runs slid from 0.95 to 0.55: the
        # suite reads a spread from the slide; the sliding comparison is widened only by what
        # the other nine show: a fraction of it.
        rng = random.Random(6)
        steady = {f"s{i}": _fixed(0.93, 0.0, 20, 8, rng) for i in range(9)}
        sliding = [Counts(round(20 * (0.95 - 0.05 * j)), 20) for j in range(9)]
        reading = read_spread({**steady, "slide": sliding})
        assert reading.suite > 0.1
        assert reading.of("slide") < reading.suite / 2
        assert reading.of("s0") > reading.of("slide")

    def test_each_comparison_is_read_from_the_others(self) -> None:
        rng = random.Random(7)
        comparisons = {i: _fixed(0.85, 1.0, 30, 6, rng) for i in range(6)}
        reading = read_spread(comparisons)
        for key in comparisons:
            others = [runs for k, runs in comparisons.items() if k != key]
            assert math.isclose(reading.of(key), estimate_spread(others), abs_tol=1e-9)

    def test_without_another_comparison_there_is_nothing_to_read(self) -> None:
        wild = [Counts(20, 20), Counts(10, 20), Counts(19, 20)]
        reading = read_spread({"a": wild, "clean": [Counts(20, 20), Counts(5, 5)]})
        assert reading.suite > 0.5 and reading.of("a") == 0.0
        assert reading.of("clean") == reading.suite  # all-pass: not part of the fit

    def test_a_given_spread_is_every_comparisons(self) -> None:
        assert SpreadReading(0.4).of("anything") == 0.4


class TestMaximum:
    def test_the_fit_lands_between_grid_points_where_the_likelihood_peaks(self) -> None:
        # The grid only seeds the search: a brute-force maximum on a fine grid agrees.
        rng = random.Random(8)
        comparisons = [_fixed(0.8, 0.8, 25, 6, rng) for _ in range(30)]
        fine = [MAX_SPREAD * i / 800 for i in range(801)]
        best = max(fine, key=lambda t: sum(adjusted_profile(_grouped(c), t) for c in comparisons))
        assert abs(estimate_spread(comparisons) - best) < 0.05 * max(best, 0.2)


def _grouped(runs: list[Counts]) -> Counter[tuple[int, int]]:
    return Counter((c.passes, c.n) for c in runs)


def _profile(runs: list[Counts], spread: float) -> float:
    return max(log_likelihood(_grouped(runs), x / 10, spread) for x in range(-40, 80))


class TestLikelihood:
    def test_no_spread_is_the_binomial(self) -> None:
        runs = Counter({(8, 10): 2, (5, 5): 1})
        m = 0.8
        binomial = 21 * math.log(m) + 4 * math.log(1 - m)
        assert math.isclose(log_likelihood(runs, math.log(m / (1 - m)), 0.0), binomial)
        near = log_likelihood(runs, math.log(m / (1 - m)), 1e-6)
        assert math.isclose(near, binomial, abs_tol=1e-3)

    def test_the_adjustment_penalises_a_mean_the_runs_pin_down(self) -> None:
        # More answers at one rate pin the mean more tightly: a larger information, a larger
        # penalty, so the adjusted value drops below the profile's by more.
        small, large = Counter({(8, 10): 2}), Counter({(80, 100): 2})
        gap_small = _profile_of(small) - adjusted_profile(small, 0.0)
        gap_large = _profile_of(large) - adjusted_profile(large, 0.0)
        assert gap_large > gap_small


def _profile_of(runs: Counter[tuple[int, int]]) -> float:
    return max(log_likelihood(runs, x / 1000, 0.0) for x in range(0, 3000))
