"""Publishing with a fake GitHub: comment, check run, annotations, issues, warnings, post-comment."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from promptcanary.core.models import (
    CanaryRunResult,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
)
from promptcanary_action.activity import Activity, PostComment
from promptcanary_action.annotations import build_annotations
from promptcanary_action.context import EventContext
from promptcanary_action.github.errors import (
    GitHubError,
    GitHubNotFoundError,
    GitHubPermissionError,
)
from promptcanary_action.github.port import GitHubPort
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.publish import (
    PostCommentError,
    issue_marker,
    post_comment_file,
    publish,
    start_check_run,
)
from promptcanary_action.render import comment_marker
from promptcanary_action.report_dir import STEP_FILE, write_reports
from promptcanary_action.settings import Settings
from promptcanary_action.workflow import Workflow
from tests.fakes.github_port_fake import FakeGitHubPort
from tests.unit.action.outcomes import drift_of, judged, pr_activity

HEAD = "a" * 40
MARKER = comment_marker("default")


def _port(github: FakeGitHubPort) -> GitHubPort:
    return github  # mypy checks that the fake implements the port


# ── outcomes ────────────────────────────────────────────────────────────────


def make_pair(model: str, *, regressed: bool, with_drift: bool = True) -> PairOutcome:
    provider = ProviderConfig(model_id=model)
    current = 0.0 if regressed else 1.0
    run = CanaryRunResult(
        suite_name="demo",
        provider=provider,
        llm_responses=[LLMResponse(prompt_id="p1", provider_model_id=model, content="x")],
        probe_results=[
            ProbeResult(
                probe_id="json_validity", prompt_id="p1", passed=not regressed, score=current
            )
        ],
    )
    drift = drift_of(
        run,
        [
            ProbeComparison(
                probe_id="json_validity",
                prompt_id="p1",
                baseline_score=1.0,
                current_score=current,
                score_delta=current - 1.0,
                baseline_passed=True,
                current_passed=not regressed,
                regression=regressed,
            )
        ],
    )
    return judged(
        PairOutcome(
            suite_name="demo",
            suite_file="canary.yaml",
            model=model,
            run=run,
            drift=drift if with_drift else None,
            prompt_lines={"p1": 5},
        )
    )


def make_outcome(
    *pairs: PairOutcome, gate_failed: bool = False, untrustworthy: bool = False, pr: int | None = 5
) -> StepOutcome:
    return StepOutcome(
        pairs=list(pairs),
        fail_on="regression",
        gate_failed=gate_failed,
        untrustworthy=untrustworthy,
        verdict="verdict line",
        pr_number=pr,
        sha=HEAD,
        run_url="https://github.test/run/9",
    )


PR_CTX = EventContext(event_name="pull_request", sha="m" * 40, head_sha=HEAD, pr_number=5)
FORK_CTX = replace(PR_CTX, is_fork=True)
PUSH_CTX = EventContext(
    event_name="push", sha=HEAD, head_sha=HEAD, default_branch="main", ref_name="main"
)


def workflow() -> tuple[Workflow, io.StringIO]:
    out = io.StringIO()
    return Workflow(out), out


def warnings_in(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("::warning")]


def run_publish(
    github: FakeGitHubPort | None,
    outcome: StepOutcome,
    *,
    settings: Settings | None = None,
    act: Activity | None = None,
    ctx: EventContext = PR_CTX,
    check_run: int | None = 77,
) -> tuple[Workflow, io.StringIO]:
    wf, out = workflow()
    publish(
        outcome,
        settings=settings or Settings(),
        activity=act or pr_activity(),
        ctx=ctx,
        github=_port(github) if github is not None else None,
        workflow=wf,
        comment="the comment body" + MARKER,
        check_run=check_run,
    )
    return wf, out


# ── comment ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("mode", "expected"), [("update", "update"), ("new", "new")])
def test_comment_is_posted_on_the_pr_in_the_configured_mode(mode: str, expected: str) -> None:
    github = FakeGitHubPort()
    settings = replace(Settings(), comment=mode)  # type: ignore[arg-type]
    wf, out = run_publish(github, make_outcome(make_pair("m", regressed=False)), settings=settings)
    (call,) = github.named("upsert_comment")
    assert call == {
        "pr_number": 5,
        "body": "the comment body" + MARKER,
        "marker": MARKER,
        "mode": expected,
    }
    assert wf.outputs["comment-url"] == "https://github.test/pr/5#comment-1"
    assert warnings_in(out) == []


def test_no_comment_when_the_activity_says_so_or_there_is_no_pr() -> None:
    github = FakeGitHubPort()
    run_publish(
        github, make_outcome(make_pair("m", regressed=False)), act=pr_activity(comment=False)
    )
    run_publish(
        github,
        make_outcome(make_pair("m", regressed=False)),
        ctx=replace(PR_CTX, pr_number=None),
    )
    assert github.named("upsert_comment") == []


# ── check run ───────────────────────────────────────────────────────────────


def test_start_check_run_on_the_head_commit() -> None:
    github = FakeGitHubPort()
    wf, _ = workflow()
    settings = replace(Settings(), check_name="Canary")
    assert start_check_run(settings, pr_activity(), PR_CTX, _port(github), wf) == 77
    assert github.named("create_check_run") == [{"name": "Canary", "head_sha": HEAD}]
    assert (
        start_check_run(settings, pr_activity(check_run=False), PR_CTX, _port(github), wf) is None
    )
    assert start_check_run(settings, pr_activity(), PR_CTX, None, wf) is None
    assert len(github.named("create_check_run")) == 1


def test_start_check_run_permission_error_is_a_warning() -> None:
    github = FakeGitHubPort(
        fail={"create_check_run": GitHubPermissionError("create a check run", "checks: write")}
    )
    wf, out = workflow()
    assert start_check_run(Settings(), pr_activity(), PR_CTX, _port(github), wf) is None
    (warning,) = warnings_in(out)
    assert "checks: write" in warning


@pytest.mark.parametrize(
    ("regressed", "gate", "untrusted", "expected"),
    [
        (False, False, False, "success"),
        (True, False, False, "neutral"),
        (True, True, False, "failure"),
        (False, False, True, "failure"),
    ],
)
def test_check_run_conclusion(regressed: bool, gate: bool, untrusted: bool, expected: str) -> None:
    outcome = make_outcome(
        make_pair("m", regressed=regressed), gate_failed=gate, untrustworthy=untrusted
    )
    assert outcome.conclusion == expected
    github = FakeGitHubPort()
    wf, _ = run_publish(github, outcome)
    (call,) = github.named("complete_check_run")
    assert call["conclusion"] == expected
    assert call["check_run_id"] == 77
    assert wf.outputs["check-run-url"] == "https://github.test/runs/77"


def test_an_unreadable_baseline_fails_the_check_run_as_it_fails_the_step() -> None:
    broken = make_pair("m", regressed=False, with_drift=False).model_copy(
        update={"baseline_error": "baselines/x.json: not valid JSON"}
    )
    assert make_outcome(broken).conclusion == "failure"


def test_annotations_are_passed_to_the_check_run() -> None:
    outcome = make_outcome(make_pair("m", regressed=True), gate_failed=True)
    github = FakeGitHubPort()
    run_publish(github, outcome)
    (call,) = github.named("complete_check_run")
    assert call["annotations"] == build_annotations(outcome)
    assert [(a.path, a.start_line, a.annotation_level) for a in call["annotations"]] == [
        ("canary.yaml", 5, "failure")
    ]


def test_no_check_run_id_means_no_completion() -> None:
    github = FakeGitHubPort()
    run_publish(github, make_outcome(make_pair("m", regressed=False)), check_run=None)
    assert github.named("complete_check_run") == []


# ── issues ──────────────────────────────────────────────────────────────────


def test_issues_opened_for_drifted_pairs_and_closed_for_clean_ones() -> None:
    drifted = make_pair("bad/model", regressed=True)
    clean = make_pair("good/model", regressed=False)
    never_compared = make_pair("new/model", regressed=False, with_drift=False)
    github = FakeGitHubPort()
    run_publish(
        github,
        make_outcome(drifted, clean, never_compared, pr=None),
        act=pr_activity(comment=False, issue_on_drift=True, is_pull_request=False),
        ctx=PUSH_CTX,
    )
    (opened,) = github.named("upsert_drift_issue")
    assert opened["marker"] == issue_marker(drifted)
    assert "bad/model" in opened["title"]
    (closed,) = github.named("close_drift_issue")
    assert closed["marker"] == issue_marker(clean)
    assert "https://github.test/run/9" in closed["comment"]
    assert issue_marker(drifted) != issue_marker(clean)


def test_models_alike_in_their_first_60_characters_have_their_own_issue() -> None:
    # Otherwise the clean model's run closes the issue its drifted twin has just opened.
    arn = "bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic."
    drifted = make_pair(arn + "claude-3-5-sonnet", regressed=True)
    clean = make_pair(arn + "claude-3-haiku", regressed=False)
    assert issue_marker(drifted) != issue_marker(clean)
    # Names that fit keep the marker of earlier versions, so their open issues are still found.
    assert issue_marker(make_pair("openai/gpt-4o", regressed=False)) == (
        "<!-- promptcanary-action:issue=demo/openai-gpt-4o -->"
    )


def test_closing_comment_escapes_suite_name_and_model() -> None:
    clean = make_pair("org/<b>model</b>", regressed=False).model_copy(
        update={"suite_name": "@org/team #12 *bold*"}
    )
    github = FakeGitHubPort()
    run_publish(
        github,
        make_outcome(clean, pr=None),
        act=pr_activity(comment=False, issue_on_drift=True, is_pull_request=False),
        ctx=PUSH_CTX,
    )
    (closed,) = github.named("close_drift_issue")
    comment = closed["comment"]
    assert "@org/team" not in comment and "#12" not in comment and "*bold*" not in comment
    assert "<b>" not in comment.replace("`org/<b>model</b>`", "")
    assert "`org/<b>model</b>`" in comment


def test_no_issues_without_issue_on_drift() -> None:
    github = FakeGitHubPort()
    run_publish(github, make_outcome(make_pair("m", regressed=True), pr=None), ctx=PUSH_CTX)
    assert github.named("upsert_drift_issue") == [] and github.named("close_drift_issue") == []


# ── failures become warnings ────────────────────────────────────────────────


def all_failing() -> dict[str, GitHubError]:
    return {
        "upsert_comment": GitHubPermissionError(
            "comment on pull request #5", "pull-requests: write"
        ),
        "complete_check_run": GitHubPermissionError("update check run 77", "checks: write"),
        "upsert_drift_issue": GitHubPermissionError("open an issue", "issues: write"),
        "close_drift_issue": GitHubNotFoundError("issue not found", status=404),
    }


def test_every_github_error_is_a_warning_naming_the_permission() -> None:
    github = FakeGitHubPort(fail=all_failing())
    outcome = make_outcome(make_pair("a", regressed=True), make_pair("b", regressed=False))
    wf, out = run_publish(github, outcome, act=pr_activity(issue_on_drift=True))
    warnings = warnings_in(out)
    assert len(warnings) == 4
    assert "pull-requests: write" in warnings[0]
    assert "checks: write" in warnings[1]
    assert "issues: write" in warnings[2]
    assert "issue not found" in warnings[3]
    # Every call was attempted although the earlier ones failed.
    assert [name for name, _ in github.calls] == [
        "upsert_comment",
        "complete_check_run",
        "upsert_drift_issue",
        "close_drift_issue",
    ]
    assert "comment-url" not in wf.outputs and "check-run-url" not in wf.outputs


def test_fork_comment_refusal_says_how_to_post_it_later() -> None:
    github = FakeGitHubPort(fail=all_failing())
    _, out = run_publish(github, make_outcome(make_pair("a", regressed=False)), ctx=FORK_CTX)
    comment_warning, check_warning = warnings_in(out)
    assert "pull-requests: write" in comment_warning
    assert "comment-file" in comment_warning and "post-comment" in comment_warning
    assert "checks: write" in check_warning
    assert "post-comment" not in check_warning
    # Said once: the GitHub error's own hint and the fork note must not repeat each other.
    assert comment_warning.count("post-comment") == 1
    assert comment_warning.count("read-only") == 1
    assert check_warning.count("read-only") == 1


def test_fork_note_for_a_permission_github_gives_no_hint_for() -> None:
    github = FakeGitHubPort(
        fail={"upsert_comment": GitHubPermissionError("comment", "contents: write")}
    )
    _, out = run_publish(github, make_outcome(make_pair("a", regressed=False)), ctx=FORK_CTX)
    (warning,) = warnings_in(out)
    assert "contents: write" in warning
    assert warning.count("read-only") == 1


def test_without_github_one_warning_and_no_call() -> None:
    _, out = run_publish(
        None, make_outcome(make_pair("a", regressed=True)), act=pr_activity(issue_on_drift=True)
    )
    (warning,) = warnings_in(out)
    assert "No GitHub token" in warning


# ── post-comment mode ───────────────────────────────────────────────────────


# What decide() answers for mode: post-comment on a workflow_run event for the run at HEAD.
WORKFLOW_RUN = PostComment(expected_head=HEAD)


def write_step(tmp_path: Path, outcome: StepOutcome) -> Path:
    write_reports(outcome, tmp_path, "fork's markdown (never posted)", "s")
    return tmp_path


def test_post_comment_rerenders_and_posts_on_the_pr(tmp_path: Path) -> None:
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=True), pr=5))
    github = FakeGitHubPort()
    wf, _ = workflow()
    settings = replace(Settings(), comment_id="fork")
    assert post_comment_file(settings, WORKFLOW_RUN, _port(github), wf, folder) == 0
    assert github.named("pull_head_sha") == [{"pr_number": 5}]
    (call,) = github.named("upsert_comment")
    assert call["pr_number"] == 5
    assert call["marker"] == comment_marker("fork")
    assert call["body"].endswith(comment_marker("fork"))
    assert "fork's markdown" not in call["body"]
    assert "verdict line" in call["body"]
    assert wf.outputs["comment-url"] == "https://github.test/pr/5#comment-1"


def test_post_comment_without_step_file_names_it(tmp_path: Path) -> None:
    wf, _ = workflow()
    with pytest.raises(PostCommentError) as info:
        post_comment_file(Settings(), WORKFLOW_RUN, _port(FakeGitHubPort()), wf, tmp_path)
    assert str(tmp_path / STEP_FILE) in str(info.value)


@pytest.mark.parametrize(
    "content", [b"{not json", b'{"pairs": "x"}', b"\xff\xfe"], ids=["json", "shape", "bytes"]
)
def test_post_comment_with_invalid_step_file_names_it(tmp_path: Path, content: bytes) -> None:
    (tmp_path / STEP_FILE).write_bytes(content)
    wf, _ = workflow()
    github = FakeGitHubPort()
    with pytest.raises(PostCommentError) as info:
        post_comment_file(Settings(), WORKFLOW_RUN, _port(github), wf, tmp_path)
    assert str(info.value).startswith(f"{tmp_path / STEP_FILE}: not a PromptCanary step report")
    assert github.calls == []


def test_post_comment_without_pr_number_names_the_file(tmp_path: Path) -> None:
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=False), pr=None))
    wf, _ = workflow()
    github = FakeGitHubPort()
    with pytest.raises(PostCommentError, match="not for a pull request") as info:
        post_comment_file(Settings(), WORKFLOW_RUN, _port(github), wf, folder)
    assert str(folder / STEP_FILE) in str(info.value)
    assert github.calls == []


def test_post_comment_refuses_when_the_pr_head_moved(tmp_path: Path) -> None:
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=False), pr=5))
    github = FakeGitHubPort(head="b" * 40)
    wf, _ = workflow()
    with pytest.raises(PostCommentError) as info:
        post_comment_file(Settings(), WORKFLOW_RUN, _port(github), wf, folder)
    message = str(info.value)
    assert str(folder / STEP_FILE) in message
    assert "#5" in message and "b" * 12 in message and HEAD[:12] in message
    assert github.named("upsert_comment") == []


def test_post_comment_without_github_is_an_error(tmp_path: Path) -> None:
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=False), pr=5))
    wf, _ = workflow()
    with pytest.raises(PostCommentError, match="github-token"):
        post_comment_file(Settings(), WORKFLOW_RUN, None, wf, folder)


def test_post_comment_github_failure_is_a_warning(tmp_path: Path) -> None:
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=False), pr=5))
    github = FakeGitHubPort(
        fail={
            "upsert_comment": GitHubPermissionError(
                "comment on pull request #5", "pull-requests: write"
            )
        }
    )
    wf, out = workflow()
    assert post_comment_file(Settings(), WORKFLOW_RUN, _port(github), wf, folder) == 0
    (warning,) = warnings_in(out)
    assert "pull-requests: write" in warning


def test_step_file_is_plain_json_the_fork_could_edit(tmp_path: Path) -> None:
    # The PR number comes from the file: the head check is what stops aiming at another PR.
    folder = write_step(tmp_path, make_outcome(make_pair("a", regressed=False), pr=5))
    data = json.loads((folder / STEP_FILE).read_text(encoding="utf-8"))
    data["pr_number"] = 6
    (folder / STEP_FILE).write_text(json.dumps(data), encoding="utf-8")
    github = FakeGitHubPort(head="c" * 40)  # PR #6 is at another commit
    wf, _ = workflow()
    with pytest.raises(PostCommentError, match="#6"):
        post_comment_file(Settings(), WORKFLOW_RUN, _port(github), wf, folder)
    assert github.named("upsert_comment") == []
