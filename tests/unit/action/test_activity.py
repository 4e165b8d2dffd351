"""activity.decide: one case per event / branch / update-baseline, and post-comment mode."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from promptcanary_action.activity import Activity, PostComment
from promptcanary_action.activity import decide as decide_activity
from promptcanary_action.context import EventContext
from promptcanary_action.settings import Settings

SHA = "a" * 40


def decide(ctx: EventContext, settings: Settings) -> Activity:
    """decide() in run mode, where it always answers with an Activity."""
    activity = decide_activity(ctx, settings)
    assert isinstance(activity, Activity)
    return activity


def make_settings(**overrides: Any) -> Settings:
    return dataclasses.replace(Settings(), **overrides)


def pull_request(event_name: str = "pull_request", **overrides: Any) -> EventContext:
    fields: dict[str, Any] = {
        "event_name": event_name,
        "sha": SHA,
        "head_sha": SHA,
        "pr_number": 7,
        "base_ref": "release",
        "head_ref": "feature",
        "default_branch": "main",
    }
    return EventContext(**{**fields, **overrides})


def merge_group() -> EventContext:
    return EventContext(
        event_name="merge_group",
        sha=SHA,
        head_sha=SHA,
        pr_number=104,
        base_ref="main",
        head_ref="gh-readonly-queue/main/pr-104-abc",
        default_branch="main",
        is_merge_group=True,
    )


def on_branch(event_name: str, branch: str | None, default: str | None = "main") -> EventContext:
    return EventContext(
        event_name=event_name, sha=SHA, head_sha=SHA, ref_name=branch, default_branch=default
    )


# (case id, context, update-baseline, expected baseline_ref, expected promotion)
TABLE = [
    ("pr-auto", pull_request(), "auto", "release", "never"),
    ("pr-always", pull_request(), "always", "release", "never"),
    ("pr-never", pull_request(), "never", "release", "never"),
    ("pr-target-auto", pull_request("pull_request_target"), "auto", "release", "never"),
    ("pr-target-always", pull_request("pull_request_target"), "always", "release", "never"),
    ("merge-group-auto", merge_group(), "auto", "main", "never"),
    ("merge-group-always", merge_group(), "always", "main", "never"),
    ("push-default-auto", on_branch("push", "main"), "auto", "main", "if_clean"),
    ("push-default-always", on_branch("push", "main"), "always", "main", "always"),
    ("push-default-never", on_branch("push", "main"), "never", "main", "never"),
    ("push-side-auto", on_branch("push", "feature"), "auto", "main", "never"),
    ("push-side-always", on_branch("push", "feature"), "always", "main", "never"),
    ("push-side-never", on_branch("push", "feature"), "never", "main", "never"),
    ("push-tag-auto", on_branch("push", None), "auto", "main", "never"),
    ("push-unknown-default-auto", on_branch("push", "dev", None), "auto", "dev", "if_clean"),
    ("schedule-auto", on_branch("schedule", "trunk", "trunk"), "auto", "trunk", "if_clean"),
    ("schedule-always", on_branch("schedule", "trunk", "trunk"), "always", "trunk", "always"),
    ("schedule-never", on_branch("schedule", "trunk", "trunk"), "never", "trunk", "never"),
    ("dispatch-default-auto", on_branch("workflow_dispatch", "main"), "auto", "main", "if_clean"),
    (
        "dispatch-default-always",
        on_branch("workflow_dispatch", "main"),
        "always",
        "main",
        "always",
    ),
    ("dispatch-default-never", on_branch("workflow_dispatch", "main"), "never", "main", "never"),
    ("dispatch-side-auto", on_branch("workflow_dispatch", "exp"), "auto", "main", "never"),
    ("dispatch-side-always", on_branch("workflow_dispatch", "exp"), "always", "main", "never"),
    (
        "dispatch-unknown-default-auto",
        on_branch("workflow_dispatch", "exp", None),
        "auto",
        "exp",
        "if_clean",
    ),
    ("release-auto", on_branch("release", None), "auto", "main", "never"),
    ("release-always", on_branch("release", None), "always", "main", "never"),
    ("workflow-run-auto", on_branch("workflow_run", "main"), "auto", "main", "never"),
]


@pytest.mark.parametrize(
    ("ctx", "update", "baseline_ref", "promotion"),
    [case[1:] for case in TABLE],
    ids=[case[0] for case in TABLE],
)
def test_baseline_ref_and_promotion(
    ctx: EventContext, update: str, baseline_ref: str, promotion: str
) -> None:
    activity = decide(ctx, make_settings(update_baseline=update))
    assert activity.compare
    assert activity.baseline_ref == baseline_ref
    assert activity.promotion == promotion
    # A run may become the first baseline exactly where it could be promoted.
    assert activity.may_create_baseline is (promotion != "never")


@pytest.mark.parametrize("update", ["auto", "always"])
def test_side_branch_runs_say_why_the_baseline_is_not_updated(update: str) -> None:
    activity = decide(on_branch("push", "feature"), make_settings(update_baseline=update))
    assert any("'feature'" in note and "'main'" in note for note in activity.notes)


def test_update_baseline_never_needs_no_explanation() -> None:
    assert decide(on_branch("push", "feature"), make_settings(update_baseline="never")).notes == ()


def test_always_on_a_pull_request_says_it_does_not_apply() -> None:
    activity = decide(pull_request(), make_settings(update_baseline="always"))
    assert any("always" in note for note in activity.notes)


# ------------------------------------------------------------------------------------------------
# comments


@pytest.mark.parametrize(
    "ctx",
    [
        pull_request(),
        pull_request("pull_request_target"),
        pull_request(is_fork=True),
        merge_group(),
    ],
    ids=["pull_request", "pull_request_target", "fork", "merge_group"],
)
@pytest.mark.parametrize(("mode", "expected"), [("update", True), ("new", True), ("off", False)])
def test_pull_request_events_comment_unless_off(
    ctx: EventContext, mode: str, expected: bool
) -> None:
    assert decide(ctx, make_settings(comment=mode)).comment is expected


def test_no_comment_without_a_pr_number() -> None:
    assert not decide(pull_request(pr_number=None), make_settings()).comment


@pytest.mark.parametrize(
    "ctx",
    [
        on_branch("push", "main"),
        on_branch("schedule", "main"),
        on_branch("workflow_dispatch", "main"),
        on_branch("release", None),
    ],
    ids=["push", "schedule", "dispatch", "release"],
)
def test_other_events_never_comment(ctx: EventContext) -> None:
    activity = decide(ctx, make_settings(comment="update"))
    assert not activity.comment and not activity.is_pull_request


def test_is_pull_request_only_for_pull_request_events() -> None:
    assert decide(pull_request(), make_settings()).is_pull_request
    assert decide(pull_request("pull_request_target"), make_settings()).is_pull_request
    assert not decide(merge_group(), make_settings()).is_pull_request


# ------------------------------------------------------------------------------------------------
# check run and issue


@pytest.mark.parametrize(
    "ctx",
    [pull_request(), merge_group(), on_branch("push", "main"), on_branch("schedule", "main")],
    ids=["pr", "merge_group", "push", "schedule"],
)
@pytest.mark.parametrize("enabled", [True, False])
def test_check_run_follows_the_input(ctx: EventContext, enabled: bool) -> None:
    assert decide(ctx, make_settings(check_run=enabled)).check_run is enabled


@pytest.mark.parametrize(
    ("ctx", "expected"),
    [
        (on_branch("schedule", "main"), True),
        (on_branch("workflow_dispatch", "main"), True),
        (on_branch("workflow_dispatch", "exp"), False),
        (on_branch("push", "main"), True),
        (on_branch("push", "feature"), False),
        (pull_request(), False),
        (merge_group(), False),
        (on_branch("release", None), False),
    ],
    ids=[
        "schedule",
        "dispatch",
        "dispatch-side-branch",
        "push-default",
        "push-side",
        "pr",
        "merge_group",
        "release",
    ],
)
def test_issue_on_drift_events(ctx: EventContext, expected: bool) -> None:
    assert decide(ctx, make_settings(issue_on_drift=True)).issue_on_drift is expected
    assert not decide(ctx, make_settings(issue_on_drift=False)).issue_on_drift


# ------------------------------------------------------------------------------------------------
# no baseline, unknown refs, post-comment mode


@pytest.mark.parametrize(
    "ctx",
    [pull_request(), on_branch("push", "main"), on_branch("schedule", "main")],
    ids=["pr", "push", "schedule"],
)
def test_baseline_none_neither_compares_nor_writes(ctx: EventContext) -> None:
    activity = decide(
        ctx, make_settings(baseline="none", update_baseline="always", issue_on_drift=True)
    )
    assert not activity.compare
    assert activity.promotion == "never" and not activity.may_create_baseline
    assert not activity.issue_on_drift


def test_an_unknown_baseline_ref_does_not_compare_and_says_why() -> None:
    ctx = on_branch("push", None, default=None)
    activity = decide(ctx, make_settings())
    assert not activity.compare and activity.baseline_ref == ""
    assert activity.promotion == "never"
    assert any("not comparing" in note for note in activity.notes)


def test_a_pull_request_without_base_ref_reads_the_default_branch() -> None:
    activity = decide(pull_request(base_ref=None), make_settings())
    assert activity.baseline_ref == "main" and activity.compare


def test_post_comment_mode_is_its_own_activity_checking_the_workflow_runs_head() -> None:
    ctx = EventContext(event_name="workflow_run", sha="d" * 40, head_sha=SHA, default_branch="main")
    settings = make_settings(mode="post-comment", issue_on_drift=True)
    assert decide_activity(ctx, settings) == PostComment(expected_head=SHA)
    # Another event names no run whose commit the pull request must be at.
    dispatch = on_branch("workflow_dispatch", "main")
    assert decide_activity(dispatch, settings) == PostComment(expected_head=None)
