"""The attenuation of judged comparisons, from the judge's canaries."""

from __future__ import annotations

import math

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import JudgeCheckResult
from promptcanary.core.run import judge_noise
from promptcanary.core.run.judge_noise import attenuation, judged_attenuation, majority_error


def checks(wrong_pass: int, wrong_fail: int, votes: int = 30) -> list[JudgeCheckResult]:
    """One canary of each kind, ``votes`` votes each, that many of them wrong."""
    return [
        JudgeCheckResult(
            index=0,
            expected="pass",
            verdicts=["fail"] * wrong_pass + ["pass"] * (votes - wrong_pass),
        ),
        JudgeCheckResult(
            index=1,
            expected="fail",
            verdicts=["pass"] * wrong_fail + ["fail"] * (votes - wrong_fail),
        ),
    ]


def test_no_canary_votes_leave_the_drop_as_it_is() -> None:
    assert attenuation([]) == 1.0
    assert attenuation([JudgeCheckResult(index=0, expected="pass", errors=["HTTP 500"])]) == 1.0


def test_more_disagreement_hides_more_of_a_drop() -> None:
    shown = [attenuation(checks(k, k)) for k in (0, 3, 6, 9)]
    assert shown == sorted(shown, reverse=True)
    assert shown[0] < 1.0  # 30 right votes do not prove an exact judge
    # Each kind's error is bounded from above: the attenuation is below 1 - 2 * observed rate.
    assert shown[2] < 1 - 2 * 6 / 30


def test_strictness_and_leniency_both_count() -> None:
    # A judge failing good answers and one passing bad ones hide the same share of a drop.
    assert attenuation(checks(6, 0)) == attenuation(checks(0, 6))
    assert attenuation(checks(6, 6)) < attenuation(checks(6, 0))


def test_one_kind_of_canary_stands_for_both() -> None:
    only_pass = checks(6, 0)[:1]
    assert attenuation(only_pass) == attenuation(checks(6, 6))


def test_a_majority_of_votes_errs_less() -> None:
    noisy = checks(6, 6)
    assert attenuation(noisy, 3) > attenuation(noisy, 1)
    assert majority_error(0.2, 1) == pytest.approx(0.2)
    assert majority_error(0.2, 3) == pytest.approx(3 * 0.2**2 * 0.8 + 0.2**3)


def test_a_judge_near_a_coin_is_floored() -> None:
    assert attenuation(checks(14, 14)) == judge_noise.MIN_ATTENUATION


def test_the_error_bound_is_clopper_pearsons() -> None:
    # No wrong vote in n: the bound solves (1 - p)^n = level.
    bound = judge_noise.error_bound(30, 0)
    assert bound is not None
    assert math.isclose((1 - bound) ** 30, judge_noise.NOISE_LEVEL, rel_tol=1e-6)
    assert judge_noise.error_bound(0, 0) is None


def test_each_judged_probe_gets_its_own_attenuation() -> None:
    suite = suite_from_text(
        """
name: s
judge: {model: fake/judge}
probes:
  - {type: llm_judge, rubric: Good., id: one}
  - {type: llm_judge, rubric: Good., id: three, judge_samples: 3}
  - {type: response_length, max_chars: 10}
prompts:
  - {id: a, text: Hi}
"""
    )
    noisy = checks(6, 6)
    assert judged_attenuation(suite, noisy) == {
        "one": attenuation(noisy, 1),
        "three": attenuation(noisy, 3),
    }
    assert judged_attenuation(suite, []) == {}
