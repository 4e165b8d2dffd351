"""GitHubClient driven through real PyGithub against the fake GitHub server (no mocks)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from promptcanary_action.github.client import GitHubClient
from promptcanary_action.github.errors import (
    ArtifactTooLargeError,
    GitHubError,
    GitHubNotFoundError,
    GitHubPermissionError,
    GitHubRateLimitError,
)
from promptcanary_action.github.port import ArtifactInfo
from tests.fakes.github_server import FakeGitHubServer, make_zip
from tests.fakes.sleeps import Sleeps

REPO = "octo-org/octo-repo"
TOKEN = "ghs_SECRET_token_value_123"
MARKER = "<!-- promptcanary:comment:default -->"
HEAD, BASE = "a" * 40, "b" * 40


@dataclass(frozen=True)
class Note:
    """An annotation as the reports engineer's Annotation dataclass shapes it."""

    path: str
    start_line: int
    end_line: int
    annotation_level: str
    title: str
    message: str
    raw_details: str = ""


def make_client(
    server: FakeGitHubServer,
    sleeps: Sleeps | None = None,
    *,
    per_page: int = 100,
    max_retries: int = 3,
) -> GitHubClient:
    return GitHubClient(
        TOKEN,
        REPO,
        server.url,
        retry_sleep=sleeps or Sleeps(),
        per_page=per_page,
        max_retries=max_retries,
    )


@pytest.fixture
def gh(github_server: FakeGitHubServer) -> FakeGitHubServer:
    github_server.add_pull(7, "feature", "main", HEAD, BASE)
    return github_server


