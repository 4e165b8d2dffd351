"""Pure: (event context, settings) → what this step does; ``main`` dispatches on the answer.

Two activities: :class:`PostComment` (``mode: post-comment``, the trusted half of a fork's
pull request) and :class:`Activity` (run the suites), whose fields say what the event allows.
The rules, and why:

- Pull requests, ``pull_request_target`` and merge groups read the baseline of their **base**
  branch and never write one: a PR's own run must not become the reference it is judged by, and
  an unmerged change must not move the base branch's reference either (also under ``always``).
- A push, schedule or dispatch on a branch other than the default branch compares with the
  **default branch's** baseline and never promotes, under ``auto`` and ``always`` alike: a side
  branch must not overwrite the default branch's reference, and keeping one baseline per side
  branch would leave most side branches with none to compare with. When the default branch is
  unknown (an unreadable payload) the run's own branch is the baseline ref, so promoting there
  can only ever touch that branch's baseline.
- Other events (``release``, ``workflow_run`` in ``run`` mode, ...) compare with the default
  branch's baseline and never promote or comment.
- ``issue-on-drift`` applies to schedule, dispatch and push on the default branch. A dispatch on
  a side branch opens no issue: its drift may come from the branch's own changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from promptcanary_action.context import EventContext
from promptcanary_action.settings import Settings

Promotion = Literal["never", "if_clean", "always"]

BASELINE_EVENTS = frozenset({"push", "schedule", "workflow_dispatch"})


@dataclass(frozen=True)
class PostComment:
    """``mode: post-comment``: post the comment a fork's run left in the report folder."""

    expected_head: str | None
    """The commit the pull request must be at (the head of the workflow run that produced the
    report); None when the event does not say."""


@dataclass(frozen=True)
class Activity:
    """Run the suites; main() follows these fields without re-deciding."""

    compare: bool
    """Read a baseline and compare with it (False for ``baseline: none``)."""
    comment: bool
    """Post or update the pull-request comment (PR events with a known number only)."""
    check_run: bool
    baseline_ref: str
    """The branch whose baseline is read ("" when nothing says which: then compare is False)."""
    may_create_baseline: bool
    """With no baseline yet, this run may become it (``baseline-status: created``)."""
    promotion: Promotion
    """``if_clean``: promote when the run has no regression and no errors."""
    issue_on_drift: bool
    is_pull_request: bool
    notes: tuple[str, ...] = ()
    """Why something the user may expect does not happen (for the log and the reports)."""


def decide(ctx: EventContext, settings: Settings) -> Activity | PostComment:
    if settings.mode == "post-comment":
        workflow_run = ctx.event_name == "workflow_run"
        return PostComment(expected_head=ctx.head_sha if workflow_run else None)

    notes: list[str] = []
    pr_like = ctx.is_pull_request or ctx.is_merge_group
    baseline_ref, promotion = _baseline_ref(ctx, settings, notes)
    compare = settings.baseline != "none" and baseline_ref != ""
    if settings.baseline != "none" and not baseline_ref:
        notes.append("cannot tell which branch's baseline to compare with: not comparing")
    if not compare:
        promotion = "never"

    # Only the default branch's runs speak for the model: a side branch's drift may be its own.
    issue_event = ctx.event_name in BASELINE_EVENTS and ctx.is_default_branch
    return Activity(
        compare=compare,
        comment=pr_like and ctx.pr_number is not None and settings.comment != "off",
        check_run=settings.check_run,
        baseline_ref=baseline_ref,
        may_create_baseline=promotion != "never",
        promotion=promotion,
        issue_on_drift=settings.issue_on_drift and compare and issue_event,
        is_pull_request=ctx.is_pull_request,
        notes=tuple(notes),
    )


def _baseline_ref(ctx: EventContext, settings: Settings, notes: list[str]) -> tuple[str, Promotion]:
    """The branch whose baseline this run reads, and whether it may promote (notes: why not)."""
    if ctx.is_pull_request or ctx.is_merge_group:
        if settings.update_baseline == "always":
            notes.append(
                "update-baseline: always does not apply to pull requests and merge groups:"
                " their runs never become the base branch's baseline"
            )
        return ctx.base_ref or ctx.default_branch or "", "never"
    if ctx.event_name not in BASELINE_EVENTS:
        return ctx.default_branch or ctx.ref_name or "", "never"
    on_own_baseline = ctx.ref_name is not None and (
        ctx.default_branch is None or ctx.ref_name == ctx.default_branch
    )
    if on_own_baseline:
        return ctx.ref_name or "", _promotion(settings)
    if settings.update_baseline != "never":
        where = f"branch '{ctx.ref_name}'" if ctx.ref_name else "this ref"
        notes.append(
            f"the baseline is not updated from {where}: only runs on the default"
            f" branch '{ctx.default_branch}' update it"
        )
    return ctx.default_branch or "", "never"


def _promotion(settings: Settings) -> Promotion:
    if settings.update_baseline == "always":
        return "always"
    if settings.update_baseline == "auto":
        return "if_clean"
    return "never"
