"""Retried creates stay single: GitHub fails *after* carrying out the write (the fake's
`after_write` faults), and GitHubClient, through real PyGithub, finds what it made."""

from __future__ import annotations

import pytest

from promptcanary_action.github.client import GitHubClient
from tests.fakes.github_server import FakeGitHubServer

REPO = "octo-org/octo-repo"
TOKEN = "ghs_idempotent_token"
MARKER = "<!-- promptcanary:comment:default -->"
ISSUE_MARKER = "<!-- promptcanary:issue:suite/model -->"
HEAD, BASE = "c" * 40, "d" * 40
CHECK_RUNS_OF_HEAD = rf"/commits/{HEAD}/check-runs$"


@pytest.fixture
def gh(github_server: FakeGitHubServer) -> FakeGitHubServer:
    github_server.add_pull(7, "feature", "main", HEAD, BASE)
    return github_server


def client(server: FakeGitHubServer, run_key: str = "1234/1") -> GitHubClient:
    return GitHubClient(TOKEN, REPO, server.url, retry_sleep=lambda _: None, run_key=run_key)


@pytest.mark.parametrize("status", [500, 502])
def test_a_check_run_created_before_a_5xx_is_taken_not_made_again(
    gh: FakeGitHubServer, status: int
) -> None:
    gh.fail("POST", r"/check-runs$", status, times=1, after_write=True)

    run_id = client(gh).create_check_run("PromptCanary", HEAD)

    assert [(r.id, r.name, r.head_sha) for r in gh.check_runs] == [(run_id, "PromptCanary", HEAD)]
    assert gh.check_runs[0].external_id  # set on creation, so the lookup can tell it is ours
    assert len(gh.requests_to("POST", r"/check-runs$")) == 1
    assert len(gh.requests_to("GET", CHECK_RUNS_OF_HEAD)) == 1


def test_an_earlier_attempts_check_run_of_the_same_name_is_not_taken(gh: FakeGitHubServer) -> None:
    earlier = client(gh, "1234/1").create_check_run("PromptCanary", HEAD)
    gh.fail("POST", r"/check-runs$", 503, times=1, after_write=True)

    rerun = client(gh, "1234/2").create_check_run("PromptCanary", HEAD)

    assert rerun != earlier
    assert sorted(r.id for r in gh.check_runs) == sorted([earlier, rerun])


def test_a_write_refused_by_the_rate_limit_is_retried_without_a_lookup(
    gh: FakeGitHubServer,
) -> None:
    gh.fail("POST", r"/check-runs$", 429, times=1, retry_after=1)

    run_id = client(gh).create_check_run("PromptCanary", HEAD)

    assert [r.id for r in gh.check_runs] == [run_id]
    assert gh.requests_to("GET", CHECK_RUNS_OF_HEAD) == []  # a 429 is never carried out
    assert len(gh.requests_to("POST", r"/check-runs$")) == 2


def test_a_new_mode_comment_created_before_a_5xx_is_posted_once(gh: FakeGitHubServer) -> None:
    # An earlier run's comment carries the same sticky marker: it must not pass for ours.
    earlier_url = client(gh, "1000/1").upsert_comment(7, "earlier run", MARKER, mode="new")
    gh.fail("POST", r"/issues/7/comments$", 502, times=1, after_write=True)

    url = client(gh, "1234/1").upsert_comment(7, "this run", MARKER, mode="new")

    comments = gh.comments(7)
    assert [c.body.split("\n")[0] for c in comments] == ["earlier run", "this run"]
    assert all(MARKER in c.body for c in comments)
    assert url != earlier_url and url.endswith(f"#issuecomment-{comments[1].id}")
    assert len(gh.requests_to("POST", r"/issues/7/comments$")) == 2  # one per run


def test_the_second_new_mode_comment_of_a_run_is_not_taken_for_the_first(
    gh: FakeGitHubServer,
) -> None:
    same_run = client(gh)
    first = same_run.upsert_comment(7, "first", MARKER, mode="new")
    gh.fail("POST", r"/issues/7/comments$", 500, times=1, after_write=True)

    second = same_run.upsert_comment(7, "second", MARKER, mode="new")

    assert second != first
    assert [c.body.split("\n")[0] for c in gh.comments(7)] == ["first", "second"]


def test_a_sticky_comment_created_before_a_5xx_is_posted_once(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/issues/7/comments$", 500, times=1, after_write=True)

    url = client(gh).upsert_comment(7, "score 0.9", MARKER)

    comments = gh.comments(7)
    assert len(comments) == 1 and url.endswith(f"#issuecomment-{comments[0].id}")
    assert len(gh.requests_to("POST", r"/issues/7/comments$")) == 1


def test_a_drift_issue_opened_before_a_5xx_is_opened_once(gh: FakeGitHubServer) -> None:
    gh.fail("POST", r"/issues$", 500, times=1, after_write=True)

    url = client(gh).upsert_drift_issue(ISSUE_MARKER, "Drift: suite on model", "details")

    issues = gh.issues
    assert len(issues) == 1 and ISSUE_MARKER in (issues[0].body or "")
    assert url.endswith(f"/issues/{issues[0].number}")
    assert len(gh.requests_to("POST", r"/issues$")) == 1
