"""Approving drift with a pull-request label: which approval is in force for this run (pure).

How an approval is bound to what the reviewer saw:

- Every pull-request run writes, hidden in its sticky comment, the regressions it showed
  (:class:`ShownDrift`: keys, head commit, time). The comment is found only among comments the
  action's own token wrote, so a person's comment can neither add nor change this record.
- When the label is on the pull request and no approval is recorded for the current labelling,
  the approval covers exactly the regressions the comment showed before the label was added —
  never what the current run finds (a new run of a model may regress elsewhere).
- The approval is then recorded next to it (:class:`CommentRecord`) and kept while the label
  stays on: a later push to the pull request keeps it for the same keys only. Removing the label
  drops it; adding it again approves what is shown at that time.

Only the label's presence and who added it (GitHub's own event data) count; the body of the pull
request and its comments never approve anything.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from promptcanary.core.models import Approval, RegressionKey
from promptcanary.core.verdict.approval import regression_keys
from promptcanary_action.outcome import StepOutcome

_BLOCK = re.compile(r"<!-- promptcanary-approval:v1:([A-Za-z0-9_=-]*) -->")


class ShownDrift(BaseModel):
    """The regressions one pull-request run showed in its comment."""

    model_config = ConfigDict(frozen=True)

    keys: tuple[RegressionKey, ...]
    head_sha: str
    shown_at: datetime


class CommentRecord(BaseModel):
    """What the sticky comment carries between runs (hidden in one HTML comment)."""

    model_config = ConfigDict(frozen=True)

    shown: ShownDrift | None = None
    approval: Approval | None = None


@dataclass(frozen=True)
class LabelState:
    """The approval label on the pull request, as GitHub reports it."""

    present: bool
    added_by: str | None = None
    """Who added it: the newest ``labeled`` event's actor (or a ``labeled`` event's sender)."""
    added_at: datetime | None = None
    """When, when GitHub's events say; None when they could not be read."""


@dataclass(frozen=True)
class ApprovalDecision:
    approval: Approval | None
    note: str | None = None
    """Why a label on the pull request approves nothing (for the reader), else None."""


def comment_record(outcome: StepOutcome) -> CommentRecord:
    """What the comment rendered from ``outcome`` records: the regressions it shows (dated by
    the newest run's end) and the approval in force. Derived from the outcome alone, so
    post-comment mode, which renders from ``step.json``, writes the same record."""
    ends = [p.run.finished_at or p.run.started_at for p in outcome.pairs]
    keys = regression_keys(p.drift for p in outcome.pairs)
    shown = ShownDrift(keys=keys, head_sha=outcome.sha, shown_at=max(ends)) if ends else None
    return CommentRecord(shown=shown, approval=outcome.approval)


def record_block(record: CommentRecord) -> str:
    """``record`` as one hidden line for the comment (base64: prompt ids may hold ``-->``)."""
    data = base64.urlsafe_b64encode(record.model_dump_json().encode()).decode()
    return f"<!-- promptcanary-approval:v1:{data} -->"


def read_record(body: str) -> CommentRecord | None:
    """The record hidden in a comment ``body``; None when absent or unreadable (never raises:
    a damaged record only means nothing was approved yet)."""
    match = _BLOCK.search(body)
    if match is None:
        return None
    try:
        return CommentRecord.model_validate_json(base64.urlsafe_b64decode(match.group(1)))
    except (ValueError, ValidationError, binascii.Error):
        return None


def decide_approval(
    label: LabelState,
    record: CommentRecord | None,
    *,
    pr_number: int,
    label_name: str,
    now: datetime,
) -> ApprovalDecision:
    """The approval in force for this run of ``pr_number`` (see the module docstring)."""
    if not label.present:
        return ApprovalDecision(None)
    kept = record.approval if record else None
    if kept is not None and (label.added_at is None or label.added_at <= kept.approved_at):
        return ApprovalDecision(kept)  # the same labelling: the same keys, whatever the commit
    if label.added_by is None:
        return ApprovalDecision(
            None, f"the label '{label_name}' is on the pull request but who added it is unknown"
        )
    shown = record.shown if record else None
    added_at = label.added_at or now
    if shown is None or not shown.keys:
        return ApprovalDecision(
            None,
            f"the label '{label_name}' was added before PromptCanary showed any drift on this "
            "pull request: remove it and add it again once the comment shows the drift to approve",
        )
    # GitHub dates events to the second; the run's end has microseconds. A label added in the
    # same second as the comment's drift approves it.
    if shown.shown_at.replace(microsecond=0) > added_at:
        return ApprovalDecision(
            None,
            f"the drift shown changed after the label '{label_name}' was added: remove the label "
            "and add it again to approve the drift shown now",
        )
    approval = Approval(
        keys=shown.keys,
        head_sha=shown.head_sha,
        pr_number=pr_number,
        approver=label.added_by,
        approved_at=added_at,
        label=label_name,
    )
    return ApprovalDecision(approval)
