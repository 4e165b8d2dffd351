"""StepOutcome's verdict: the gate, verdict lines, exit code, check-run conclusion, failures.

The pairs are judged by the engine (``judged``); the step combines what it decided."""

from __future__ import annotations

import dataclasses

import pytest

from promptcanary.core.models import DriftSeverity
from promptcanary_action.outcome import (
    ExitCode,
    Failure,
    PairOutcome,
    StepOutcome,
    build_outcome,
    verdict,
)
from promptcanary_action.settings import Settings
from tests.unit.action.outcomes import drifted_pair, judged


def test_severities_of_the_fixture_pairs() -> None:
    # 1 of 10 regressed: share 0.10 → high; 1 of 30 with a 0.3 drop → medium; 0.1 drop → low.
    assert drifted_pair(0.3).severity is DriftSeverity.HIGH
    assert drifted_pair(0.3, n=30).severity is DriftSeverity.MEDIUM
    assert drifted_pair(0.1, n=30).severity is DriftSeverity.LOW
    assert drifted_pair(0.0).severity is DriftSeverity.NONE


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [
        ("never", [False, False, False, False]),
        ("regression", [False, True, True, False]),
        ("failure", [False, True, True, True]),
        ("low", [False, True, True, False]),
        ("medium", [False, False, True, False]),
        ("high", [False, False, True, False]),
        ("critical", [False, False, False, False]),
    ],
)
def test_gate_for_every_fail_on_value(fail_on: str, expected: list[bool]) -> None:
    clean = drifted_pair(0.0)
    low = drifted_pair(0.1, n=30)
    high = drifted_pair(0.3)
    failing_no_drift = drifted_pair(0.0, failed=1)
    got = [gate_of([p], fail_on) for p in (clean, low, high, failing_no_drift)]
    assert got == expected
    assert gate_of([clean, high], fail_on) == expected[2]


def gate_of(pairs: list[PairOutcome], fail_on: str) -> bool:
    """The step's gate over ``pairs`` judged under ``fail_on``."""
    return outcome_of(*pairs, fail_on=fail_on).gate_failed


def test_critical_gate_trips_on_a_critical_drift() -> None:
    critical = drifted_pair(0.8)
    assert critical.severity is DriftSeverity.CRITICAL
    assert gate_of([critical], "critical") is True


def test_untrustworthy_pairs_exceed_the_error_rate() -> None:
    ok = drifted_pair(0.0, errors=0)
    bad = drifted_pair(0.0, errors=2)  # 2 of 3 responses errored
    lenient = dataclasses.replace(Settings(), max_error_rate=0.7)
    strict = dataclasses.replace(Settings(), max_error_rate=0.5)
    assert [judged(p, strict).untrustworthy for p in (ok, bad)] == [False, True]
    assert [judged(p, lenient).untrustworthy for p in (ok, bad)] == [False, False]
    assert outcome_of(ok, bad, max_error_rate=0.5).untrustworthy is True
    assert outcome_of(ok, bad, max_error_rate=0.7).untrustworthy is False


def test_verdict_lines() -> None:
    high, clean = drifted_pair(0.3), drifted_pair(0.0)
    no_baseline = clean.model_copy(update={"drift": None})
    assert verdict([high, clean], True, False) == (
        "❌ 1 regression in 1 of 2 model runs (severity high)"
    )
    assert verdict([high], False, False).startswith("⚠️ 1 regression in")
    assert verdict([clean], True, False) == "❌ Probes failed (fail-on: failure)"
    assert verdict([clean, no_baseline], False, False) == "✅ No drift in 1 compared model run"
    assert verdict([no_baseline], False, False) == (
        "✅ 1 model run completed; no baseline to compare with yet"
    )
    assert verdict([high], True, True).startswith("⚠️ Untrustworthy run: 0 responses errored")


def test_with_baselines_off_the_verdict_says_so_not_that_none_exists_yet() -> None:
    no_baseline = drifted_pair(0.0).model_copy(update={"drift": None})
    off = dataclasses.replace(Settings(), baseline="none")
    outcome = build_outcome([no_baseline], off, warnings=[])
    assert outcome.verdict == "✅ 1 model run completed; baselines are off (`baseline: none`)"
    assert (
        "no baseline to compare with yet"
        in build_outcome([no_baseline], Settings(), warnings=[]).verdict
    )


def test_build_outcome_applies_settings() -> None:
    settings = dataclasses.replace(
        Settings(), fail_on="high", max_error_rate=0.5, comment_id="nightly"
    )
    pairs = [judged(drifted_pair(0.3), settings), judged(drifted_pair(0.0, errors=2), settings)]
    outcome = build_outcome(pairs, settings, warnings=["w"], pr_number=7, sha="abc")
    assert outcome.gate_failed is True
    assert outcome.untrustworthy is True
    assert outcome.fail_on == "high"
    assert outcome.comment_id == "nightly"
    assert outcome.pr_number == 7 and outcome.sha == "abc"
    assert outcome.warnings == ["w"]
    assert outcome.verdict == verdict(pairs, True, True)
    calm = build_outcome([judged(drifted_pair(0.0), settings)], settings, warnings=[])
    assert (calm.gate_failed, calm.untrustworthy) == (False, False)
    assert calm.verdict.startswith("✅")


