"""The fake GitHub server, driven by PyGithub (the client the action uses).

PyGithub knobs that keep these tests fast (all PyGithub 2.x constructor arguments):
- `seconds_between_requests=None, seconds_between_writes=None`: PyGithub otherwise sleeps 0.25 s
  between any two requests and 1 s between writes.
- `retry=None` turns urllib3 retries off, so an injected error surfaces at once. The default,
  `GithubRetry()`, retries 5xx (GET and POST too) up to 10 times without backoff and a 403 that
  carries `Retry-After` or a rate-limit message; it sleeps `secondary_rate_wait` (60 s) on a
  secondary limit without Retry-After and until X-RateLimit-Reset on a primary limit, unless
  `max_rate_limit_wait` caps it (then it raises RateLimitExceededExceedsMaxWait).
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import github
import pytest
import requests
from github.GithubRetry import GithubRetry

from tests.fakes.github_server import FakeGitHubServer, make_zip

REPO = "octo-org/octo-repo"
HEAD, BASE = "a" * 40, "b" * 40


def client(
    server: FakeGitHubServer, token: str = "ghs_test", retry=None, lazy: bool = False
) -> github.Github:
    return github.Github(
        auth=github.Auth.Token(token),
        base_url=server.url,
        retry=retry,
        timeout=5,
        seconds_between_requests=None,
        seconds_between_writes=None,
        lazy=lazy,
    )


def raw(
    server: FakeGitHubServer, method: str, path: str, token: str | None = "ghs_test", **kw
) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    return requests.request(method, server.url + path, headers=headers, timeout=5, **kw)


def annotation(line: int, level: str = "warning") -> dict:
    return {
        "path": "canary.yaml",
        "start_line": line,
        "end_line": line,
        "annotation_level": level,
        "message": f"regression at line {line}",
    }


@pytest.fixture
def repo(github_server):
    github_server.add_pull(7, "feature", "main", HEAD, BASE)
    return client(github_server).get_repo(REPO)


def test_repo_and_pull(github_server, repo):
    assert repo.full_name == REPO and repo.default_branch == "main"
    pull = repo.get_pull(7)
    assert (pull.head.ref, pull.head.sha, pull.base.ref, pull.base.sha) == (
        "feature",
        HEAD,
        "main",
        BASE,
    )
    assert pull.head.repo.full_name == REPO
    github_server.add_pull(8, "patch-1", "main", "c" * 40, BASE, fork=True)
    fork_pull = repo.get_pull(8)
    assert fork_pull.head.repo.fork and fork_pull.head.repo.full_name == "contributor/octo-repo"
    with pytest.raises(github.UnknownObjectException):
        repo.get_pull(99)


def test_labels_their_events_and_the_pull_requests_of_a_commit(github_server, repo):
    github_server.label(7, "promptcanary: approve", "reviewer")
    github_server.label(7, "other", "someone")
    pull = repo.get_pull(7)
    assert [lb.name for lb in pull.labels] == ["promptcanary: approve", "other"]
    events = list(repo.get_issue(7).get_events())
    assert [(e.event, e.actor.login, e.label.name) for e in events] == [
        ("labeled", "reviewer", "promptcanary: approve"),
        ("labeled", "someone", "other"),
    ]
    # An open pull request is found by its head commit, a merged one by its merge commit.
    # (lazy: the commit itself is never fetched, as in the action's client)
    repo = client(github_server, lazy=True).get_repo(REPO)
    assert [p.number for p in repo.get_commit(HEAD).get_pulls()] == [7]
    github_server.label(7, "promptcanary: approve", "reviewer", add=False)
    github_server.merge_pull(7, "c" * 40)
    assert [p.number for p in repo.get_commit("c" * 40).get_pulls()] == [7]
    assert list(repo.get_commit(HEAD).get_pulls()) == []
    merged = repo.get_pull(7)
    assert merged.merged and [lb.name for lb in merged.labels] == ["other"]
    assert [e.event for e in repo.get_issue(7).get_events()][-1] == "unlabeled"
    assert github_server.response_errors == [] and github_server.validation_errors == []


def test_comments_paginate_past_page_one_and_edit(github_server, repo):
    for i in range(120):
        github_server.add_comment(7, f"comment {i}")
    mine = repo.get_issue(7).create_comment("<!-- promptcanary:default -->\nfirst run")
    assert (mine.user.login, mine.user.type) == ("github-actions[bot]", "Bot")

    listed = list(repo.get_issue(7).get_comments())
    assert len(listed) == 121 and listed[0].body == "comment 0"
    pages = [
        r.query.get("page", "1") for r in github_server.requests_to("GET", r"/issues/7/comments$")
    ]
    assert pages == ["1", "2", "3", "4", "5"]  # PaginatedList followed our Link headers

    sticky = [c for c in listed if c.user.type == "Bot" and "promptcanary:default" in c.body]
    sticky[0].edit("<!-- promptcanary:default -->\nsecond run")
    assert github_server.comments(7)[-1].body.endswith("second run")
    assert len(github_server.comments(7)) == 121


def test_link_header_and_per_page_limits(github_server, repo):
    for i in range(250):
        github_server.add_comment(7, f"c{i}")
    resp = raw(
        github_server, "GET", "/repos/octo-org/octo-repo/issues/7/comments?per_page=50&page=2"
    )
    assert len(resp.json()) == 50
    links = resp.links
    assert links["next"]["url"].endswith("per_page=50&page=3") and links["last"]["url"].endswith(
        "page=5"
    )
    assert links["prev"]["url"].endswith("page=1") and links["first"]["url"].startswith(
        github_server.url
    )
    assert (
        len(
            raw(
                github_server, "GET", "/repos/octo-org/octo-repo/issues/7/comments?per_page=500"
            ).json()
        )
        == 100
    )
    assert (
        len(raw(github_server, "GET", "/repos/octo-org/octo-repo/issues/7/comments").json()) == 30
    )
    last = raw(github_server, "GET", "/repos/octo-org/octo-repo/issues/7/comments?page=20")
    assert last.json() == [] and "next" not in last.links


def test_check_run_annotations_accumulate(github_server, repo):
    run = repo.create_check_run(
        "PromptCanary",
        HEAD,
        status="in_progress",
        output={
            "title": "Running",
            "summary": "first batch",
            "annotations": [annotation(n) for n in range(1, 51)],
        },
    )
    run.edit(
        conclusion="failure",
        output={
            "title": "2 regressions",
            "summary": "done",
            "text": "details",
            "annotations": [annotation(60, "failure")],
        },
    )
    stored = github_server.check_runs[0]
    assert (stored.name, stored.head_sha, stored.status, stored.conclusion) == (
        "PromptCanary",
        HEAD,
        "completed",
        "failure",
    )
    assert (stored.title, stored.summary, stored.text) == ("2 regressions", "done", "details")
    assert len(stored.annotations) == 51 and stored.annotations[-1]["annotation_level"] == "failure"
    fetched = repo.get_check_run(run.id)
    assert fetched.output.annotations_count == 51 and fetched.conclusion == "failure"


def test_issues_create_list_edit(github_server, repo):
    github_server.add_issue("unrelated", labels=["bug"])
    issue = repo.create_issue(
        "Prompt drift detected", body="details", labels=["promptcanary", "drift"]
    )
    assert issue.user.login == "github-actions[bot]"
    found = list(
        repo.get_issues(state="open", labels=["promptcanary"], creator="github-actions[bot]")
    )
    assert [i.number for i in found] == [issue.number]
    issue.edit(body="updated", state="closed")
    assert list(repo.get_issues(state="open", labels=["promptcanary"])) == []
    closed = list(repo.get_issues(state="closed"))
    assert closed[0].body == "updated" and closed[0].closed_at is not None
    # the PR is an issue too: GitHub lists it among issues, with a pull_request key
    assert any(i.pull_request is not None for i in repo.get_issues(state="all"))
    assert [i.title for i in github_server.issues] == ["unrelated", "Prompt drift detected"]


def test_artifacts_list_by_name_and_download_through_redirect(github_server, repo):
    old = datetime.now(UTC) - timedelta(days=3)
    github_server.add_artifact(
        "promptcanary-baseline", make_zip({"baseline.json": "{}"}), "main", 11, created_at=old
    )
    newest = github_server.add_artifact(
        "promptcanary-baseline", make_zip({"baseline.json": '{"v": 2}'}), "main", 12
    )
    github_server.add_artifact("other", b"PK", "main", 13)
    expired = github_server.add_artifact(
        "promptcanary-baseline", b"", "feature", 14, expired=True, created_at=old
    )

    listed = list(repo.get_artifacts(name="promptcanary-baseline"))
    assert listed[0].id == newest.id and len(listed) == 3
    assert listed[0].workflow_run.head_branch == "main"
    assert repo.get_workflow_run(12).conclusion == "success"

    # GitHub answers 302 to a storage host; requests drops Authorization when the host changes
    resp = requests.get(
        listed[0].archive_download_url, headers={"Authorization": "token ghs_test"}, timeout=5
    )
    assert resp.status_code == 200 and [h.status_code for h in resp.history] == [302]
    assert zipfile.ZipFile(io.BytesIO(resp.content)).read("baseline.json") == b'{"v": 2}'
    assert "authorization" not in github_server.blob_requests[-1].headers
    gone = raw(
        github_server,
        "GET",
        f"/repos/{REPO}/actions/artifacts/{expired.id}/zip",
        allow_redirects=False,
    )
    assert gone.status_code == 410


@pytest.mark.parametrize(
    "output, field",
    [
        (
            {"title": "t", "summary": "s", "annotations": [annotation(n) for n in range(51)]},
            "output.annotations",
        ),
        (
            {"title": "t", "summary": "s", "annotations": [annotation(1, "error")]},
            "output.annotations.0.annotation_level",
        ),
        ({"title": "t", "summary": "x" * 65536}, "output.summary"),
    ],
)
def test_check_run_rejections(github_server, repo, output, field):
    with pytest.raises(github.GithubException) as info:
        repo.create_check_run("PromptCanary", HEAD, output=output)
    assert info.value.status == 422 and info.value.data["message"] == "Validation Failed"
    assert info.value.data["errors"][0]["field"] == field
    assert github_server.check_runs == [] and github_server.validation_errors[-1]["status"] == 422


def test_comment_rejections(github_server, repo):
    requester = client(github_server).requester
    with pytest.raises(github.GithubException) as info:
        requester.requestJsonAndCheck("POST", f"/repos/{REPO}/issues/7/comments", input={})
    assert info.value.status == 422 and info.value.data["errors"][0]["code"] == "missing_field"

    issue = repo.get_issue(7)
    with pytest.raises(github.GithubException) as info:
        issue.create_comment("x" * 65537)
    assert info.value.status == 422
    assert (
        info.value.data["errors"][0]["message"] == "body is too long (maximum is 65536 characters)"
    )
    assert len(issue.create_comment("x" * 65536).body) == 65536  # the limit itself is allowed

    bad_json = raw(github_server, "POST", f"/repos/{REPO}/issues/7/comments", data=b"{not json")
    assert bad_json.status_code == 400 and bad_json.json()["message"] == "Problems parsing JSON"
    assert raw(github_server, "GET", f"/repos/{REPO}/issues?state=bogus").status_code == 422
    assert raw(github_server, "GET", f"/repos/{REPO}/issues/abc").status_code == 404
    assert len(github_server.validation_errors) == 5 and len(github_server.comments(7)) == 1


def test_auth_and_rate_limit_headers(github_server, repo):
    assert raw(github_server, "GET", f"/repos/{REPO}", token=None).status_code == 401
    resp = raw(github_server, "GET", f"/repos/{REPO}")
    assert (
        resp.headers["X-RateLimit-Limit"] == "5000"
        and resp.headers["X-RateLimit-Resource"] == "core"
    )
    assert (
        int(resp.headers["X-RateLimit-Remaining"]) + int(resp.headers["X-RateLimit-Used"]) == 5000
    )
    assert raw(github_server, "GET", "/rate_limit", token=None).status_code == 401
    gh = client(github_server)
    assert gh.get_rate_limit().resources.core.limit == 5000
    with pytest.raises(github.GithubException) as info:
        _ = gh.get_user().login  # the workflow token cannot ask who it is
    assert (
        info.value.status == 403
        and info.value.data["message"] == "Resource not accessible by integration"
    )
    github_server.add_user_token("ghp_user", "octocat")
    assert client(github_server, "ghp_user").get_user().login == "octocat"


def test_fault_403_on_comment_creation(github_server, repo):
    github_server.fail(
        "POST", r"/issues/\d+/comments$", 403, message="Resource not accessible by integration"
    )
    with pytest.raises(github.GithubException) as info:
        repo.get_issue(7).create_comment("hello")
    assert info.value.status == 403 and github_server.comments(7) == []
    # the default GithubRetry does not retry a plain 403 either: it raises the same exception
    with pytest.raises(github.GithubException) as info:
        client(github_server, retry=GithubRetry()).get_repo(REPO).get_issue(7).create_comment(
            "hello"
        )
    assert info.value.status == 403


def test_fault_500_once_then_success(github_server, repo):
    github_server.fail("POST", r"/issues/7/comments$", 500, times=1)
    with pytest.raises(github.GithubException) as info:  # no retry: the 500 surfaces
        repo.get_issue(7).create_comment("hello")
    assert info.value.status == 500
    assert repo.get_issue(7).create_comment("hello").body == "hello"

    github_server.fail("POST", r"/issues/7/comments$", 502, times=1)
    retrying = client(github_server, retry=GithubRetry(total=2, backoff_factor=0)).get_repo(REPO)
    assert retrying.get_issue(7).create_comment("again").body == "again"
    assert len(github_server.requests_to("POST", r"/issues/7/comments$")) == 4


def test_fault_after_write_applies_the_write_then_fails(github_server, repo):
    github_server.fail("POST", r"/issues/7/comments$", 502, times=1, after_write=True)
    with pytest.raises(github.GithubException) as info:
        repo.get_issue(7).create_comment("written")
    assert info.value.status == 502
    assert [c.body for c in github_server.comments(7)] == ["written"]  # yet it exists
    repo.get_issue(7).create_comment("second")  # the fault was once
    assert [c.body for c in github_server.comments(7)] == ["written", "second"]


def test_rate_limit_faults(github_server, repo):
    github_server.fail(
        "POST", r"/comments$", 403, secondary_rate_limit=True, retry_after=0, times=1
    )
    with pytest.raises(github.RateLimitExceededException) as info:
        repo.get_issue(7).create_comment("x")
    assert info.value.headers["retry-after"] == "0"
    assert "secondary rate limit" in info.value.data["message"]

    github_server.fail(
        "POST", r"/comments$", 403, secondary_rate_limit=True, retry_after=0, times=1
    )
    retrying = client(github_server, retry=GithubRetry(secondary_rate_wait=0)).get_repo(REPO)
    assert retrying.get_issue(7).create_comment("y").body == "y"

    github_server.fail("GET", r"/pulls/7$", 403, primary_rate_limit=True, times=1)
    with pytest.raises(github.RateLimitExceededException) as info:
        repo.get_pull(7)
    assert info.value.headers["x-ratelimit-remaining"] == "0"
    github_server.fail("GET", r"/pulls/7$", 429, primary_rate_limit=True, times=1)
    with pytest.raises(
        github.GithubException
    ) as info:  # PyGithub maps only 403 to RateLimitExceeded
        repo.get_pull(7)
    assert info.value.status == 429


def test_invalid_response_is_caught():
    def drop_id(operation: str, reply) -> None:
        if operation.startswith("POST") and isinstance(reply.body, dict):
            reply.body = {k: v for k, v in reply.body.items() if k != "id"}
            reply.body["created_at"] = "yesterday"

    with FakeGitHubServer() as server:
        server.add_pull(7, "feature", "main", HEAD, BASE)
        server.response_hook = drop_id
        resp = raw(server, "POST", f"/repos/{REPO}/issues/7/comments", json={"body": "hi"})
        assert resp.status_code == 201 and "id" not in resp.json()
        assert any("'id' is a required property" in e for e in server.response_errors)
        assert any("'yesterday' is not a 'date-time'" in e for e in server.response_errors)
        server.response_errors.clear()
        server.response_hook = None
        assert raw(server, "GET", f"/repos/{REPO}/issues/7").status_code == 200
        assert server.response_errors == []


def test_every_response_so_far_was_valid(github_server, repo):
    repo.get_pull(7)
    repo.get_issue(7).create_comment(json.dumps({"ok": True}))
    assert github_server.response_errors == []
