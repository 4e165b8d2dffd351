"""Statistics for repeated samples, checked against published values and hand-worked cases."""

from __future__ import annotations

import random

import pytest

from promptcanary.core import stats

# ── Fisher's exact test ─────────────────────────────────────────────────────


class TestFisher:
    def test_lady_tasting_tea(self) -> None:
        # Fisher (1935): 3 of 4 cups right vs 1 of 4, one-sided p = 17/70 = 0.2429.
        result = stats.fisher_one_sided(3, 4, 1, 4)
        assert result.p_worse == pytest.approx(17 / 70)
        assert result.p_better == pytest.approx(69 / 70)

    def test_studying_by_sex_table(self) -> None:
        # Wikipedia, "Fisher's exact test": 1 of 12 men vs 9 of 12 women studying;
        # one-tailed p = 0.001346076 + 0.000033652 = 0.0013797.
        result = stats.fisher_one_sided(1, 12, 9, 12)
        assert result.p_better == pytest.approx(0.0013797, abs=1e-7)
        assert result.p_worse > 0.99

    def test_directions_mirror_when_sides_swap(self) -> None:
        forward = stats.fisher_one_sided(9, 10, 4, 10)
        backward = stats.fisher_one_sided(4, 10, 9, 10)
        assert forward.p_worse == pytest.approx(backward.p_better)
        assert forward.min_p_worse == pytest.approx(backward.min_p_better)

    def test_minimum_attainable_p_is_the_most_extreme_table(self) -> None:
        # 4 failures among 20 samples: the most extreme table puts all 4 in the current run.
        result = stats.fisher_one_sided(10, 10, 6, 10)
        assert result.min_p_worse == pytest.approx(210 / 4845)
        assert result.p_worse == pytest.approx(result.min_p_worse)

    def test_always_passing_sides_cannot_reach_significance(self) -> None:
        result = stats.fisher_one_sided(10, 10, 10, 10)
        assert (result.p_worse, result.min_p_worse, result.min_p_better) == (1.0, 1.0, 1.0)

    def test_no_samples_is_no_evidence(self) -> None:
        assert stats.fisher_one_sided(0, 0, 3, 5) == stats.OneSided(1.0, 1.0, 1.0, 1.0)

    def test_impossible_counts_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="passes"):
            stats.fisher_one_sided(6, 5, 0, 5)

    def test_mid_p_subtracts_half_the_observed_table(self) -> None:
        plain = stats.fisher_one_sided(3, 4, 1, 4)
        mid = stats.fisher_one_sided(3, 4, 1, 4, mid_p=True)
        observed = 16 / 70  # P(X = 3) for the tea table
        assert mid.p_worse == pytest.approx(plain.p_worse - observed / 2)


# ── Mann–Whitney ────────────────────────────────────────────────────────────


class TestMannWhitney:
    def test_conover_example(self) -> None:
        # Conover's worked example (also in SciPy's mannwhitneyu docs): U = 17, asymptotic
        # two-sided p = 0.11134688653314041 with continuity correction, so one-sided 0.0556734.
        males = [19, 22, 16, 29, 24]
        females = [20, 11, 17, 12]
        result = stats.mann_whitney_one_sided(females, males)  # "current" = males: higher
        assert result.p_better == pytest.approx(0.11134688653314041 / 2, rel=1e-9)
        assert result.p_worse > 0.9

    def test_ties_use_midranks_and_tie_correction(self) -> None:
        # Hand-worked: baseline [1, 2, 2], current [2, 3, 3]. Midranks 1, 3, 3 | 3, 5.5, 5.5.
        # U(current) = 14 - 6 = 8; mean 4.5; var = 9/12 * (7 - (24 + 6) / 30) = 4.5.
        result = stats.mann_whitney_one_sided([1, 2, 2], [2, 3, 3])
        z = (8 - 4.5 - 0.5) / 4.5**0.5
        assert result.p_better == pytest.approx(stats.normal_cdf(-z))

    def test_all_ties_carry_no_evidence(self) -> None:
        assert stats.mann_whitney_one_sided([0.5] * 4, [0.5] * 6) == stats.OneSided(
            1.0, 1.0, 1.0, 1.0
        )

    def test_extreme_separation_reaches_the_minimum(self) -> None:
        result = stats.mann_whitney_one_sided([0.9, 0.8, 0.7], [0.1, 0.2, 0.3])
        assert result.p_worse == pytest.approx(result.min_p_worse)
        assert result.p_worse < 0.05

    def test_empty_side_is_no_evidence(self) -> None:
        assert stats.mann_whitney_one_sided([], [0.1, 0.2]).p_worse == 1.0


# ── intervals ────────────────────────────────────────────────────────────────


