"""The real-git fixtures: a bare origin on disk and a workspace cloned from it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.git_fixtures import DEFAULT_BRANCH, INITIAL_FILE, USER_EMAIL, GitWorkspace


def test_origin_is_a_bare_repository_with_main_as_default_branch(git_origin: Path) -> None:
    assert (git_origin / "HEAD").read_text().strip() == f"ref: refs/heads/{DEFAULT_BRANCH}"
    assert not (git_origin / ".git").exists()


def test_workspace_is_a_clone_of_origin_with_one_pushed_commit(
    git_workspace: GitWorkspace, git_origin: Path
) -> None:
    ws = git_workspace
    assert ws.origin_path == git_origin
    assert Path(ws.run("remote", "get-url", "origin")) == git_origin
    assert ws.run("rev-parse", "--abbrev-ref", "HEAD") == DEFAULT_BRANCH
    assert ws.run("rev-list", "--count", "HEAD") == "1"
    assert ws.rev_parse() == ws.head_sha
    assert (ws.path / INITIAL_FILE).is_file()
    assert ws.remote_refs()[f"refs/heads/{DEFAULT_BRANCH}"] == ws.head_sha
    assert ws.run_in_origin("rev-parse", DEFAULT_BRANCH) == ws.head_sha
    # The working tree is clean and tracks origin/main.
    assert ws.run("status", "--porcelain") == ""
    assert ws.run("rev-parse", "--abbrev-ref", "@{upstream}") == f"origin/{DEFAULT_BRANCH}"


def test_committer_is_configured_locally_and_machine_config_is_ignored(
    git_workspace: GitWorkspace,
) -> None:
    ws = git_workspace
    assert ws.run("config", "--local", "user.email") == USER_EMAIL
    assert ws.env["GIT_CONFIG_NOSYSTEM"] == "1"
    # Every configured value comes from the repository's own config (or the command line).
    origins = ws.run("config", "--show-origin", "--list").splitlines()
    assert origins
    for line in origins:
        assert line.startswith(("file:.git/config", "command line:")), line


def test_pushing_a_new_branch_from_the_workspace_appears_in_origin(
    git_workspace: GitWorkspace,
) -> None:
    ws = git_workspace
    ws.run("switch", "--quiet", "-c", "promptcanary-baselines")
    sha = ws.commit_file("baselines/suite.json", '{"schema_version": 1}\n', "Add a baseline")
    assert sha != ws.head_sha
    ws.run("push", "--quiet", "origin", "promptcanary-baselines")

    listed = ws.run("ls-remote", "--heads", "origin", "promptcanary-baselines")
    assert listed == f"{sha}\trefs/heads/promptcanary-baselines"
    refs = ws.remote_refs()
    assert refs["refs/heads/promptcanary-baselines"] == sha
    assert refs[f"refs/heads/{DEFAULT_BRANCH}"] == ws.head_sha
    assert ws.run_in_origin("show", f"{sha}:baselines/suite.json") == '{"schema_version": 1}'
