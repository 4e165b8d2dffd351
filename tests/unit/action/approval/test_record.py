"""Which approval is in force for a run: bound to the drift shown before the label was added."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptcanary.core.models import Approval, RegressionKey
from promptcanary_action.approval.record import (
    CommentRecord,
    LabelState,
    ShownDrift,
    decide_approval,
    read_record,
    record_block,
)

LABEL = "promptcanary: approve"
T0 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


def key(prompt: str) -> RegressionKey:
    return RegressionKey(suite="s", model="m", prompt_id=prompt, probe_key="kw")


def shown(*prompts: str, at: datetime = T0, head: str = "h1") -> ShownDrift:
    return ShownDrift(keys=tuple(key(p) for p in prompts), head_sha=head, shown_at=at)


def decide(label: LabelState, record: CommentRecord | None) -> tuple[Approval | None, str | None]:
    d = decide_approval(label, record, pr_number=4, label_name=LABEL, now=T0 + timedelta(hours=1))
    return d.approval, d.note


def added(minutes: int, by: str = "rev") -> LabelState:
    return LabelState(present=True, added_by=by, added_at=T0 + timedelta(minutes=minutes))


def test_without_the_label_nothing_is_approved_even_with_a_recorded_approval() -> None:
    first, _ = decide(added(5), CommentRecord(shown=shown("p1")))
    assert first is not None
    assert decide(LabelState(present=False), CommentRecord(approval=first)) == (None, None)


def test_the_label_approves_exactly_what_the_comment_showed_before_it() -> None:
    approval, note = decide(added(5), CommentRecord(shown=shown("p2", "p1")))
    assert note is None and approval is not None
    assert approval.keys == (key("p1"), key("p2"))
    assert (approval.approver, approval.approved_at, approval.head_sha) == (
        "rev",
        T0 + timedelta(minutes=5),
        "h1",
    )
    assert (approval.pr_number, approval.label) == (4, LABEL)


def test_a_recorded_approval_is_kept_while_the_same_labelling_stands() -> None:
    first, _ = decide(added(5), CommentRecord(shown=shown("p1")))
    # A later push showed more drift; the approval still covers only p1.
    record = CommentRecord(shown=shown("p1", "p3", at=T0 + timedelta(minutes=9)), approval=first)
    assert decide(added(5), record) == (first, None)
    # Events unreadable on a later run: the recorded approval stands while the label does.
    assert decide(LabelState(present=True), record) == (first, None)


def test_adding_the_label_again_approves_what_is_shown_at_that_time() -> None:
    first, _ = decide(added(5), CommentRecord(shown=shown("p1")))
    record = CommentRecord(shown=shown("p1", "p3", at=T0 + timedelta(minutes=9)), approval=first)
    again, _ = decide(added(10, by="lead"), record)
    assert again is not None and again.keys == (key("p1"), key("p3"))
    assert again.approver == "lead"


@pytest.mark.parametrize(
    ("record", "label", "why"),
    [
        (None, added(5), "before PromptCanary showed any drift"),
        (CommentRecord(shown=shown()), added(5), "before PromptCanary showed any drift"),
        (CommentRecord(shown=shown("p1", at=T0 + timedelta(minutes=9))), added(5), "changed after"),
        (CommentRecord(shown=shown("p1")), LabelState(present=True), "who added it is unknown"),
    ],
)
def test_a_label_that_cannot_be_bound_approves_nothing_and_says_why(
    record: CommentRecord | None, label: LabelState, why: str
) -> None:
    approval, note = decide(label, record)
    assert approval is None
    assert note is not None and why in note and LABEL in note


def test_a_labelled_event_without_readable_events_is_dated_now() -> None:
    approval, _ = decide(LabelState(present=True, added_by="rev"), CommentRecord(shown=shown("p1")))
    assert approval is not None and approval.approved_at == T0 + timedelta(hours=1)


def test_the_record_round_trips_through_its_hidden_block() -> None:
    record = CommentRecord(
        shown=shown("a --> b"), approval=decide(added(5), CommentRecord(shown=shown("x")))[0]
    )
    block = record_block(record)
    assert "-->" not in block[: -len(" -->")]  # prompt text cannot end the HTML comment early
    assert read_record(f"# report\n\n{block}\n<!-- marker -->") == record


@pytest.mark.parametrize(
    "body",
    [
        "no record here",
        "<!-- promptcanary-approval:v1:not-base64!! -->",
        "<!-- promptcanary-approval:v1:eyJzaG93biI6IDF9 -->",  # {"shown": 1}
    ],
)
def test_an_absent_or_damaged_record_reads_as_none(body: str) -> None:
    assert read_record(body) is None
