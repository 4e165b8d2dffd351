"""The sequential procedure, checked against exact rational arithmetic and its own promises.

The independent references are exact: Beta densities with integer parameters are polynomials, so
every probability and mixture integral below is computed with :class:`fractions.Fraction`
polynomials, with no floating point and no code shared with the module under test. The validity
claims (an e-value's mean is at most 1; the chance of *ever* crossing 1/alpha while answers
arrive one by one is at most alpha) are computed exactly by summing over every outcome.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import pytest

from promptcanary.core.sampling import sequential as seq
from promptcanary.core.sampling.sequential import Counts, Decision, Look, Policy, Verdict
from tests.unit.core.test_stats import BH_1995

# ── exact references ────────────────────────────────────────────────────────

Poly = list[Fraction]  # coefficients, lowest degree first


def _mul(a: Poly, b: Poly) -> Poly:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def _pow(base: Poly, k: int) -> Poly:
    out: Poly = [Fraction(1)]
    for _ in range(k):
        out = _mul(out, base)
    return out


def _antiderivative(a: Poly) -> Poly:
    return [Fraction(0)] + [c / (i + 1) for i, c in enumerate(a)]


def _at(a: Poly, x: Fraction) -> Fraction:
    return sum((c * x**i for i, c in enumerate(a)), Fraction(0))


def _kernel(passes: int, fails: int) -> Poly:
    """p^passes (1 - p)^fails as a polynomial in p."""
    return _mul(_pow([Fraction(0), Fraction(1)], passes), _pow([Fraction(1), Fraction(-1)], fails))


def exact_prob_greater(a1: int, b1: int, a2: int, b2: int) -> Fraction:
    """P(X > Y), X ~ Beta(a1, b1), Y ~ Beta(a2, b2): integral of f_X(x) F_Y(x) over [0, 1]."""
    f_x, f_y = _kernel(a1 - 1, b1 - 1), _kernel(a2 - 1, b2 - 1)
    norm_x = _at(_antiderivative(f_x), Fraction(1))
    norm_y = _at(_antiderivative(f_y), Fraction(1))
    cdf_y = _antiderivative(f_y)  # F_Y(x) * norm_y
    return _at(_antiderivative(_mul(f_x, cdf_y)), Fraction(1)) / (norm_x * norm_y)


def exact_mixture(baseline: Counts, current: Counts, weight: int = seq.PRIOR_WEIGHT) -> Fraction:
    """The e-value's numerator: both likelihood kernels integrated over the prior
    ``p_b ~ Beta(weight, 1)``, ``p_c | p_b ~ U(0, p_b)``, whose density on the triangle
    ``p_c < p_b`` is ``weight * p_b^(weight - 2)`` (2, the uniform triangle, at weight 2)."""
    inner = _antiderivative(_kernel(current.passes, current.fails))  # integral_0^p_b over p_c
    prior = _mul([Fraction(weight)], _kernel(weight - 2, 0))
    outer = _mul(_mul(prior, _kernel(baseline.passes, baseline.fails)), inner)
    return _at(_antiderivative(outer), Fraction(1))


# ── P(X > Y) ────────────────────────────────────────────────────────────────


class TestProbGreater:
    def test_closed_forms(self) -> None:
        assert seq.prob_greater(1, 1, 1, 1) == pytest.approx(0.5)
        # X with density 2x against a uniform Y: integral of 2x * x = 2/3.
        assert seq.prob_greater(2, 1, 1, 1) == pytest.approx(2 / 3)
        assert seq.prob_greater(1, 1, 2, 1) == pytest.approx(1 / 3)

    @pytest.mark.parametrize(
        "params",
        [(3, 2, 5, 7), (12, 1, 8, 4), (1, 9, 2, 2), (40, 3, 11, 11), (7, 7, 30, 2), (2, 30, 1, 1)],
    )
    def test_matches_exact_rational_integration(self, params: tuple[int, int, int, int]) -> None:
        assert seq.prob_greater(*params) == pytest.approx(
            float(exact_prob_greater(*params)), rel=1e-10, abs=1e-15
        )

    def test_rejects_non_positive_parameters(self) -> None:
        with pytest.raises(ValueError, match="shape"):
            seq.prob_greater(0, 1, 1, 1)


# ── the e-value ─────────────────────────────────────────────────────────────


def exact_e_worse(baseline: Counts, current: Counts) -> float:
    pooled = Fraction(baseline.passes + current.passes, baseline.n + current.n)
    passes, fails = baseline.passes + current.passes, baseline.fails + current.fails
    denominator = pooled**passes * (1 - pooled) ** fails
    return float(exact_mixture(baseline, current) / denominator)


def exact_e_worse_unconstrained(baseline: Counts, current: Counts) -> float:
    """The same numerator over the likelihood at the two observed rates (current at least as good)."""
    rate_b, rate_c = Fraction(baseline.passes, baseline.n), Fraction(current.passes, current.n)
    denominator = (
        rate_b**baseline.passes * (1 - rate_b) ** baseline.fails
        * rate_c**current.passes * (1 - rate_c) ** current.fails
    )  # fmt: skip
    return float(exact_mixture(baseline, current) / denominator)


class TestEValue:
    @pytest.mark.parametrize(
        ("baseline", "current"),
        [
            (Counts(19, 20), Counts(2, 6)),
            (Counts(47, 50), Counts(10, 20)),
            (Counts(8, 8), Counts(1, 3)),
        ],
    )
    def test_matches_exact_mixture_over_maximum(self, baseline: Counts, current: Counts) -> None:
        assert seq.e_worse(baseline, current) == pytest.approx(
            exact_e_worse(baseline, current), rel=1e-9
        )

    def test_no_evidence_when_current_is_as_good(self) -> None:
        assert seq.e_worse(Counts(9, 10), Counts(9, 10)) < 1.0
        assert seq.e_worse(Counts(5, 10), Counts(3, 3)) < 1.0
        assert seq.e_worse(Counts(0, 0), Counts(0, 3)) == 1.0
        assert seq.e_worse(Counts(9, 10), Counts(10, 10)) == pytest.approx(
            exact_e_worse_unconstrained(Counts(9, 10), Counts(10, 10))
        )

    def test_grows_with_a_drop_and_with_answers(self) -> None:
        small = seq.e_worse(Counts(47, 50), Counts(5, 10))
        large = seq.e_worse(Counts(47, 50), Counts(10, 20))
        assert 1.0 < small < large

    def test_improvement_mirrors_regression_with_the_uniform_prior(self) -> None:
        assert seq.e_better(Counts(5, 20), Counts(9, 10)) == pytest.approx(
            math.exp(seq.log_e_worse(Counts(15, 20), Counts(1, 10), 2))
        )
        # The uniform triangle's numerator, exactly: 2 * the integral of the kernels.
        mixture = exact_mixture(Counts(15, 20), Counts(1, 10), weight=2)
        pooled = Fraction(16, 30)
        denominator = pooled**16 * (1 - pooled) ** 14
        assert seq.e_better(Counts(5, 20), Counts(9, 10)) == pytest.approx(
            float(mixture / denominator), rel=1e-9
        )

    def test_the_prior_near_high_rates_gains_on_a_drop_from_095(self) -> None:
        # The reason for Beta(6, 1): a drop from a high rate, the canary case, weighs more.
        baseline, current = Counts(28, 30), Counts(30, 60)
        assert seq.e_worse(baseline, current) > 2 * math.exp(seq.log_e_worse(baseline, current, 2))

    @pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.8, 0.95, 0.999])
    def test_mean_at_most_one_under_the_null(self, p: float) -> None:
        # Exact expectation over every (baseline, current) outcome when both rates equal p.
        nb, nc = 12, 8
        mean = sum(
            math.comb(nb, xb) * p**xb * (1 - p) ** (nb - xb)
            * math.comb(nc, xc) * p**xc * (1 - p) ** (nc - xc)
            * seq.e_worse(Counts(xb, nb), Counts(xc, nc))
            for xb in range(nb + 1)
            for xc in range(nc + 1)
        )  # fmt: skip
        assert mean <= 1.0

    @pytest.mark.parametrize(("p_base", "p_cur"), [(0.9, 0.9), (0.6, 0.6), (0.7, 0.8)])
    def test_crossing_chance_over_all_looks_is_at_most_alpha(
        self, p_base: float, p_cur: float
    ) -> None:
        # Answers arrive one by one up to 40; the test looks after every answer. The exact
        # chance that the e-value *ever* reaches 1/alpha must stay below alpha (Ville).
        assert _chance_ever_crossed(p_base, p_cur, bar=10.0) <= 0.1

    def test_a_real_drop_crosses_often(self) -> None:
        # The same looks on a drop 0.9 -> 0.3: the procedure is not valid by never rejecting.
        assert _chance_ever_crossed(0.9, 0.3, bar=10.0) > 0.5


def _chance_ever_crossed(p_base: float, p_cur: float, bar: float) -> float:
    nb, horizon = 15, 40
    crossed = 0.0
    for xb in range(nb + 1):
        weight = math.comb(nb, xb) * p_base**xb * (1 - p_base) ** (nb - xb)
        crossed += weight * _chance_to_cross(Counts(xb, nb), p_cur, horizon, bar)
    return crossed


def _chance_to_cross(baseline: Counts, p: float, horizon: int, bar: float) -> float:
    @cache
    def go(passes: int, n: int) -> float:
        if n and seq.e_worse(baseline, Counts(passes, n)) >= bar:
            return 1.0
        if n == horizon:
            return 0.0
        return p * go(passes + 1, n + 1) + (1 - p) * go(passes, n + 1)

    return go(0, 0)


# ── e-BH ────────────────────────────────────────────────────────────────────


class TestEBH:
    def test_is_bh_on_reciprocals(self) -> None:
        # Wang & Ramdas (2022): e-BH is BH applied to 1/e. With e = 1/p on Benjamini & Hochberg's
        # (1995) fifteen p-values, the four smallest p-values are rejected at 0.05.
        evalues = [1 / p for p in BH_1995]
        assert seq.e_bh(evalues, 0.05) == [True] * 4 + [False] * 11

    def test_single_discovery_needs_m_over_alpha(self) -> None:
        m = 100
        just = [m / 0.05] + [1.0] * (m - 1)
        short = [m / 0.05 * 0.99] + [1.0] * (m - 1)
        assert seq.e_bh(just, 0.05)[0] is True
        assert seq.e_bh(short, 0.05)[0] is False

    def test_infinite_and_zero_evalues(self) -> None:
        assert seq.e_bh([math.inf, 0.0, 1.0], 0.05) == [True, False, False]


# ── futility ────────────────────────────────────────────────────────────────


class TestFutility:
    def test_all_pass_baseline_settles_after_five_passes(self) -> None:
        # The null rate is 1 - 0.5 (the bound of an all-pass baseline is 1): each pass is worth
        # about 2, and 25 is needed: 2^4 = 16 is short, 2^5 = 32 enough.
        policy = Policy()
        baseline = Counts(100, 100)
        assert not seq.futile(baseline, Counts(4, 4), policy)
        assert seq.futile(baseline, Counts(5, 5), policy)

    def test_a_failure_asks_for_more(self) -> None:
        policy = Policy()
        baseline = Counts(95, 100)
        assert not seq.futile(baseline, Counts(4, 5), policy)
        assert seq.futile(baseline, Counts(11, 12), policy)

    def test_low_baseline_cannot_drop_by_the_margin(self) -> None:
        # 1 pass in 20: the rate's upper bound (99%) is below 0.5, so no drop of 0.5 is possible.
        assert seq.upper_rate(Counts(1, 20)) < 0.5
        assert seq.futile(Counts(1, 20), Counts(0, 1), Policy(margin=0.5))

    def test_an_uncertain_baseline_is_not_taken_at_its_estimate(self) -> None:
        # 3 passes in 10 could be a rate of 0.7, which can drop by 0.5: not settled at once.
        assert seq.upper_rate(Counts(3, 10)) > 0.5
        assert not seq.futile(Counts(3, 10), Counts(0, 1), Policy(margin=0.5))

    def test_upper_rate_is_clopper_pearson(self) -> None:
        # P(X <= 19 | 20, u) = 1 - u^20 = 0.01 at the bound; all-pass: 1.
        assert seq.upper_rate(Counts(19, 20)) == pytest.approx(0.99 ** (1 / 20), abs=1e-9)
        assert seq.upper_rate(Counts(7, 7)) == 1.0
        # P(X <= 0 | 10, u) = (1 - u)^10 = 0.01.
        assert seq.upper_rate(Counts(0, 10)) == pytest.approx(1 - 0.01 ** (1 / 10), abs=1e-9)

    @pytest.mark.parametrize("p_base", [1.0, 0.95, 0.8, 0.6])
    def test_same_after_a_drop_of_the_margin_at_most_five_percent(self, p_base: float) -> None:
        # Exact: a baseline of 20 at p_base, answers one by one up to 40 at p_base - 0.5; the
        # chance that "same" is *ever* declared is at most SAME_BASELINE_LEVEL + futility_level.
        policy = Policy()
        nb, horizon, p_cur = 20, 40, max(0.0, p_base - 0.5)
        total = 0.0
        for xb in range(nb + 1):
            weight = math.comb(nb, xb) * p_base**xb * (1 - p_base) ** (nb - xb)
            if weight < 1e-12:
                continue
            baseline = Counts(xb, nb)

            @cache
            def ever(passes: int, n: int, baseline: Counts = baseline) -> float:
                if n and seq.futile(baseline, Counts(passes, n), policy):
                    return 1.0
                if n == horizon:
                    return 0.0
                return p_cur * ever(passes + 1, n + 1) + (1 - p_cur) * ever(passes, n + 1)

            total += weight * ever(0, 0)
        assert total <= seq.SAME_BASELINE_LEVEL + policy.futility_level


# ── decisions ───────────────────────────────────────────────────────────────


def _looks(*pairs: tuple[Counts, Counts]) -> list[Look]:
    return [Look(b, c) for b, c in pairs]


class TestDecisions:
    def test_undecided_until_evidence(self) -> None:
        (decision,) = seq.step([None], _looks((Counts(95, 100), Counts(2, 3))), Policy())
        assert decision.verdict is Verdict.UNDECIDED

    def test_regression_at_the_single_discovery_bar(self) -> None:
        policy = Policy()
        looks = _looks((Counts(100, 100), Counts(0, 10)), (Counts(100, 100), Counts(4, 4)))
        first, second = seq.step([None, None], looks, policy)
        assert first.verdict is Verdict.REGRESSED
        assert first.e_worse >= 2 / policy.alpha
        assert second.verdict is Verdict.UNDECIDED  # 4 passes do not rule out a drop of 0.5

    def test_decided_comparisons_stay_frozen(self) -> None:
        policy = Policy()
        frozen = Decision(Verdict.SAME, Counts(10, 10), Counts(4, 4), 1.0, 1.0)
        later = _looks((Counts(10, 10), Counts(4, 14)))
        (kept,) = seq.step([frozen], later, policy)
        assert kept is frozen

    def test_finish_rejects_by_e_bh_and_leaves_the_rest_inconclusive(self) -> None:
        policy = Policy()
        m = 4
        decisions = [
            Decision(Verdict.UNDECIDED, Counts(9, 10), Counts(1, 10), m / 0.05 / 2 * 1.01, 1.0),
            Decision(Verdict.UNDECIDED, Counts(9, 10), Counts(1, 10), m / 0.05 / 2 * 1.01, 1.0),
            Decision(Verdict.UNDECIDED, Counts(9, 10), Counts(8, 10), 3.0, 1.0),
            Decision(Verdict.SAME, Counts(9, 10), Counts(9, 10), 1.0, 1.0),
        ]
        final = seq.finish(decisions, policy)
        assert [d.verdict for d in final] == [
            Verdict.REGRESSED, Verdict.REGRESSED, Verdict.UNDECIDED, Verdict.SAME
        ]  # fmt: skip
        assert final[0].p_adjusted is not None and final[0].p_adjusted <= policy.alpha
        # BH on 1/e: 1/3 at rank 3 of 4 gives 1/3 * 4/3.
        assert final[2].p_adjusted == pytest.approx(4 / 9)


class TestPolicy:
    def test_schedule_grows_by_a_quarter_up_to_max(self) -> None:
        policy = Policy(min_samples=3, max_samples=20)
        sizes = [3]
        while sizes[-1] < policy.max_samples:
            sizes.append(policy.next_size(sizes[-1]))
        assert sizes == [3, 4, 5, 7, 9, 12, 15, 19, 20]

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"min_samples": 0}, "min_samples"),
            ({"min_samples": 5, "max_samples": 4}, "min_samples <= max_samples"),
            ({"max_samples": seq.MAX_SAMPLES_CAP + 1}, str(seq.MAX_SAMPLES_CAP)),
            ({"alpha": 0.0}, "alpha"),
            ({"margin": 0.0}, "margin"),
            ({"futility_level": 1.0}, "futility_level"),
        ],
    )
    def test_invalid_values_are_named(self, kwargs: dict[str, float], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            Policy(**kwargs)  # type: ignore[arg-type]


class TestAttenuation:
    """Pass flags that show a drop shrunk (a judge that errs): "same" rules out the shrunk drop,
    and the answers needed to show it grow."""

    def test_same_rules_out_only_the_shrunk_drop(self) -> None:
        # Baseline 0.8; today's 40 answers at 0.7 rule out a drop of 0.5 but not one of 0.25.
        baseline, today, policy = Counts(160, 200), Counts(28, 40), Policy(margin=0.5)
        assert seq.futile(baseline, today, policy)
        assert not seq.futile(baseline, today, policy, attenuation=0.5)

    def test_answers_to_show_grow_as_the_drop_shrinks(self) -> None:
        baseline, policy = Counts(160, 200), Policy(max_samples=60)
        sizes = [seq.answers_to_show(baseline, 4, policy, a) for a in (1.0, 0.8, 0.6, 0.4)]
        assert sizes[0] == 60
        assert sizes == sorted(sizes) and sizes[-1] > sizes[1]
        for size, a in zip(sizes[1:], (0.8, 0.6, 0.4), strict=True):
            shrunk = Policy(margin=0.5 * a, max_samples=size)
            assert seq.detectable(baseline, 4, shrunk) or size == seq.MAX_SAMPLES_CAP

    def test_answers_to_show_stop_at_the_cap(self) -> None:
        shown = seq.answers_to_show(Counts(999, 1000), 10_000, Policy(), 0.01)
        assert shown == seq.MAX_SAMPLES_CAP
