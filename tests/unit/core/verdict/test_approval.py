"""Approvals: which regressions one covers, and what evaluate() decides once it does."""

from __future__ import annotations

from datetime import UTC, datetime
from textwrap import dedent

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import Approval, BaselineSnapshot, RegressionKey
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.approval import (
    regression_keys,
    split_regressions,
    without_approved,
)
from promptcanary.core.verdict.evaluate import (
    Evaluation,
    EvaluationPolicy,
    Promotion,
    decide,
    evaluate,
)
from promptcanary.storage.base import snapshot_from_json, snapshot_to_json
from tests.unit.core.verdict.test_evaluate import SUITE as BASE_SUITE
from tests.unit.core.verdict.test_evaluate import run

# The evaluation tests' suite with two more prompts, so that several keys can regress.
SUITE = BASE_SUITE + "  - id: p3\n    text: third\n  - id: p4\n    text: fourth\n"
GOOD = {"p1": "ok", "p2": "ok", "p3": "ok", "p4": "ok"}
WHEN = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)


def key(prompt: str, suite: str = "demo", model: str = "m") -> RegressionKey:
    return RegressionKey(suite=suite, model=model, prompt_id=prompt, probe_key="kw")


def approval(*prompts: str, head: str = "abc123", approver: str = "rev") -> Approval:
    return Approval(
        keys=tuple(key(p) for p in prompts),
        head_sha=head,
        pr_number=7,
        approver=approver,
        approved_at=WHEN,
        label="promptcanary: approve",
    )


def judged(
    approved: Approval | None, bad: tuple[str, ...], *, fail_on: str = "regression"
) -> Evaluation:
    s = suite_from_text(dedent(SUITE), suite_class=CanarySuite)
    answers = {**GOOD, **{p: "no" for p in bad}}
    base = BaselineSnapshot.of_run(run(s, dict(GOOD)))
    policy = EvaluationPolicy(promotion="if_clean", approval=approved, fail_on=fail_on)
    return evaluate(base, run(s, answers), s, policy)


def test_the_fingerprint_is_one_id_for_one_set_and_commit_whatever_the_order() -> None:
    a = approval("p2", "p1", "p1")
    b = approval("p1", "p2")
    assert a.keys == b.keys == (key("p1"), key("p2"))
    assert a.fingerprint == b.fingerprint
    assert approval("p1", "p2", head="def456").fingerprint != a.fingerprint
    assert approval("p1").fingerprint != a.fingerprint


def test_regression_keys_name_suite_model_prompt_and_probe() -> None:
    result = judged(None, ("p3", "p1"))
    assert regression_keys([result.drift, None]) == (key("p1"), key("p3"))


def test_an_approval_covers_only_its_keys() -> None:
    result = judged(None, ("p1", "p2"))
    assert result.drift is not None
    covered, uncovered = split_regressions(result.drift, {key("p1"), key("p9")})
    assert [c.prompt_id for c in covered] == ["p1"]
    assert [c.prompt_id for c in uncovered] == ["p2"]
    # Another suite's or model's key with the same prompt id is another result.
    covered, _ = split_regressions(result.drift, {key("p1", suite="other"), key("p1", model="x")})
    assert covered == []


def test_setting_approved_regressions_aside_keeps_the_others_flagged() -> None:
    result = judged(None, ("p1", "p2"))
    assert result.drift is not None
    judged_drift = without_approved(result.drift, {key("p1")})
    assert [c.prompt_id for c in judged_drift.regressions] == ["p2"]
    assert [c.prompt_id for c in result.drift.regressions] == ["p1", "p2"]  # original untouched


def test_approved_regressions_pass_the_gate_and_allow_promotion() -> None:
    given = approval("p1", "p2")
    result = judged(given, ("p1", "p2"))
    assert result.gate_failed is False
    assert result.promotion == Promotion(True, "")
    assert result.approval == given
    assert [c.prompt_id for c in result.approved] == ["p1", "p2"]
    assert result.unapproved_regressions == []
    # The drift still shows them: approving does not hide what changed.
    assert result.drift is not None and len(result.drift.regressions) == 2
    assert result.notes == ()  # who approved is the approval's to show, not a note
    assert result.snapshot().approval == given


def test_a_regression_outside_the_approved_set_still_fails_and_blocks_promotion() -> None:
    result = judged(approval("p1"), ("p1", "p3"))
    assert result.gate_failed is True
    assert result.promotion == Promotion(False, "the run has regressions")
    assert [c.prompt_id for c in result.unapproved_regressions] == ["p3"]
    assert [c.prompt_id for c in result.approved] == ["p1"]


def test_an_approval_that_covers_nothing_is_not_recorded() -> None:
    result = judged(approval("p4"), ("p1",))
    assert result.gate_failed is True and result.approval is None and result.approved == ()
    assert result.snapshot().approval is None


@pytest.mark.parametrize(
    ("fail_on", "approved", "failed"),
    [("low", False, True), ("low", True, False), ("failure", True, True)],
)
def test_severity_gates_judge_only_unapproved_regressions_failure_stays_absolute(
    fail_on: str, approved: bool, failed: bool
) -> None:
    # `failure` fails any failed probe, approved or not: it is a rule about this run alone.
    result = judged(approval("p1") if approved else None, ("p1",), fail_on=fail_on)
    assert result.gate_failed is failed


def test_a_promoted_snapshot_keeps_its_approval_through_json() -> None:
    result = judged(approval("p1"), ("p1",))
    snap = result.snapshot()
    again = snapshot_from_json(snapshot_to_json(snap), "mem")
    assert again.approval == snap.approval
    assert again.approval is not None and again.approval.fingerprint == snap.approval.fingerprint


def test_an_unapproved_snapshot_document_has_no_approval_field() -> None:
    snap = BaselineSnapshot.of_run(judged(None, ()).run)
    assert '"approval"' not in snapshot_to_json(snap)


def test_judging_stored_results_under_an_approval_decides_as_evaluating_with_it() -> None:
    stored = judged(None, ("p1",))
    assert stored.gate_failed is True
    policy = EvaluationPolicy(promotion="if_clean", approval=approval("p1"))
    again = decide(stored.run, stored.drift, policy, usage=stored.usage)
    direct = judged(approval("p1"), ("p1",))
    assert (again.gate_failed, again.promotion, again.notes, again.approved) == (
        direct.gate_failed,
        direct.promotion,
        direct.notes,
        direct.approved,
    )
    assert again.drift is stored.drift  # nothing compared again
