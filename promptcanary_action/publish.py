"""Publishing to GitHub: the check run, the sticky comment, drift issues, post-comment mode.

Every GitHub failure here becomes a warning that says what permission or step is missing: the
results are already in the report folder, the outputs and the job summary when this runs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from promptcanary.core.models import name_slug
from promptcanary.core.render.markdown import code_span, escape_md, truncate
from promptcanary_action.activity import Activity, PostComment
from promptcanary_action.annotations import build_annotations
from promptcanary_action.context import EventContext
from promptcanary_action.github.errors import GitHubError, GitHubPermissionError
from promptcanary_action.github.port import GitHubPort
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.render import (
    check_run_output,
    comment_marker,
    render_comment,
    render_issue,
)
from promptcanary_action.report_dir import STEP_FILE
from promptcanary_action.settings import Settings
from promptcanary_action.workflow import Workflow


class PostCommentError(Exception):
    """post-comment mode cannot post the file it was given (exit 2)."""


def _warn(workflow: Workflow, exc: GitHubError, *, fork: bool = False) -> None:
    message = str(exc)
    # GitHubPermissionError already explains forks for the permissions a fork run lacks most
    # often (pull-requests, checks: with how to post the comment later); saying it twice buries
    # the fix.
    if fork and isinstance(exc, GitHubPermissionError) and "fork" not in message:
        message += (
            " This pull request comes from a fork, whose token is read-only: the report is"
            " in the job summary and the report folder."
        )
    workflow.warning(message, title="PromptCanary could not publish to GitHub")


def start_check_run(
    settings: Settings,
    activity: Activity,
    ctx: EventContext,
    github: GitHubPort | None,
    workflow: Workflow,
) -> int | None:
    if not activity.check_run or github is None or not ctx.commit_sha:
        return None
    try:
        return github.create_check_run(settings.check_name, ctx.commit_sha)
    except GitHubError as exc:
        _warn(workflow, exc, fork=ctx.is_fork)
        return None


def abandon_check_run(
    check_run: int | None,
    problem: str,
    *,
    ctx: EventContext,
    github: GitHubPort | None,
    workflow: Workflow,
) -> None:
    """Complete a started check run as failed when the step stops before it has a report.

    GitHub never times out a check run created through the API: left ``in_progress``, it shows
    as running on the pull request for good.
    """
    if check_run is None or github is None:
        return
    try:
        github.complete_check_run(
            check_run,
            conclusion="failure",
            title="PromptCanary could not run",
            summary=escape_md(truncate(problem, 4_000)),
        )
    except GitHubError as exc:
        _warn(workflow, exc, fork=ctx.is_fork)


def issue_marker(pair: PairOutcome) -> str:
    suite, model = name_slug(pair.suite_name), name_slug(pair.model)
    return f"<!-- promptcanary-action:issue={suite}/{model} -->"


def publish(
    outcome: StepOutcome,
    *,
    settings: Settings,
    activity: Activity,
    ctx: EventContext,
    github: GitHubPort | None,
    workflow: Workflow,
    comment: str,
    check_run: int | None,
) -> None:
    """Comment, check run and issues; each failure is a warning, never an exception."""
    if github is None:
        if activity.comment or check_run is not None:
            workflow.warning(
                "No GitHub token or repository: nothing was posted to GitHub. The report is in "
                "the report folder, the outputs and the job summary.",
                title="PromptCanary",
            )
        return
    if outcome.cancelled is not None:
        # The runner kills the container seconds after the signal: only the check run, which
        # would otherwise stay "in progress" for good, is completed.
        _complete_cancelled(outcome, github, ctx, workflow, check_run)
        return
    if activity.comment and ctx.pr_number is not None:
        try:
            url = github.upsert_comment(
                ctx.pr_number,
                comment,
                comment_marker(settings.comment_id),
                mode="new" if settings.comment == "new" else "update",
            )
            workflow.set_output("comment-url", url)
        except GitHubError as exc:
            _warn(workflow, exc, fork=ctx.is_fork)
    if check_run is not None:
        title, summary, text = check_run_output(outcome)
        try:
            url = github.complete_check_run(
                check_run,
                conclusion=outcome.conclusion,
                title=title,
                summary=summary,
                text=text,
                annotations=build_annotations(outcome),
            )
            workflow.set_output("check-run-url", url)
        except GitHubError as exc:
            _warn(workflow, exc, fork=ctx.is_fork)
    if activity.issue_on_drift:
        _publish_issues(outcome, github, workflow)


def _complete_cancelled(
    outcome: StepOutcome,
    github: GitHubPort,
    ctx: EventContext,
    workflow: Workflow,
    check_run: int | None,
) -> None:
    if check_run is None:
        return
    title, summary, text = check_run_output(outcome)
    for conclusion in ("cancelled", "neutral"):
        try:
            url = github.complete_check_run(
                check_run, conclusion=conclusion, title=title, summary=summary, text=text
            )
        except GitHubError as exc:
            if exc.status == 422 and conclusion == "cancelled":
                continue  # GitHub refused the conclusion: neutral, the summary says why
            _warn(workflow, exc, fork=ctx.is_fork)
            return
        workflow.set_output("check-run-url", url)
        return


def _publish_issues(outcome: StepOutcome, github: GitHubPort, workflow: Workflow) -> None:
    for pair in outcome.pairs:
        if pair.drift is None:
            continue
        marker = issue_marker(pair)
        try:
            if pair.regression_count:
                title, body = render_issue(outcome, pair)
                github.upsert_drift_issue(marker, title, body)
            else:
                github.close_drift_issue(
                    marker,
                    f"A later run found no drift in {escape_md(pair.suite_name)} on "
                    f"{code_span(pair.model)}"
                    + (f": {outcome.run_url}" if outcome.run_url else "."),
                )
        except GitHubError as exc:
            _warn(workflow, exc)


def post_comment_file(
    settings: Settings,
    activity: PostComment,
    github: GitHubPort | None,
    workflow: Workflow,
    report_dir: Path,
) -> int:
    """``mode: post-comment``: post the report a fork's run left (the workflow_run half).

    The report folder comes from an untrusted run, so its markdown is never posted as is: the
    comment is rendered again, with our escaping, from the structured ``step.json``.
    """
    path = report_dir / STEP_FILE
    if not path.is_file():
        raise PostCommentError(
            f"mode 'post-comment': {path} not found; download the artifact holding the fork run's "
            "report folder into 'report-dir' first"
        )
    try:
        outcome = StepOutcome.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise PostCommentError(
            f"{path}: not a PromptCanary step report ({exc.error_count()} "
            "problem(s)); was it produced by this version of the action?"
        ) from None
    if outcome.pr_number is None:
        raise PostCommentError(f"{path}: the run was not for a pull request; nothing to post")
    if github is None:
        raise PostCommentError("mode 'post-comment' needs the 'github-token' input")
    # Only post where the run's commit is the PR's head: a fork cannot aim at another PR.
    try:
        head = github.pull_head_sha(outcome.pr_number)
    except GitHubError as exc:
        _warn(workflow, exc)
        return 0
    expected = activity.expected_head
    if expected and head != expected:
        raise PostCommentError(
            f"{path}: pull request #{outcome.pr_number} is at {head[:12]}, not at the commit of "
            f"the workflow run that produced this report ({expected[:12]}); not posting"
        )
    marker = comment_marker(settings.comment_id)
    try:
        url = github.upsert_comment(
            outcome.pr_number,
            render_comment(outcome, marker),
            marker,
            mode="new" if settings.comment == "new" else "update",
        )
        workflow.set_output("comment-url", url)
    except GitHubError as exc:
        _warn(workflow, exc)
    return 0
