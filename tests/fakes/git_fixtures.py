"""Real git for tests: a bare repository on disk as ``origin`` and a clone of it as the workspace.

A pytest plugin module (listed in ``tests/conftest.py``). Every git command runs with an
environment that ignores the machine's system and global git configuration, so the tests behave
the same on any developer machine and in CI:

* ``git_env``       the isolated environment (a dict) for running git yourself;
* ``git_origin``    a bare repository (default branch ``main``), the "remote";
* ``git_workspace`` a clone of it with a committer configured in its *local* config, one commit on
  ``main`` (``README.md``) pushed to origin; a :class:`GitWorkspace`.

Note that ``actions/checkout`` does not configure a committer: a test of code that commits on the
runner can ``ws.run("config", "--unset", "user.name")`` to prove the code sets its own identity.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DEFAULT_BRANCH = "main"
USER_NAME = "Canary Tester"
USER_EMAIL = "canary-tester@example.invalid"
INITIAL_FILE = "README.md"
INITIAL_CONTENT = "# octo-repo\n\nA workspace for promptcanary tests.\n"


class GitError(RuntimeError):
    """A git command exited non-zero; the message carries the command and its stderr."""


def isolated_git_env(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return an environment in which git reads no system or user configuration.

    ``home`` becomes ``HOME`` (and holds the empty "global" config). ``GIT_*`` variables of the
    calling process are dropped so that, for example, a ``GIT_DIR`` set by a hook cannot leak in.
    """
    source = os.environ if base is None else base
    env = {key: value for key, value in source.items() if not key.startswith("GIT_")}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_TERMINAL_PROMPT="0",
        GIT_ADVICE="0",
        LC_ALL="C",
    )
    return env


def run_git(
    *args: str, cwd: Path, env: Mapping[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``git <args>`` in ``cwd``; raise :class:`GitError` on failure when ``check``."""
    git = shutil.which("git")
    if git is None:  # pragma: no cover - the project requires git (the Dockerfile installs it)
        raise GitError("git is not installed: the branch baseline store and its tests need it")
    proc = subprocess.run(
        [git, "-c", f"init.defaultBranch={DEFAULT_BRANCH}", *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check and proc.returncode != 0:
        raise GitError(
            f"git {' '.join(args)} (in {cwd}) exited {proc.returncode}:\n{proc.stderr.strip()}"
        )
    return proc


@dataclass(frozen=True)
class GitWorkspace:
    """A clone of :attr:`origin_path` at :attr:`path`; :attr:`head_sha` is its first commit."""

    path: Path
    origin_path: Path
    head_sha: str
    env: Mapping[str, str] = field(repr=False)

    def run(self, *args: str, check: bool = True) -> str:
        """Run ``git <args>`` in the workspace and return its stripped stdout."""
        return run_git(*args, cwd=self.path, env=self.env, check=check).stdout.strip()

    def run_in_origin(self, *args: str) -> str:
        """Run ``git <args>`` in the bare origin repository and return its stripped stdout."""
        return run_git(*args, cwd=self.origin_path, env=self.env).stdout.strip()

    def rev_parse(self, ref: str = "HEAD") -> str:
        return self.run("rev-parse", "--verify", f"{ref}^{{commit}}")

    def commit_file(self, relpath: str, content: str, message: str | None = None) -> str:
        """Write ``relpath``, commit it on the current branch and return the new commit's SHA."""
        target = self.path / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        self.run("add", "--", relpath)
        self.run("commit", "--quiet", "-m", message or f"Update {relpath}")
        return self.rev_parse()

    def remote_refs(self) -> dict[str, str]:
        """``{ref name: sha}`` of origin, as ``git ls-remote`` reports it."""
        refs: dict[str, str] = {}
        for line in self.run("ls-remote", "origin").splitlines():
            sha, _, name = line.partition("\t")
            refs[name] = sha
        return refs


@pytest.fixture
def git_env(tmp_path: Path) -> dict[str, str]:
    """An environment for git that ignores the machine's system and global configuration."""
    return isolated_git_env(tmp_path / "git-home")


@pytest.fixture
def git_origin(tmp_path: Path, git_env: dict[str, str]) -> Path:
    """A bare repository on disk whose default branch is ``main``."""
    origin = tmp_path / "origin.git"
    run_git(
        "init",
        "--quiet",
        "--bare",
        f"--initial-branch={DEFAULT_BRANCH}",
        str(origin),
        cwd=tmp_path,
        env=git_env,
    )
    return origin


@pytest.fixture
def git_workspace(tmp_path: Path, git_origin: Path, git_env: dict[str, str]) -> GitWorkspace:
    """A clone of ``git_origin`` with one commit on ``main``, pushed to origin."""
    path = tmp_path / "workspace"
    run_git("clone", "--quiet", str(git_origin), str(path), cwd=tmp_path, env=git_env)
    for key, value in (
        ("user.name", USER_NAME),
        ("user.email", USER_EMAIL),
        ("commit.gpgsign", "false"),
        ("tag.gpgsign", "false"),
    ):
        run_git("config", "--local", key, value, cwd=path, env=git_env)
    # The clone of an empty repository may not know which branch is unborn: name it.
    run_git("symbolic-ref", "HEAD", f"refs/heads/{DEFAULT_BRANCH}", cwd=path, env=git_env)
    (path / INITIAL_FILE).write_text(INITIAL_CONTENT, encoding="utf-8")
    run_git("add", INITIAL_FILE, cwd=path, env=git_env)
    run_git("commit", "--quiet", "-m", "Initial commit", cwd=path, env=git_env)
    run_git("push", "--quiet", "-u", "origin", DEFAULT_BRANCH, cwd=path, env=git_env)
    head = run_git("rev-parse", "HEAD", cwd=path, env=git_env).stdout.strip()
    return GitWorkspace(path=path, origin_path=git_origin, head_sha=head, env=git_env)