# -- sticky comment ----------------------------------------------------------------------------
def test_second_upsert_edits_the_first_comment(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    first = client.upsert_comment(7, f"{MARKER}\nscore 0.9", MARKER)
    second = client.upsert_comment(7, f"{MARKER}\nscore 0.7", MARKER)

    comments = gh.comments(7)
    assert len(comments) == 1
    assert comments[0].body == f"{MARKER}\nscore 0.7"
    assert comments[0].user == ("github-actions[bot]", "Bot")
    assert first == second and first.endswith(f"#issuecomment-{comments[0].id}")
    assert len(gh.requests_to("PATCH", r"/issues/comments/\d+$")) == 1
    assert gh.requests_to("GET", r"^/user$") == []


def test_marker_missing_from_body_is_appended(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    client.upsert_comment(7, "score 0.9", MARKER)
    client.upsert_comment(7, "score 0.8", MARKER)

    [comment] = gh.comments(7)
    assert comment.body.startswith("score 0.8") and comment.body.endswith(MARKER)


@pytest.mark.parametrize(("per_page", "page"), [(100, 2), (30, 4)])
def test_own_comment_found_on_a_later_page(gh: FakeGitHubServer, per_page: int, page: int) -> None:
    for i in range(110):
        gh.add_comment(7, f"review remark {i}")
    own = gh.add_comment(7, f"{MARKER}\nold report", "github-actions[bot]", "Bot")
    for i in range(10):
        gh.add_comment(7, f"later remark {i}")

    make_client(gh, per_page=per_page).upsert_comment(7, f"{MARKER}\nnew report", MARKER)

    assert len(gh.comments(7)) == 121
    assert gh.state.comments[own.id].body == f"{MARKER}\nnew report"
    pages = [r.query.get("page", "1") for r in gh.requests_to("GET", r"/issues/7/comments$")]
    assert pages == [str(n) for n in range(1, page + 1)]  # stops at the page that has it


def test_mode_new_always_creates(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    client.upsert_comment(7, f"{MARKER} one", MARKER, mode="new")
    client.upsert_comment(7, f"{MARKER} two", MARKER, mode="new")

    # Each also carries its own hidden write marker, so that a retry finds only itself.
    bodies = [c.body.split("\n")[0] for c in gh.comments(7)]
    assert bodies == [f"{MARKER} one", f"{MARKER} two"]
    assert gh.requests_to("GET", r"/issues/7/comments$") == []


def test_two_comment_ids_keep_two_comments(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    lint, evals = "<!-- promptcanary:comment:lint -->", "<!-- promptcanary:comment:evals -->"
    client.upsert_comment(7, f"{lint} a", lint)
    client.upsert_comment(7, f"{evals} b", evals)
    client.upsert_comment(7, f"{lint} c", lint)

    assert sorted(c.body for c in gh.comments(7)) == [f"{evals} b", f"{lint} c"]


def test_a_humans_comment_quoting_the_marker_is_not_taken_over(gh: FakeGitHubServer) -> None:
    human = gh.add_comment(7, f"why does it say {MARKER}?", "octocat", "User")

    make_client(gh).upsert_comment(7, f"{MARKER}\nreport", MARKER)

    assert gh.state.comments[human.id].body == f"why does it say {MARKER}?"
    bots = [c for c in gh.comments(7) if c.user[1] == "Bot"]
    assert [c.body for c in bots] == [f"{MARKER}\nreport"]


def test_a_personal_access_token_updates_its_own_comment(gh: FakeGitHubServer) -> None:
    """With a PAT the comments are the user's, not a Bot's: still one sticky comment."""
    gh.add_user_token("ghp_personal", "octo-dev")
    human = gh.add_comment(7, f"quoting {MARKER}", "octocat", "User")
    client = GitHubClient("ghp_personal", REPO, gh.url, retry_sleep=Sleeps())

    client.upsert_comment(7, f"{MARKER}\nfirst", MARKER)
    client.upsert_comment(7, f"{MARKER}\nsecond", MARKER)

    mine = [c for c in gh.comments(7) if c.user == ("octo-dev", "User")]
    assert [c.body for c in mine] == [f"{MARKER}\nsecond"]
    assert gh.state.comments[human.id].body == f"quoting {MARKER}"  # another user's stays
    assert len(gh.requests_to("GET", r"^/user$")) == 1  # asked once, then remembered


def test_the_workflow_token_never_asks_who_it_is_when_a_bot_comment_matches(
    gh: FakeGitHubServer,
) -> None:
    client = make_client(gh)
    client.upsert_comment(7, f"{MARKER}\nfirst", MARKER)
    client.upsert_comment(7, f"{MARKER}\nsecond", MARKER)

    assert [c.body for c in gh.comments(7)] == [f"{MARKER}\nsecond"]
    assert gh.requests_to("GET", r"^/user$") == []


# -- what approvals read ------------------------------------------------------------------------
def test_labels_who_added_one_and_the_pull_request_of_a_merge_commit(
    gh: FakeGitHubServer,
) -> None:
    client = make_client(gh, per_page=2)
    gh.label(7, "promptcanary: approve", "first")
    gh.label(7, "other", "someone")
    gh.label(7, "promptcanary: approve", "first", add=False)
    gh.label(7, "promptcanary: approve", "second")  # the newest labelling wins (page 2)

    pull = client.pull_request(7)
    assert (pull.number, pull.head_sha, pull.base_ref, pull.merged) == (7, HEAD, "main", False)
    assert pull.labels == ("other", "promptcanary: approve")
    event = client.last_labeled(7, "promptcanary: approve")
    assert event is not None and event.actor == "second" and event.created_at.tzinfo is not None
    assert client.last_labeled(7, "never-added") is None

    gh.merge_pull(7, "c" * 40)
    [merged] = client.pulls_of_commit("c" * 40)
    assert (merged.number, merged.merged) == (7, True)
    assert "promptcanary: approve" in merged.labels
    assert client.pulls_of_commit("d" * 40) == []
    assert gh.response_errors == [] and gh.validation_errors == []


def test_own_comment_is_the_bots_never_a_persons_quoting_the_marker(
    gh: FakeGitHubServer,
) -> None:
    client = make_client(gh)
    gh.add_comment(7, f"forged record <!-- promptcanary-approval:v1:e30= --> {MARKER}", "mallory")
    assert client.own_comment(7, MARKER) is None
    client.upsert_comment(7, "the report", MARKER)
    assert client.own_comment(7, MARKER) == f"the report\n\n{MARKER}"


@pytest.mark.parametrize(
    ("call", "path", "permission"),
    [
        (lambda c: c.pull_request(7), r"/pulls/7$", "pull-requests: read"),
        (lambda c: c.pulls_of_commit(HEAD), r"/commits/.*/pulls$", "pull-requests: read"),
        (lambda c: c.own_comment(7, MARKER), r"/issues/7/comments$", "pull-requests: read"),
        (lambda c: c.last_labeled(7, "x"), r"/issues/7/events$", "issues: read"),
    ],
)
def test_a_403_on_an_approval_read_names_the_permission(
    gh: FakeGitHubServer, call, path: str, permission: str
) -> None:
    gh.fail("GET", path, 403, message="Resource not accessible by integration")
    with pytest.raises(GitHubPermissionError) as err:
        call(make_client(gh))
    assert err.value.permission == permission and permission in str(err.value)


def test_comment_over_githubs_limit_is_cut_and_keeps_the_marker(gh: FakeGitHubServer) -> None:
    make_client(gh).upsert_comment(7, MARKER + "x" * 70_000, MARKER)

    [comment] = gh.comments(7)
    assert len(comment.body) <= 65_536 and MARKER in comment.body
    assert gh.validation_errors == []


# -- check runs --------------------------------------------------------------------------------
def test_check_run_with_120_annotations_is_sent_in_three_batches(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    run_id = client.create_check_run("PromptCanary", HEAD)
    [run] = gh.check_runs
    assert (run.id, run.status, run.head_sha) == (run_id, "in_progress", HEAD)
    assert gh.requests_to("POST", r"/check-runs$")[0].json["started_at"]

    notes = [Note("canary.yaml", i, i, "failure", f"t{i}", f"m{i}") for i in range(1, 121)]
    url = client.complete_check_run(
        run_id,
        conclusion="failure",
        title="2 regressions",
        summary="s",
        text="t",
        annotations=notes,
    )

    patches = gh.requests_to("PATCH", rf"/check-runs/{run_id}$")
    assert [len(p.json["output"]["annotations"]) for p in patches] == [50, 50, 20]
    assert [p.json.get("status") for p in patches] == [None, None, "completed"]
    assert [a["start_line"] for a in run.annotations] == list(range(1, 121))
    assert (run.status, run.conclusion, run.title) == ("completed", "failure", "2 regressions")
    assert run.completed_at is not None and url.endswith(f"/runs/{run_id}")


def test_check_run_without_annotations_is_one_patch_and_output_is_capped(
    gh: FakeGitHubServer,
) -> None:
    client = make_client(gh)
    run_id = client.create_check_run("PromptCanary", HEAD)
    client.complete_check_run(
        run_id, conclusion="success", title="ok", summary="s" * 70_000, text="t" * 80_000
    )

    [patch] = gh.requests_to("PATCH", rf"/check-runs/{run_id}$")
    assert "annotations" not in patch.json["output"]
    [run] = gh.check_runs
    assert run.conclusion == "success"
    assert len(run.summary or "") == 65_535 and len(run.text or "") == 65_535
    assert gh.validation_errors == []


def test_completing_a_check_run_made_by_another_client(gh: FakeGitHubServer) -> None:
    run_id = make_client(gh).create_check_run("PromptCanary", HEAD)
    make_client(gh).complete_check_run(run_id, conclusion="neutral", title="t", summary="s")

    assert gh.check_runs[0].conclusion == "neutral"


def test_invalid_conclusion_reports_githubs_validation_message(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    run_id = client.create_check_run("PromptCanary", HEAD)
    with pytest.raises(GitHubError) as err:
        client.complete_check_run(run_id, conclusion="sometimes", title="t", summary="s")

    assert err.value.status == 422 and "Validation Failed" in str(err.value)
    assert "conclusion" in str(err.value)


# -- drift issues ------------------------------------------------------------------------------
ISSUE_MARKER = "<!-- promptcanary:drift:canary.yaml -->"


def test_drift_issue_is_created_updated_and_closed(gh: FakeGitHubServer) -> None:
    client = make_client(gh)
    gh.add_issue("unrelated", body="nothing here")

    first = client.upsert_drift_issue(ISSUE_MARKER, "Drift: 2 regressions", "first")
    second = client.upsert_drift_issue(ISSUE_MARKER, "Drift: 3 regressions", "second")

    [issue] = [i for i in gh.issues if ISSUE_MARKER in (i.body or "")]
    assert first == second and first.endswith(f"/issues/{issue.number}")
    assert (issue.title, issue.labels, issue.state) == (
        "Drift: 3 regressions",
        ["promptcanary"],
        "open",
    )
    assert issue.body is not None and issue.body.startswith("second")

    assert client.close_drift_issue(ISSUE_MARKER, "Clean again in run 42.") is True
    assert issue.state == "closed"
    assert [c.body for c in gh.comments(issue.number)] == ["Clean again in run 42."]
    assert client.close_drift_issue(ISSUE_MARKER, "again") is False


def test_drift_issue_found_without_its_label(gh: FakeGitHubServer) -> None:
    bot_issue = gh.add_issue(
        "Drift", body=f"{ISSUE_MARKER} old", user_login="github-actions[bot]", user_type="Bot"
    )

    make_client(gh).upsert_drift_issue(ISSUE_MARKER, "Drift again", "new")

    assert len(gh.issues) == 1 and bot_issue.title == "Drift again"


def test_a_bot_pull_request_quoting_the_marker_is_not_the_drift_issue(gh: FakeGitHubServer) -> None:
    # The issues API lists pull requests too: a bot's PR that quotes the issue must stay as it is.
    pull = gh.add_pull(8, "fix-drift", "main", HEAD, BASE, title="Fix the drift")
    pull.body, pull.user = f"Fixes the drift.\n{ISSUE_MARKER}", ("github-actions[bot]", "Bot")

    url = make_client(gh).upsert_drift_issue(ISSUE_MARKER, "Drift again", "new")
    make_client(gh).upsert_drift_issue(ISSUE_MARKER, "Drift once more", "newer")

    assert (pull.title, pull.body) == ("Fix the drift", f"Fixes the drift.\n{ISSUE_MARKER}")
    [issue] = [i for i in gh.issues if i.pull is None and ISSUE_MARKER in (i.body or "")]
    assert url.endswith(f"/issues/{issue.number}") and issue.title == "Drift once more"


# -- artifacts and workflow runs ---------------------------------------------------------------
def test_artifacts_are_listed_newest_first_and_downloaded_without_auth_on_the_blob(
    gh: FakeGitHubServer, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    older = gh.add_artifact(
        "promptcanary-baseline", make_zip({"a.json": "{}"}), "main", 11, created_at=now
    )
    newer_zip = make_zip({"b.json": '{"v": 2}'})
    newer = gh.add_artifact(
        "promptcanary-baseline", newer_zip, "main", 12, created_at=now + timedelta(hours=1)
    )
    gh.add_artifact("other", b"PK", "main", 13)
    client = make_client(gh)

    found = client.list_artifacts("promptcanary-baseline")

    assert found == [
        ArtifactInfo(
            newer.id, "promptcanary-baseline", False, now + timedelta(hours=1), "main", 12
        ),
        ArtifactInfo(older.id, "promptcanary-baseline", False, now, "main", 11),
    ]
    client.download_artifact(newer.id, tmp_path / "a.zip", max_bytes=len(newer_zip))
    assert (tmp_path / "a.zip").read_bytes() == newer_zip
    [blob] = gh.blob_requests
    assert "authorization" not in blob.headers
    assert client.workflow_run_conclusion(12) == "success"


def test_expired_artifact_download_is_not_found(gh: FakeGitHubServer, tmp_path: Path) -> None:
    art = gh.add_artifact("promptcanary-baseline", b"PK", "main", 11, expired=True)

    with pytest.raises(GitHubNotFoundError) as err:
        make_client(gh).download_artifact(art.id, tmp_path / "a.zip", max_bytes=2**20)
    assert err.value.status == 410 and f"artifact {art.id}" in str(err.value)


@pytest.mark.parametrize("without_length", [False, True], ids=["content-length", "no-length"])
def test_artifact_above_the_cap_is_refused_without_reading_past_it(
    gh: FakeGitHubServer, tmp_path: Path, without_length: bool
) -> None:
    cap = 64 * 1024
    big = bytes(range(256)) * (16 * cap // 256)  # 16 times the cap
    art = gh.add_artifact("big", big, "main", 11, without_length=without_length)
    destination = tmp_path / "a.zip"

    with pytest.raises(ArtifactTooLargeError) as err:
        make_client(gh).download_artifact(art.id, destination, max_bytes=cap)

    assert f"artifact {art.id}" in str(err.value) and "max-artifact-mb" in str(err.value)
    # Streamed: at most the cap was kept (nothing at all when the length was announced).
    kept = destination.stat().st_size if destination.exists() else 0
    assert kept <= cap
    assert not without_length or kept > 0  # the no-length case really streamed to disk


# -- errors ------------------------------------------------------------------------------------
def test_403_on_comment_names_the_permission_and_the_fork_workaround(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/issues/7/comments$", 403, message="Resource not accessible by integration")
    sleeps = Sleeps()

    with pytest.raises(GitHubPermissionError) as err:
        make_client(gh, sleeps).upsert_comment(7, f"{MARKER} x", MARKER)

    message = str(err.value)
    assert err.value.permission == "pull-requests: write"
    assert "create the PR comment (403)" in message
    assert "`permissions: pull-requests: write`" in message
    assert "comment-file" in message and "workflow_run" in message
    assert TOKEN not in message and sleeps.delays == []


def test_404_on_pull_request_says_what_was_missing(gh: FakeGitHubServer) -> None:
    with pytest.raises(GitHubNotFoundError) as err:
        make_client(gh).upsert_comment(99, f"{MARKER} x", MARKER)
    assert "pull request #99 in octo-org/octo-repo" in str(err.value)
    assert err.value.status == 404


def test_a_500_is_retried_after_a_backoff(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/check-runs$", 500, times=1)
    sleeps = Sleeps()

    run_id = make_client(gh, sleeps).create_check_run("PromptCanary", HEAD)

    assert sleeps.delays == [1.0]
    assert [r.id for r in gh.check_runs] == [run_id]
    assert len(gh.requests_to("POST", r"/check-runs$")) == 2


def test_a_persisting_500_gives_up_after_max_retries(gh: FakeGitHubServer) -> None:
    gh.fail("GET", r"/issues/7/comments$", 502, message="Server Error")
    sleeps = Sleeps()

    with pytest.raises(GitHubError) as err:
        make_client(gh, sleeps, max_retries=2).upsert_comment(7, f"{MARKER} x", MARKER)

    assert sleeps.delays == [1.0, 2.0]
    assert err.value.status == 502 and "after 3 attempts" in str(err.value)
    assert "Server Error" in str(err.value) and gh.comments(7) == []


def test_secondary_rate_limit_waits_at_least_retry_after(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/issues/7/comments$", 403, times=1, secondary_rate_limit=True, retry_after=7)
    sleeps = Sleeps()

    make_client(gh, sleeps).upsert_comment(7, f"{MARKER} x", MARKER)

    assert len(sleeps.delays) == 1 and sleeps.delays[0] >= 7
    assert len(gh.comments(7)) == 1


def test_429_without_retry_after_waits_a_minute(gh: FakeGitHubServer) -> None:
    gh.fail("GET", r"/actions/runs/\d+$", 429, times=1, message="Too many requests")
    gh.add_artifact("x", b"PK", "main", 12, conclusion="failure")
    sleeps = Sleeps()

    assert make_client(gh, sleeps).workflow_run_conclusion(12) == "failure"
    assert sleeps.delays == [60.0]


def test_retry_after_longer_than_we_wait_gives_up_at_once(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/check-runs$", 403, secondary_rate_limit=True, retry_after=3600)
    sleeps = Sleeps()

    with pytest.raises(GitHubRateLimitError) as err:
        make_client(gh, sleeps).create_check_run("PromptCanary", HEAD)
    assert sleeps.delays == [] and "3600" in str(err.value)


def test_primary_rate_limit_is_not_waited_for(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/issues$", 403, primary_rate_limit=True)
    sleeps = Sleeps()

    with pytest.raises(GitHubRateLimitError) as err:
        make_client(gh, sleeps).upsert_drift_issue(ISSUE_MARKER, "t", "b")
    assert sleeps.delays == [] and "rate limit is used up" in str(err.value)


def test_unreachable_api_is_retried_then_reported(gh: FakeGitHubServer) -> None:
    with socket.socket() as sock:  # a port nothing listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    client = GitHubClient(TOKEN, REPO, f"http://127.0.0.1:{port}", retry_sleep=sleeps, timeout=2)

    with pytest.raises(GitHubError) as err:
        client.create_check_run("PromptCanary", HEAD)
    assert sleeps.delays == [1.0, 2.0, 4.0]
    assert "could not reach GitHub" in str(err.value) and err.value.status is None


def test_bad_token_is_reported_without_the_token(gh: FakeGitHubServer) -> None:
    gh.fail("GET", r"/actions/artifacts$", 401, message="Bad credentials")

    with pytest.raises(GitHubError) as err:
        make_client(gh).list_artifacts("promptcanary-baseline")
    assert "`github-token`" in str(err.value) and TOKEN not in str(err.value)
    assert TOKEN not in repr(make_client(gh))
