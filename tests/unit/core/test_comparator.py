"""compare(): the spec's single-sample threshold rule and the repeated-sample statistics."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from promptcanary.core.comparator import compare
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    DriftReport,
    ProbeComparison,
    ProbeResult,
    Provenance,
    ProviderConfig,
)

PROVIDER = ProviderConfig(model_id="openai/gpt-4o-mini")

# (prompt_id, probe_key) → samples of (score, passed); None marks an errored sample.
Sample = tuple[float, bool] | None
Rows = dict[tuple[str, str], list[Sample]]


def make_run(
    rows: Rows, *, suite: str = "s", provider: ProviderConfig = PROVIDER
) -> CanaryRunResult:
    results = []
    for (prompt_id, probe_key), samples in rows.items():
        for i, sample in enumerate(samples):
            score, passed = sample if sample is not None else (0.0, False)
            results.append(
                ProbeResult(
                    probe_id=probe_key.split("#")[0],
                    probe_key=probe_key,
                    prompt_id=prompt_id,
                    passed=passed,
                    score=score,
                    sample=i,
                    errored=sample is None,
                    details="boom" if sample is None else f"sample {i}",
                )
            )
    n = max((len(s) for s in rows.values()), default=1)
    return CanaryRunResult(
        suite_name=suite, provider=provider, probe_results=results,
        provenance=Provenance(samples=n),
    )  # fmt: skip


def make_baseline(rows: Rows, **kwargs: object) -> BaselineSnapshot:
    run = make_run(rows, **kwargs)  # type: ignore[arg-type]
    return BaselineSnapshot.of_run(run)


def one(score: float, passed: bool) -> list[Sample]:
    return [(score, passed)]


def binary(passes: int, n: int) -> list[Sample]:
    return [(1.0, True)] * passes + [(0.0, False)] * (n - passes)


def row(report: DriftReport, prompt_id: str, probe_key: str) -> ProbeComparison:
    matches = [
        c for c in report.comparisons if (c.prompt_id, c.probe_key) == (prompt_id, probe_key)
    ]
    assert len(matches) == 1, matches
    return matches[0]


def keys(items: Iterable[ProbeComparison]) -> list[tuple[str, str]]:
    return [(c.prompt_id, c.probe_key) for c in items]


# ── single sample: the spec's threshold rule ───────────────────────────────


class TestThresholdRule:
    def test_identical_runs_have_no_drift(self) -> None:
        rows: Rows = {("p1", "json_validity"): one(1.0, True), ("p2", "verbosity"): one(0.4, False)}
        report = compare(make_baseline(rows), make_run(rows))
        assert (report.regressions, report.improvements) == ([], [])
        assert (report.new_prompts, report.removed_prompts, report.errored) == ([], [], [])
        assert len(report.comparisons) == 2
        assert report.statistical is False and report.alpha is None

    @pytest.mark.parametrize(
        ("before", "after", "regression", "improvement"),
        [
            ((1.0, True), (0.0, False), True, False),  # pass → fail, big drop
            ((0.9, True), (0.86, False), False, False),  # pass → fail, drop under threshold
            ((1.0, True), (0.7, True), False, False),  # pass → pass with a drop
            ((0.6, False), (0.2, False), True, False),  # fail → fail with a drop
            ((0.2, False), (0.9, True), False, True),  # fail → pass: improvement
            ((0.7, True), (0.95, True), False, True),  # pass → pass with a gain
            ((1.0, True), (0.95, False), True, False),  # exactly the threshold counts
        ],
    )
    def test_spec_cases(
        self,
        before: tuple[float, bool],
        after: tuple[float, bool],
        regression: bool,
        improvement: bool,
    ) -> None:
        key = ("p", "probe")
        report = compare(make_baseline({key: [before]}), make_run({key: [after]}))
        c = row(report, *key)
        assert (c.regression, c.improvement) == (regression, improvement)
        assert c.score_delta == pytest.approx(after[0] - before[0])
        assert c.p_value is None and c.pass_rate_ci is None

    def test_thresholds_are_parameters(self) -> None:
        key = ("p", "probe")
        report = compare(
            make_baseline({key: one(1.0, True)}),
            make_run({key: one(0.8, False)}),
            regression_threshold=0.3,
        )
        assert not row(report, *key).regression


class TestMembership:
    def test_new_and_removed_prompts_are_listed_not_compared(self) -> None:
        base = {("old", "p"): one(1.0, True), ("kept", "p"): one(1.0, True)}
        cur = {("new", "p"): one(0.0, False), ("kept", "p"): one(1.0, True)}
        report = compare(make_baseline(base), make_run(cur))
        assert (report.new_prompts, report.removed_prompts) == (["new"], ["old"])
        assert keys(report.comparisons) == [("kept", "p")]
        assert not report.has_regressions

    def test_new_and_removed_probes_on_a_kept_prompt(self) -> None:
        base = {("p", "a"): one(1.0, True), ("p", "gone"): one(1.0, True)}
        cur = {("p", "a"): one(1.0, True), ("p", "added"): one(0.0, False)}
        report = compare(make_baseline(base), make_run(cur))
        assert [(r.prompt_id, r.probe_key) for r in report.new_probes] == [("p", "added")]
        assert [(r.prompt_id, r.probe_key) for r in report.removed_probes] == [("p", "gone")]
        assert keys(report.comparisons) == [("p", "a")]
        assert not report.has_regressions

    def test_errored_results_are_listed_not_compared(self) -> None:
        base = {("p", "a"): one(1.0, True), ("p", "b"): one(1.0, True)}
        cur = {("p", "a"): [None], ("p", "b"): one(1.0, True)}
        report = compare(make_baseline(base), make_run(cur))
        assert [(e.prompt_id, e.probe_key, e.side, e.error) for e in report.errored] == [
            ("p", "a", "current", "boom")
        ]
        assert keys(report.comparisons) == [("p", "b")]
        assert not report.has_regressions

    def test_two_keys_of_one_probe_stay_two_rows(self) -> None:
        base = {
            ("p", "keyword_presence#a1"): one(1.0, True),
            ("p", "keyword_presence#b2"): one(1.0, True),
        }
        cur = {
            ("p", "keyword_presence#a1"): one(1.0, True),
            ("p", "keyword_presence#b2"): one(0.0, False),
        }
        report = compare(make_baseline(base), make_run(cur))
        assert len(report.comparisons) == 2
        assert keys(report.regressions) == [("p", "keyword_presence#b2")]
        assert {c.probe_id for c in report.comparisons} == {"keyword_presence"}

    def test_comparisons_follow_the_current_runs_prompt_order(self) -> None:
        # After prompts are reordered in the suite, reports list them in the suite's new order.
        base = {(p, "a"): one(1.0, True) for p in ("x", "y", "z")}
        cur = {(p, "a"): one(1.0, True) for p in ("z", "x", "y")}
        report = compare(make_baseline(base), make_run(cur))
        assert [c.prompt_id for c in report.comparisons] == ["z", "x", "y"]

    def test_suite_name_mismatch_raises(self) -> None:
        rows: Rows = {("p", "a"): one(1.0, True)}
        with pytest.raises(ValueError, match="Suite name mismatch"):
            compare(make_baseline(rows, suite="one"), make_run(rows, suite="two"))

    def test_model_mismatch_is_a_warning(self) -> None:
        rows: Rows = {("p", "a"): one(1.0, True)}
        other = ProviderConfig(model_id="anthropic/claude-3-haiku")
        report = compare(make_baseline(rows), make_run(rows, provider=other))
        assert any("anthropic/claude-3-haiku" in w for w in report.warnings)
        assert not report.has_regressions

    def test_an_edited_prompt_is_named_in_a_warning(self) -> None:
        rows: Rows = {("p", "a"): one(1.0, True), ("q", "a"): one(1.0, True)}
        baseline, current = make_baseline(rows), make_run(rows)
        baseline.run_result.provenance.prompt_hashes.update(p="aaaa", q="bbbb", gone="cccc")
        current.provenance.prompt_hashes.update(p="aaaa", q="dddd", new="eeee")

        report = compare(baseline, current)

        [warning] = [w for w in report.warnings if "edited" in w]
        assert "1 prompt(s)" in warning and "(q)" in warning
        # Unchanged, added and removed prompts are not "edited".
        assert "gone" not in warning and "new" not in warning.split(":")[0]

    def test_no_prompt_warning_when_hashes_are_unknown_or_equal(self) -> None:
        rows: Rows = {("p", "a"): one(1.0, True)}
        baseline, current = make_baseline(rows), make_run(rows)
        assert not [w for w in compare(baseline, current).warnings if "edited" in w]
        baseline.run_result.provenance.prompt_hashes["p"] = "aaaa"
        current.provenance.prompt_hashes["p"] = "aaaa"
        assert not [w for w in compare(baseline, current).warnings if "edited" in w]


# ── repeated samples ────────────────────────────────────────────────────────


class TestRepeatedSamples:
    def test_same_pass_rate_is_no_regression(self) -> None:
        key = ("p", "a")
        report = compare(make_baseline({key: binary(8, 10)}), make_run({key: binary(8, 10)}))
        c = row(report, *key)
        assert not c.regression and not c.improvement
        assert c.flaky
        assert (c.baseline_samples, c.current_samples) == (10, 10)
        assert c.baseline_pass_rate == pytest.approx(0.8)
        assert report.statistical and report.alpha == 0.05

    def test_collapse_is_a_significant_regression(self) -> None:
        key = ("p", "a")
        report = compare(make_baseline({key: binary(10, 10)}), make_run({key: binary(2, 10)}))
        c = row(report, *key)
        assert c.regression
        assert c.p_value is not None and c.p_adjusted is not None
        assert c.p_adjusted < 0.05
        assert c.pass_rate_ci is not None and c.pass_rate_ci[1] < 0
        assert c.score_ci is not None and c.score_ci[0] <= -0.8 <= c.score_ci[1]
        assert not c.flaky  # the baseline never failed

    def test_improvement_is_symmetric(self) -> None:
        key = ("p", "a")
        report = compare(make_baseline({key: binary(2, 10)}), make_run({key: binary(10, 10)}))
        c = row(report, *key)
        assert c.improvement and not c.regression
        assert c.p_adjusted is not None and c.p_adjusted < 0.05

    def test_single_unlucky_sample_is_not_a_regression(self) -> None:
        # The threshold rule would flag 1 → 0 on one sample; 10 vs 9 of 10 is not evidence.
        key = ("p", "a")
        report = compare(make_baseline({key: binary(10, 10)}), make_run({key: binary(9, 10)}))
        c = row(report, *key)
        assert c.score_delta == pytest.approx(-0.1)
        assert not c.regression

    def test_significant_drop_below_threshold_is_not_a_regression(self) -> None:
        key = ("p", "length")
        base = [(0.90 + 0.002 * i, True) for i in range(10)]
        cur = [(0.87 + 0.002 * i, True) for i in range(10)]
        report = compare(make_baseline({key: base}), make_run({key: cur}))
        c = row(report, *key)
        assert c.p_adjusted is not None and c.p_adjusted < 0.05  # clearly lower…
        assert not c.regression  # …but by 0.03 < 0.05

    def test_always_passing_probes_do_not_dilute_the_family(self) -> None:
        stable = {(f"p{i}", "a"): binary(10, 10) for i in range(200)}
        drifted = ("d", "a")
        report = compare(
            make_baseline({**stable, drifted: binary(10, 10)}),
            make_run({**stable, drifted: binary(3, 10)}),
        )
        assert keys(report.regressions) == [drifted]
        c = row(report, *drifted)
        assert c.p_adjusted == pytest.approx(c.p_value)  # the family is this one hypothesis
        assert row(report, "p0", "a").p_adjusted == 1.0

    def test_testable_hypotheses_share_the_correction(self) -> None:
        # Fisher p: 10/10 → 4/10 is C(14,10)/C(20,10) = 1001/184756 = 0.0054; 10/10 → 5/10 is
        # C(15,10)/C(20,10) = 3003/184756 = 0.0163. Both can reach 0.05/2, so Tarone's K = 2
        # and BH over the two gives 2·p1 and p2.
        base = {("d1", "a"): binary(10, 10), ("d2", "a"): binary(10, 10)}
        cur = {("d1", "a"): binary(4, 10), ("d2", "a"): binary(5, 10)}
        report = compare(make_baseline(base), make_run(cur))
        d1, d2 = row(report, "d1", "a"), row(report, "d2", "a")
        assert d1.p_value == pytest.approx(1001 / 184756)
        assert d1.p_adjusted == pytest.approx(2 * 1001 / 184756)
        assert d2.p_adjusted == pytest.approx(3003 / 184756)
        assert d1.regression and d2.regression

    def test_hypothesis_below_tarone_bar_is_left_out(self) -> None:
        # 10/10 → 6/10 can at best reach 8008/184756 = 0.043 > 0.05/2: with a stronger
        # hypothesis beside it, Tarone's K = 2 leaves it out of the family (p_adjusted = 1).
        base = {("d1", "a"): binary(10, 10), ("d2", "a"): binary(10, 10)}
        cur = {("d1", "a"): binary(4, 10), ("d2", "a"): binary(6, 10)}
        report = compare(make_baseline(base), make_run(cur))
        d1, d2 = row(report, "d1", "a"), row(report, "d2", "a")
        assert d1.p_adjusted == pytest.approx(d1.p_value)
        assert d2.p_value == pytest.approx(8008 / 184756)
        assert d2.p_adjusted == 1.0 and not d2.regression

    def test_mixed_sample_counts_fall_back_with_one_warning(self) -> None:
        base = {("p", "a"): one(1.0, True), ("p", "b"): one(1.0, True)}
        cur = {("p", "a"): binary(0, 3), ("p", "b"): binary(3, 3)}
        report = compare(make_baseline(base), make_run(cur))
        assert sum("one side only" in w for w in report.warnings) == 1
        assert keys(report.regressions) == [("p", "a")]  # the threshold rule decided
        assert row(report, "p", "a").p_value is None
        assert report.statistical is False
