"""EventContext from the payloads GitHub sends (trimmed to the documented fields we read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcanary_action.context import EventContext, branch_of, load_event_payload
from promptcanary_action.settings import GitHubEnv

BASE_SHA = "b" * 40
HEAD_SHA = "c" * 40
MERGE_SHA = "d" * 40
REPO = "octo-org/octo-repo"


def repository(default_branch: str = "main", full_name: str = REPO) -> dict[str, Any]:
    return {"id": 1296269, "full_name": full_name, "default_branch": default_branch}


def pull_request_payload(*, head_repo: str | None = REPO, number: int = 7) -> dict[str, Any]:
    head_repo_obj = None if head_repo is None else {"full_name": head_repo}
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "merge_commit_sha": MERGE_SHA,
            "head": {
                "label": "octocat:feature",
                "ref": "feature/x",
                "sha": HEAD_SHA,
                "repo": head_repo_obj,
            },
            "base": {
                "label": "octo-org:main",
                "ref": "main",
                "sha": BASE_SHA,
                "repo": {"full_name": REPO},
            },
        },
        "repository": repository(),
        "sender": {"login": "octocat"},
    }


def pr_env(number: int = 7) -> GitHubEnv:
    return GitHubEnv(
        event_name="pull_request",
        repository=REPO,
        sha=MERGE_SHA,
        ref=f"refs/pull/{number}/merge",
        head_ref="feature/x",
        base_ref="main",
    )


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_pull_request_from_the_same_repository(event_name: str) -> None:
    ctx = EventContext.from_event(event_name, pull_request_payload(), pr_env())
    assert ctx.pr_number == 7
    assert (ctx.base_sha, ctx.head_sha, ctx.sha) == (BASE_SHA, HEAD_SHA, MERGE_SHA)
    assert (ctx.base_ref, ctx.head_ref) == ("main", "feature/x")
    assert ctx.default_branch == "main"
    assert ctx.is_pull_request and not ctx.is_fork and not ctx.is_merge_group
    assert ctx.ref_name is None and not ctx.is_default_branch
    assert ctx.warnings == ()


def test_pull_request_from_a_fork() -> None:
    ctx = EventContext.from_event(
        "pull_request", pull_request_payload(head_repo="fork-owner/octo-repo"), pr_env()
    )
    assert ctx.is_fork


def test_pull_request_from_a_deleted_fork_counts_as_a_fork() -> None:
    ctx = EventContext.from_event("pull_request", pull_request_payload(head_repo=None), pr_env())
    assert ctx.is_fork


def test_a_labeled_event_says_which_label_who_added_it_and_the_labels_now() -> None:
    payload = pull_request_payload()
    payload["action"] = "labeled"
    payload["label"] = {"name": "promptcanary: approve", "color": "ededed"}
    payload["pull_request"]["labels"] = [{"name": "promptcanary: approve"}, {"name": 3}, "x"]
    ctx = EventContext.from_event("pull_request", payload, pr_env())
    assert (ctx.action, ctx.event_label, ctx.sender) == (
        "labeled",
        "promptcanary: approve",
        "octocat",
    )
    assert ctx.pr_labels == ("promptcanary: approve",)  # malformed entries are skipped


def test_a_payload_without_labels_leaves_them_unknown() -> None:
    ctx = EventContext.from_event("pull_request", pull_request_payload(), pr_env())
    assert (ctx.pr_labels, ctx.event_label, ctx.action) == (None, None, "synchronize")


def test_pull_request_number_falls_back_to_the_merge_ref() -> None:
    ctx = EventContext.from_event("pull_request", {}, pr_env(number=42))
    assert ctx.pr_number == 42
    # Without the payload the branches come from GITHUB_BASE_REF / GITHUB_HEAD_REF.
    assert (ctx.base_ref, ctx.head_ref, ctx.head_sha) == ("main", "feature/x", MERGE_SHA)
    assert ctx.warnings == ("the pull_request payload has no pull_request object",)


def test_merge_group() -> None:
    payload = {
        "action": "checks_requested",
        "merge_group": {
            "head_sha": HEAD_SHA,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-104-{BASE_SHA}",
            "base_sha": BASE_SHA,
            "base_ref": "refs/heads/main",
            "head_commit": {"id": HEAD_SHA, "message": "Merge pull request #104"},
        },
        "repository": repository(),
    }
    env = GitHubEnv(
        event_name="merge_group",
        sha=HEAD_SHA,
        ref=f"refs/heads/gh-readonly-queue/main/pr-104-{BASE_SHA}",
    )
    ctx = EventContext.from_event("merge_group", payload, env)
    assert ctx.is_merge_group and not ctx.is_pull_request
    assert (ctx.base_ref, ctx.base_sha, ctx.head_sha) == ("main", BASE_SHA, HEAD_SHA)
    assert ctx.head_ref == f"gh-readonly-queue/main/pr-104-{BASE_SHA}"
    assert ctx.pr_number == 104
    assert ctx.default_branch == "main"
    assert not ctx.is_default_branch


def push_payload(
    ref: str, *, default_branch: str = "main", after: str = HEAD_SHA
) -> dict[str, Any]:
    return {
        "ref": ref,
        "before": BASE_SHA,
        "after": after,
        "created": False,
        "deleted": False,
        "forced": False,
        "head_commit": {"id": after},
        "repository": {**repository(default_branch), "master_branch": default_branch},
    }


def test_push_to_the_default_branch() -> None:
    env = GitHubEnv(event_name="push", sha=HEAD_SHA, ref="refs/heads/main")
    ctx = EventContext.from_event("push", push_payload("refs/heads/main"), env)
    assert (ctx.ref_name, ctx.default_branch, ctx.head_sha) == ("main", "main", HEAD_SHA)
    assert ctx.is_default_branch and not ctx.is_pull_request
    assert ctx.pr_number is None


def test_push_to_another_branch() -> None:
    env = GitHubEnv(event_name="push", sha=HEAD_SHA, ref="refs/heads/release/2.x")
    ctx = EventContext.from_event(
        "push", push_payload("refs/heads/release/2.x", default_branch="trunk"), env
    )
    assert (ctx.ref_name, ctx.default_branch) == ("release/2.x", "trunk")
    assert not ctx.is_default_branch


def test_push_of_a_tag_is_on_no_branch() -> None:
    env = GitHubEnv(event_name="push", sha=HEAD_SHA, ref="refs/tags/v1.0.0")
    ctx = EventContext.from_event("push", push_payload("refs/tags/v1.0.0"), env)
    assert ctx.ref_name is None and not ctx.is_default_branch


def test_push_with_the_zero_sha_uses_github_sha() -> None:
    env = GitHubEnv(event_name="push", sha=MERGE_SHA, ref="refs/heads/main")
    ctx = EventContext.from_event("push", push_payload("refs/heads/main", after="0" * 40), env)
    assert ctx.head_sha == MERGE_SHA


def test_schedule_payload_has_no_repository_and_runs_on_the_default_branch() -> None:
    env = GitHubEnv(event_name="schedule", sha=HEAD_SHA, ref="refs/heads/develop")
    ctx = EventContext.from_event("schedule", {"schedule": "17 3 * * *"}, env)
    assert (ctx.ref_name, ctx.default_branch) == ("develop", "develop")
    assert ctx.is_default_branch
    assert ctx.head_sha == HEAD_SHA


def test_workflow_dispatch_on_a_branch() -> None:
    payload = {
        "inputs": {"note": "manual"},
        "ref": "refs/heads/experiment",
        "repository": repository(),
        "workflow": ".github/workflows/canary.yml",
    }
    env = GitHubEnv(event_name="workflow_dispatch", sha=HEAD_SHA, ref="refs/heads/experiment")
    ctx = EventContext.from_event("workflow_dispatch", payload, env)
    assert (ctx.ref_name, ctx.default_branch) == ("experiment", "main")
    assert not ctx.is_default_branch


def test_workflow_dispatch_without_repository_leaves_the_default_branch_unknown() -> None:
    env = GitHubEnv(event_name="workflow_dispatch", sha=HEAD_SHA, ref="refs/heads/main")
    ctx = EventContext.from_event("workflow_dispatch", {}, env)
    assert (ctx.ref_name, ctx.default_branch) == ("main", None)
    assert not ctx.is_default_branch


def workflow_run_payload(*, head_repo: str, pulls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "action": "completed",
        "workflow_run": {
            "id": 30433642,
            "name": "PromptCanary",
            "event": "pull_request",
            "status": "completed",
            "conclusion": "success",
            "head_branch": "feature/x",
            "head_sha": HEAD_SHA,
            "pull_requests": pulls,
            "head_repository": {"full_name": head_repo},
            "repository": {"full_name": REPO},
        },
        "repository": repository(),
    }


def test_workflow_run_of_a_same_repository_pull_request() -> None:
    pulls = [
        {
            "number": 7,
            "head": {"ref": "feature/x", "sha": HEAD_SHA, "repo": {"id": 1, "name": "octo-repo"}},
            "base": {"ref": "main", "sha": BASE_SHA, "repo": {"id": 1, "name": "octo-repo"}},
        }
    ]
    env = GitHubEnv(event_name="workflow_run", sha=MERGE_SHA, ref="refs/heads/main")
    ctx = EventContext.from_event(
        "workflow_run", workflow_run_payload(head_repo=REPO, pulls=pulls), env
    )
    assert (ctx.workflow_run_id, ctx.workflow_run_event) == (30433642, "pull_request")
    assert (ctx.pr_number, ctx.base_ref, ctx.base_sha) == (7, "main", BASE_SHA)
    assert (ctx.head_sha, ctx.head_ref) == (HEAD_SHA, "feature/x")
    assert not ctx.is_fork and not ctx.is_pull_request


def test_workflow_run_of_a_fork_pull_request_has_no_pr_number() -> None:
    env = GitHubEnv(event_name="workflow_run", sha=MERGE_SHA, ref="refs/heads/main")
    payload = workflow_run_payload(head_repo="fork-owner/octo-repo", pulls=[])
    ctx = EventContext.from_event("workflow_run", payload, env)
    assert ctx.is_fork and ctx.pr_number is None


def test_unexpected_types_in_the_payload_are_ignored() -> None:
    payload = {"pull_request": {"number": True, "head": "oops", "base": ["x"]}, "repository": "r"}
    ctx = EventContext.from_event("pull_request", payload, pr_env(number=9))
    assert ctx.pr_number == 9
    assert ctx.base_ref == "main" and ctx.default_branch is None


# ------------------------------------------------------------------------------------------------
# reading the event file


def test_from_env_reads_the_event_file(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(pull_request_payload(number=12)), encoding="utf-8")
    env = GitHubEnv(
        event_name="pull_request", event_path=path, sha=MERGE_SHA, ref="refs/pull/12/merge"
    )
    ctx = EventContext.from_env(env)
    assert ctx.pr_number == 12 and ctx.head_sha == HEAD_SHA and ctx.warnings == ()


def test_from_env_with_a_missing_event_file_warns_and_falls_back(tmp_path: Path) -> None:
    env = GitHubEnv(
        event_name="push", event_path=tmp_path / "absent.json", sha=HEAD_SHA, ref="refs/heads/main"
    )
    ctx = EventContext.from_env(env)
    assert ctx.ref_name == "main" and ctx.default_branch is None
    assert len(ctx.warnings) == 1 and "absent.json" in ctx.warnings[0]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"\xff\xfe\x00", "cannot read"),
    ],
)
def test_unreadable_event_files_give_an_empty_payload_and_a_reason(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "event.json"
    path.write_bytes(content)
    payload, reason = load_event_payload(path)
    assert payload == {}
    assert reason is not None and problem in reason and str(path) in reason


def test_no_event_path_is_a_reason_too() -> None:
    payload, reason = load_event_payload(None)
    assert payload == {} and reason is not None and "GITHUB_EVENT_PATH" in reason


def test_a_readable_event_file_has_no_reason(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text('{"ref": "refs/heads/main"}', encoding="utf-8")
    assert load_event_payload(path) == ({"ref": "refs/heads/main"}, None)


@pytest.mark.parametrize(
    ("ref", "branch"),
    [
        ("refs/heads/main", "main"),
        ("main", "main"),
        ("refs/tags/v1", None),
        ("refs/pull/1/merge", None),
        (None, None),
    ],
)
def test_branch_of(ref: str | None, branch: str | None) -> None:
    assert branch_of(ref) == branch