class TestIntervals:
    def test_wilson_published_value(self) -> None:
        # 81 of 263: Wilson 95% interval [0.2553, 0.3662].
        lo, hi = stats.wilson_interval(81, 263)
        assert (lo, hi) == (pytest.approx(0.2553, abs=1e-4), pytest.approx(0.3662, abs=1e-4))

    def test_wilson_newcombe_table_i(self) -> None:
        # Newcombe (1998a), Table I, method 3: 0/10 → [0, 0.2775].
        assert stats.wilson_interval(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))

    def test_wilson_with_no_trials_is_everything(self) -> None:
        assert stats.wilson_interval(0, 0) == (0.0, 1.0)

    @pytest.mark.parametrize(
        ("x1", "n1", "x2", "n2", "lower", "upper"),
        [
            # Newcombe (1998b), Table II, method 10 (hybrid score), examples (a) and (b).
            (56, 70, 48, 80, 0.0524, 0.3339),
            (9, 10, 3, 10, 0.1705, 0.8090),
        ],
    )
    def test_newcombe_difference(
        self, x1: int, n1: int, x2: int, n2: int, lower: float, upper: float
    ) -> None:
        lo, hi = stats.newcombe_interval(x1, n1, x2, n2)
        assert lo == pytest.approx(lower, abs=1e-4)
        assert hi == pytest.approx(upper, abs=1e-4)

    def test_t_quantile_matches_tables(self) -> None:
        assert stats.t_quantile(0.975, 10) == pytest.approx(2.228139, abs=1e-6)
        assert stats.t_quantile(0.975, 1) == pytest.approx(12.706205, abs=1e-5)
        assert stats.t_quantile(0.025, 8) == pytest.approx(-2.306004, abs=1e-6)

    def test_normal_quantile(self) -> None:
        assert stats.normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-6)

    def test_welch_equal_spread_uses_pooled_df(self) -> None:
        # Means 3 and 4, variances 2.5 each, n = 5: se = 1, df = 8, t(0.975, 8) = 2.306004.
        lo, hi = stats.welch_interval([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
        assert lo == pytest.approx(-1 - 2.306004, abs=1e-6)
        assert hi == pytest.approx(-1 + 2.306004, abs=1e-6)

    def test_welch_without_spread_is_degenerate(self) -> None:
        assert stats.welch_interval([1.0, 1.0], [0.5, 0.5]) == (0.5, 0.5)

    def test_welch_needs_two_values_a_side(self) -> None:
        with pytest.raises(ValueError, match="at least 2"):
            stats.welch_interval([1.0], [0.5, 0.6])

    def test_confidence_must_be_a_proportion(self) -> None:
        with pytest.raises(ValueError, match="confidence"):
            stats.wilson_interval(1, 2, confidence=95)


# ── multiplicity ─────────────────────────────────────────────────────────────

BH_1995 = [
    0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000,
]  # fmt: skip


class TestBenjaminiHochberg:
    def test_published_example_rejects_first_four(self) -> None:
        # Benjamini & Hochberg (1995), section 4: at q = 0.05 the four smallest are rejected.
        adjusted = stats.benjamini_hochberg(BH_1995)
        assert [p < 0.05 for p in adjusted] == [True] * 4 + [False] * 11
        assert adjusted[3] == pytest.approx(0.0095 * 15 / 4)
        assert adjusted[4] == pytest.approx(0.0201 * 15 / 5)

    def test_input_order_is_kept(self) -> None:
        order = list(range(15))
        random.Random(7).shuffle(order)
        shuffled = stats.benjamini_hochberg([BH_1995[i] for i in order])
        expected = stats.benjamini_hochberg(BH_1995)
        assert shuffled == [expected[i] for i in order]

    def test_monotone_and_capped(self) -> None:
        adjusted = stats.benjamini_hochberg([0.9, 0.04, 0.03, 0.5])
        ranked = sorted(zip([0.9, 0.04, 0.03, 0.5], adjusted, strict=True))
        assert [a for _, a in ranked] == sorted(a for _, a in ranked)
        assert max(adjusted) <= 1.0
        assert adjusted[1] == adjusted[2] == pytest.approx(0.04 * 4 / 2)

    def test_empty_family(self) -> None:
        assert stats.benjamini_hochberg([]) == []


class TestTestable:
    def test_hypotheses_that_cannot_reach_alpha_are_left_out(self) -> None:
        assert stats.testable([1.0, 0.2, 0.001], 0.05) == [False, False, True]

    def test_tarone_k_is_the_smallest_consistent_family(self) -> None:
        # k=1: 5 can reach 0.05; k=2: 3 reach 0.025; k=3: 3 reach 0.0167 ≤ 3 → K = 3.
        chosen = stats.testable([0.01, 0.01, 0.01, 0.04, 0.04], 0.05)
        assert chosen == [True, True, True, False, False]

    def test_nothing_testable(self) -> None:
        assert stats.testable([1.0, 1.0], 0.05) == [False, False]


# ── test_samples, the entry point of compare() ─────────────────────────────


class TestSampleTest:
    def test_binary_scores_use_fisher_alone(self) -> None:
        result = stats.test_samples([1.0] * 10, [True] * 10, [1.0] * 2 + [0.0] * 8,
                                    [True] * 2 + [False] * 8)  # fmt: skip
        assert result.method == "fisher"
        assert result.p_worse == pytest.approx(stats.fisher_one_sided(10, 10, 2, 10).p_worse)

    def test_continuous_scores_combine_by_bonferroni(self) -> None:
        base = [0.9, 0.8, 0.85, 0.95, 0.7]
        cur = [0.5, 0.4, 0.65, 0.3, 0.55]
        passes_b, passes_c = [s >= 0.6 for s in base], [s >= 0.6 for s in cur]
        result = stats.test_samples(base, passes_b, cur, passes_c)
        fisher = stats.fisher_one_sided(5, 5, 1, 5).p_worse
        rank = stats.mann_whitney_one_sided(base, cur).p_worse
        assert result.method == "fisher+mann-whitney"
        assert result.p_worse == pytest.approx(min(1.0, 2 * min(fisher, rank)))

    def test_a_component_that_cannot_reject_does_not_cost_a_bonferroni_factor(self) -> None:
        base, cur = [0.9, 0.95, 0.92, 0.97], [0.7, 0.75, 0.72, 0.71]
        result = stats.test_samples(base, [True] * 4, cur, [True] * 4)
        assert result.p_worse == pytest.approx(stats.mann_whitney_one_sided(base, cur).p_worse)

    def test_intervals_are_current_minus_baseline(self) -> None:
        result = stats.test_samples([1.0] * 10, [True] * 10, [0.0] * 8 + [1.0] * 2,
                                    [False] * 8 + [True] * 2)  # fmt: skip
        lo, hi = result.pass_rate_ci
        assert -1.0 <= lo < -0.8 < hi < 0.0
        lo, hi = result.score_ci
        assert -1.0 <= lo < -0.8 < hi < 0.0

    def test_mismatched_lengths_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="score and a pass flag"):
            stats.test_samples([1.0, 1.0], [True], [1.0], [True])


# -- latency, tokens, cost -----------------------------------------------------------------------
@pytest.mark.parametrize("q", [0.0, 0.05, 0.5, 0.95, 1.0])
def test_quantile_is_the_linear_interpolation_of_the_standard_library(q: float) -> None:
    import statistics

    rng = random.Random(7)
    values = [rng.lognormvariate(6, 1) for _ in range(37)]
    # statistics.quantiles(method="inclusive") is the same definition (R's type 7) at cut points.
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    expected = {0.0: min(values), 0.05: cuts[0], 0.5: cuts[9], 0.95: cuts[18], 1.0: max(values)}
    assert stats.quantile(values, q) == pytest.approx(expected[q])


def test_quantile_rejects_nothing_and_levels_outside_0_1() -> None:
    with pytest.raises(ValueError):
        stats.quantile([], 0.5)
    with pytest.raises(ValueError):
        stats.quantile([1.0], 1.5)


def test_percent_change() -> None:
    assert stats.percent_change(200.0, 300.0) == pytest.approx(50.0)
    assert stats.percent_change(0.0, 1.0) is None


def _mean_of_means(strata: stats.Strata) -> float:
    return sum(sum(s) / len(s) for s in strata) / len(strata)


def test_bootstrap_needs_repeated_samples_on_both_sides() -> None:
    single = [[1.0], [2.0]]
    repeated = [[1.0, 1.2], [2.0, 2.2]]
    assert stats.bootstrap_change(single, repeated, _mean_of_means) is None
    assert stats.bootstrap_change(repeated, single, _mean_of_means) is None


def test_bootstrap_is_reproducible_and_brackets_a_real_doubling() -> None:
    rng = random.Random(3)
    baseline = [[rng.gauss(100, 10) for _ in range(10)] for _ in range(5)]
    current = [[2 * v for v in stratum] for stratum in baseline]

    first = stats.bootstrap_change(baseline, current, _mean_of_means)
    again = stats.bootstrap_change(baseline, current, _mean_of_means)

    assert first is not None and first == again
    low, high = first
    assert 60 < low < 100 < high < 140


def test_bootstrap_interval_covers_zero_for_samples_from_one_distribution() -> None:
    rng = random.Random(11)
    baseline = [[rng.gauss(500, 100) for _ in range(8)] for _ in range(4)]
    current = [[rng.gauss(500, 100) for _ in range(8)] for _ in range(4)]

    interval = stats.bootstrap_change(baseline, current, _mean_of_means)

    assert interval is not None and interval[0] < 0 < interval[1]