def outcome_of(*pairs: PairOutcome, **settings: object) -> StepOutcome:
    """The step over ``pairs``, each judged under the default settings changed by ``settings``."""
    chosen = dataclasses.replace(Settings(), **settings)  # type: ignore[arg-type]
    return build_outcome([judged(p, chosen) for p in pairs], chosen, warnings=[])


UNREADABLE = "baselines/demo/m/baseline.json: not valid JSON"


@pytest.mark.parametrize(
    ("case", "exit_code", "conclusion", "drift_detected"),
    [
        ("clean", ExitCode.OK, "success", False),
        ("drift, gate off", ExitCode.OK, "neutral", True),
        ("drift, gate on", ExitCode.GATE_FAILED, "failure", True),
        ("unreadable baseline", ExitCode.USAGE, "failure", False),
        ("untrustworthy", ExitCode.UNTRUSTWORTHY, "failure", False),
        ("untrustworthy and drift", ExitCode.UNTRUSTWORTHY, "failure", True),
    ],
)
def test_exit_code_conclusion_and_drift_detected_come_from_one_outcome(
    case: str, exit_code: ExitCode, conclusion: str, drift_detected: bool
) -> None:
    clean, drifted = drifted_pair(0.0), drifted_pair(0.3)
    broken = clean.model_copy(update={"drift": None, "baseline_error": UNREADABLE})
    errored = drifted_pair(0.0, errors=2)  # 2 of 3 responses errored
    outcome = {
        "clean": outcome_of(clean),
        "drift, gate off": outcome_of(drifted, fail_on="never"),
        "drift, gate on": outcome_of(drifted, clean),
        "unreadable baseline": outcome_of(broken),
        "untrustworthy": outcome_of(errored, max_error_rate=0.5),
        "untrustworthy and drift": outcome_of(errored, drifted, max_error_rate=0.5),
    }[case]
    assert outcome.exit_code is exit_code
    # A failing step never shows a green or grey check run.
    assert outcome.conclusion == conclusion
    assert outcome.drift_detected is drift_detected


def test_failures_explain_a_non_gate_failure() -> None:
    broken = drifted_pair(0.0).model_copy(update={"drift": None, "baseline_error": UNREADABLE})
    assert outcome_of(broken).failures == [Failure("PromptCanary: unreadable baseline", UNREADABLE)]
    untrusted = outcome_of(drifted_pair(0.0, errors=2), broken, max_error_rate=0.5)
    # The untrustworthy run says so once, with the verdict; exit 3 outranks the baseline's 2.
    assert untrusted.failures == [Failure(None, untrusted.verdict)]
    assert untrusted.verdict.startswith("⚠️ Untrustworthy run")
    # The gate's own failure is the verdict notice and the exit code, not an error annotation.
    assert outcome_of(drifted_pair(0.3)).failures == []


def test_the_verdict_survives_the_step_file_post_comment_mode_reads() -> None:
    outcome = outcome_of(drifted_pair(0.3), drifted_pair(0.0))
    again = StepOutcome.model_validate_json(outcome.model_dump_json())
    assert (again.exit_code, again.conclusion, again.verdict) == (
        ExitCode.GATE_FAILED,
        "failure",
        outcome.verdict,
    )


def test_a_matrix_leg_leaves_the_gate_to_the_merge_job_but_not_an_unreadable_baseline() -> None:
    drifted, errored = drifted_pair(0.3), drifted_pair(0.0, errors=2)
    leg = outcome_of(drifted, errored, max_error_rate=0.5).model_copy(update={"shard": "2/4"})
    assert (leg.gate_failed, leg.untrustworthy) == (True, True)
    assert (leg.exit_code, leg.failures) == (ExitCode.OK, [])
    broken = drifted.model_copy(update={"drift": None, "baseline_error": UNREADABLE})
    leg = outcome_of(broken).model_copy(update={"shard": "2/4"})
    assert leg.exit_code is ExitCode.USAGE
    assert leg.failures == [Failure("PromptCanary: unreadable baseline", UNREADABLE)]


def test_a_baseline_not_read_or_not_reached_is_never_called_no_baseline_yet() -> None:
    no_baseline = drifted_pair(0.0).model_copy(update={"drift": None})
    unreadable = no_baseline.model_copy(update={"baseline_error": "b.json: not valid JSON"})
    unreachable = no_baseline.model_copy(
        update={"baseline_error": "branch: cannot be fetched", "baseline_unreachable": True}
    )
    broken = build_outcome([unreadable], Settings(), warnings=[])
    assert broken.verdict == "⚠️ Not compared: the baseline of 1 model run cannot be read"
    assert broken.exit_code == 2
    gone = build_outcome([unreachable, unreachable], Settings(), warnings=[])
    assert gone.verdict.startswith(
        "⚠️ Not compared: the baseline store could not be reached for 2 model runs"
    )
    assert gone.exit_code == 3 and gone.conclusion == "failure"
    assert [f.title for f in gone.failures] == ["PromptCanary: baseline store unreachable"] * 2
