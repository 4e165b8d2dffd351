"""Gather what decides an approval from GitHub: the label, who added it, the comment's record.

Reads only GitHub's own data: the pull request's labels, its issue events, and the comment this
action's token wrote. A read that the token may not do becomes a warning naming the permission,
and the run goes on without an approval (its regressions then count as usual).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from promptcanary.core.models import Approval
from promptcanary_action.approval.record import (
    CommentRecord,
    LabelState,
    decide_approval,
    read_record,
)
from promptcanary_action.context import EventContext
from promptcanary_action.github.errors import GitHubError
from promptcanary_action.github.port import GitHubPort, PullInfo

T = TypeVar("T")


@dataclass(frozen=True)
class ApprovalLookup:
    """What this run knows about approvals."""

    approval: Approval | None = None
    pr_number: int | None = None
    """The pull request the approval would come from (None: a direct push, or not looked up)."""
    warnings: tuple[str, ...] = ()
    """Reads that failed (naming the permission) and why a label approves nothing."""


class _Reader:
    """Runs GitHub reads, turning each failure into a warning and a fallback value."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def read(self, fn: Callable[[], T], fallback: T) -> T:
        try:
            return fn()
        except GitHubError as exc:
            self.warnings.append(f"Approvals: {exc}")
            return fallback


def find_approval(
    port: GitHubPort | None,
    ctx: EventContext,
    *,
    label: str,
    marker: str,
    now: datetime,
) -> ApprovalLookup:
    """The approval in force for this run: a pull request's, or that of the pull request a push
    to the default branch merged. Nothing for other events, without a label or a GitHub token."""
    if not label or port is None:
        return ApprovalLookup()
    reader = _Reader()
    pull: PullInfo | None = None
    labels: tuple[str, ...] | None
    if ctx.is_pull_request and ctx.pr_number is not None:
        number = ctx.pr_number
        # The API first: a re-run job keeps its original payload, whose labels may be stale.
        pull = reader.read(lambda: port.pull_request(number), None)
        labels = pull.labels if pull is not None else ctx.pr_labels
    elif ctx.event_name == "push" and ctx.is_default_branch:
        no_pulls: list[PullInfo] = []
        pulls = reader.read(lambda: port.pulls_of_commit(ctx.head_sha or ctx.sha), no_pulls)
        pull = next((p for p in pulls if p.merged), None)
        if pull is None:  # a direct push: no pull request, nothing to approve
            return ApprovalLookup(warnings=tuple(reader.warnings))
        number, labels = pull.number, pull.labels
    else:
        return ApprovalLookup()
    decided = _decide(port, reader, ctx, number, labels, label=label, marker=marker, now=now)
    return ApprovalLookup(decided, number, tuple(reader.warnings))


def _decide(
    port: GitHubPort,
    reader: _Reader,
    ctx: EventContext,
    number: int,
    labels: tuple[str, ...] | None,
    *,
    label: str,
    marker: str,
    now: datetime,
) -> Approval | None:
    if labels is None or label not in labels:
        return None
    body = reader.read(lambda: port.own_comment(number, marker), None)
    record: CommentRecord | None = read_record(body) if body else None
    event = reader.read(lambda: port.last_labeled(number, label), None)
    if event is not None:
        state = LabelState(present=True, added_by=event.actor, added_at=event.created_at)
    elif ctx.action == "labeled" and ctx.event_label == label:
        state = LabelState(present=True, added_by=ctx.sender)  # the event's own sender
    else:
        state = LabelState(present=True)
    decision = decide_approval(state, record, pr_number=number, label_name=label, now=now)
    if decision.note:
        reader.warnings.append(f"Approvals: {decision.note}.")
    return decision.approval
