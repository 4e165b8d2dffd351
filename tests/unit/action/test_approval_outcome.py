"""Approved regressions in the step's outcome, its comment and its record, and re-judging."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptcanary.core.models import Approval, RegressionKey, ResultRef
from promptcanary.core.verdict.evaluate import EvaluationPolicy
from promptcanary.core.verdict.usage import UsageLimits
from promptcanary_action.activity import decide
from promptcanary_action.approval.record import comment_record, read_record
from promptcanary_action.context import EventContext
from promptcanary_action.outcome import PairOutcome, StepOutcome, build_outcome
from promptcanary_action.pipeline import verdict_fields
from promptcanary_action.rejudge import rejudge, reusable_outcome
from promptcanary_action.render import check_run_output, comment_marker, render_comment
from promptcanary_action.report_dir import STEP_FILE
from promptcanary_action.settings import Settings
from tests.unit.action.outcomes import drifted_pair, judged
from tests.unit.core.verdict.test_evaluate import usage_case

LABEL = "promptcanary: approve"
MARKER = comment_marker("default")
SHA = "c" * 40


def approval(*prompts: str, approver: str = "rev") -> Approval:
    keys = tuple(
        RegressionKey(suite="demo", model="m", prompt_id=p, probe_key="t") for p in prompts
    )
    return Approval(
        keys=keys,
        head_sha=SHA,
        pr_number=7,
        approver=approver,
        approved_at=datetime(2024, 6, 1, tzinfo=UTC),
    )


def outcome(approved: Approval | None, *, covered: bool = True) -> StepOutcome:
    """The step with ``approved`` in force, its pair judged under it (``covered``: it covers
    the pair's regression)."""
    pair = judged(drifted_pair(0.9), approval=approved)
    if approved is not None and covered:
        assert pair.approved == [ResultRef(prompt_id="p0", probe_key="t")]
        assert pair.approval == approved
    else:
        assert (pair.approved, pair.approval) == ([], None)
    return build_outcome(
        [pair],
        Settings(),
        warnings=[],
        event_name="pull_request",
        pr_number=7,
        sha=SHA,
        approve_label=LABEL,
        approval=approved,
    )


def test_approved_drift_passes_with_a_success_check_and_says_who_approved() -> None:
    step = outcome(approval("p0", approver="rev*er"))
    assert step.gate_failed is False and step.exit_code == 0
    assert (step.conclusion, step.drift_detected) == ("success", False)
    assert step.verdict == "✅ Drift approved by @rev*er: 1 regression accepted on pull request #7"
    title, summary, _ = check_run_output(step)
    assert "approved by @\u200brev*er" in title  # no live mention in the check either
    assert "✅ approved · " in summary
    body = render_comment(step, MARKER)
    assert "approved by @\u200brev\\*er" in body  # escaped like every other text
    assert "**Intended?**" not in body


def test_unapproved_drift_fails_and_the_comment_says_how_to_approve() -> None:
    step = outcome(None)
    assert step.gate_failed is True and step.conclusion == "failure"
    body = render_comment(step, MARKER)
    assert f"by adding the label `{LABEL}` to this pull request" in body
    # Without approvals (or outside a pull request) there is no such line and no record.
    off = step.model_copy(update={"approve_label": None})
    assert "**Intended?**" not in render_comment(off, MARKER)
    assert read_record(render_comment(off, MARKER)) is None


def test_an_approval_that_covers_nothing_here_is_still_recorded() -> None:
    given = approval("p9")
    step = outcome(given, covered=False)
    assert step.gate_failed is True and "approved" not in step.verdict
    record = read_record(render_comment(step, MARKER))
    assert record is not None and record.approval == given


def test_the_comment_record_names_the_shown_regressions_and_survives_a_tight_budget() -> None:
    step = outcome(None)
    record = comment_record(step)
    assert record.shown is not None and record.shown.head_sha == SHA
    assert [k.prompt_id for k in record.shown.keys] == ["p0"]
    body = render_comment(step, MARKER, limit=2_000)
    assert len(body) <= 2_000 and body.endswith(MARKER)
    assert read_record(body) == record


def labeled_ctx(**overrides: object) -> EventContext:
    fields: dict[str, object] = {
        "event_name": "pull_request",
        "sha": "m" * 40,
        "head_sha": SHA,
        "pr_number": 7,
        "base_ref": "main",
        "default_branch": "main",
        "action": "labeled",
        "event_label": LABEL,
    }
    return EventContext(**{**fields, **overrides})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ctx", "reused"),
    [
        (labeled_ctx(), True),
        (labeled_ctx(action="unlabeled"), True),
        (labeled_ctx(event_label="other"), False),  # another label: run as usual
        (labeled_ctx(action="synchronize"), False),  # a push: the answers may differ
        (labeled_ctx(head_sha="d" * 40), False),  # another commit
        (labeled_ctx(pr_number=8), False),
    ],
)
def test_only_a_change_of_our_label_on_the_same_commit_reuses_the_results(
    tmp_path: Path, ctx: EventContext, reused: bool
) -> None:
    (tmp_path / STEP_FILE).write_text(outcome(None).model_dump_json(), encoding="utf-8")
    assert (reusable_outcome(tmp_path, ctx, LABEL) is not None) is reused
    assert reusable_outcome(tmp_path, ctx, None) is None  # approvals off


def test_an_untrustworthy_or_unreadable_previous_step_is_not_reused(tmp_path: Path) -> None:
    assert reusable_outcome(tmp_path, labeled_ctx(), LABEL) is None  # no file
    (tmp_path / STEP_FILE).write_text("{not json", encoding="utf-8")
    assert reusable_outcome(tmp_path, labeled_ctx(), LABEL) is None
    broken = outcome(None).model_copy(update={"untrustworthy": True})
    (tmp_path / STEP_FILE).write_text(broken.model_dump_json(), encoding="utf-8")
    assert reusable_outcome(tmp_path, labeled_ctx(), LABEL) is None


def test_rejudging_applies_the_approval_to_the_stored_results() -> None:
    stored = outcome(None).pairs[0]
    settings = Settings()
    activity = decide(labeled_ctx(), settings)
    again = rejudge(stored, settings, activity, approval("p0"))
    assert [(r.prompt_id, r.probe_key) for r in again.approved] == [("p0", "t")]
    assert again.approval == approval("p0") and again.run is stored.run
    assert rejudge(stored, settings, activity, None).approved == []


def test_rejudging_keeps_a_tripped_usage_gate_from_the_stored_usage() -> None:
    # Re-judging measures nothing again: the usage gates read the usage the first run stored.
    limits = UsageLimits(tokens_pct=50)
    evaluation = usage_case(EvaluationPolicy(usage_limits=limits))
    first = PairOutcome(
        suite_name="demo",
        suite_file="c.yaml",
        model="m",
        run=evaluation.run,
        drift=evaluation.drift,
        usage=evaluation.usage,
        **verdict_fields(evaluation),
    )
    stored = PairOutcome.model_validate_json(first.model_dump_json())
    settings = dataclasses.replace(Settings(), max_token_increase=50)
    again = rejudge(stored, settings, decide(labeled_ctx(), settings), approval("p0"))
    assert first.gate_failed is True and again.gate_failed is True
    assert [f.gate for f in again.usage_findings] == ["max-token-increase"]
