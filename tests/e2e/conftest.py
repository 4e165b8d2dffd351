"""Fixtures of the end-to-end tests: a workspace, the fake LLM and GitHub servers, event payloads.

Every test drives ``entrypoint.py`` through :class:`ActionHarness`, which runs it as a subprocess
(:func:`tests.e2e.runner.run_action`) in a workspace the test writes its suite files into, with
the fake LLM server reached through LiteLLM and the fake GitHub server as ``GITHUB_API_URL``.
The defaults keep each run short: no retries; the timeout only guards against a hang.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.runner import DEFAULT_BRANCH, DEFAULT_REPOSITORY, ActionResult, run_action
from tests.fakes.git_fixtures import GitWorkspace
from tests.fakes.github_server import FakeGitHubServer
from tests.fakes.llm_server import FakeLLMServer

PR_NUMBER = 7
HEAD_SHA = "a1" * 20
BASE_SHA = "b2" * 20
MAIN_SHA = "c3" * 20
FORK_OWNER = "contributor"
MODEL = "openai/fake"
API_KEY = "sk-test"

#: Inputs that keep one run short; a test's own inputs override them.
# The timeout is generous on purpose: the first request of a run waits for LiteLLM's cold import,
# which on a loaded 2-core machine (parallel test workers) took more than 10 s. Tests about hangs
# set their own.
FAST_INPUTS = {"timeout": "30", "max-retries": "0", "concurrency": "8"}

#: One prompt, "Is the service up?", passing when the answer says "operational".
STATUS_PROMPTS = """\
  - id: status
    text: Is the service up?
    probes:
      - type: keyword_presence
        required_keywords: [operational]
"""
#: One prompt, "Is the order confirmed?", passing when the answer says "yes".
CONFIRM_PROMPTS = """\
  - id: confirm
    text: Is the order confirmed? Answer yes or no.
    probes:
      - id: says-yes
        type: keyword_presence
        required_keywords: ["yes"]
"""


# ------------------------------------------------------------------------------------------------
# event payloads (the fields the runner and the action read, shaped like GitHub's)


def _repository(full_name: str = DEFAULT_REPOSITORY) -> dict[str, Any]:
    owner, name = full_name.split("/", 1)
    return {
        "full_name": full_name,
        "name": name,
        "owner": {"login": owner},
        "default_branch": DEFAULT_BRANCH,
    }


def pr_event(
    number: int = PR_NUMBER,
    *,
    head_sha: str = HEAD_SHA,
    base_sha: str = BASE_SHA,
    head_ref: str = "feature",
    base_ref: str = DEFAULT_BRANCH,
    fork: bool = False,
    action: str = "synchronize",
    labels: tuple[str, ...] = (),
    label: str | None = None,
    sender: str = FORK_OWNER,
) -> dict[str, Any]:
    """A ``pull_request`` payload; ``fork`` puts the head in the contributor's copy.

    ``label`` is the label a ``labeled``/``unlabeled`` event is about; ``labels`` those on the
    pull request once the event happened.
    """
    head_repo = f"{FORK_OWNER}/octo-repo" if fork else DEFAULT_REPOSITORY
    payload: dict[str, Any] = {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"ref": head_ref, "sha": head_sha, "repo": _repository(head_repo)},
            "base": {"ref": base_ref, "sha": base_sha, "repo": _repository()},
            "labels": [{"name": name, "color": "ededed"} for name in labels],
        },
        "repository": _repository(),
        "sender": {"login": sender},
    }
    if label is not None:
        payload["label"] = {"name": label, "color": "ededed"}
    return payload


def push_event(branch: str = DEFAULT_BRANCH, *, after: str = MAIN_SHA) -> dict[str, Any]:
    return {
        "ref": f"refs/heads/{branch}",
        "before": "0" * 40,
        "after": after,
        "repository": _repository(),
    }


def workflow_run_event(
    *,
    head_sha: str,
    head_branch: str = "feature",
    fork: bool = True,
    pull_requests: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``workflow_run`` (completed) payload; GitHub leaves ``pull_requests`` empty for forks."""
    head_repo = f"{FORK_OWNER}/octo-repo" if fork else DEFAULT_REPOSITORY
    return {
        "action": "completed",
        "workflow_run": {
            "id": 30433642,
            "event": "pull_request",
            "status": "completed",
            "conclusion": "success",
            "head_sha": head_sha,
            "head_branch": head_branch,
            "head_repository": _repository(head_repo),
            "repository": _repository(),
            "pull_requests": pull_requests or [],
        },
        "repository": _repository(),
    }


# ------------------------------------------------------------------------------------------------
# reading what the user sees


def line_of(text: str, needle: str) -> int:
    """1-based line of the only line of ``text`` that contains ``needle``."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    if len(hits) != 1:
        raise AssertionError(f"{needle!r} is on lines {hits} of the suite, expected exactly one")
    return hits[0]


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def split_fenced(markdown: str) -> tuple[str, list[str]]:
    """``(text outside code blocks, [code block contents])`` by CommonMark's fence rules.

    A block opened by N backticks (or tildes) closes only at a line of at least N of the same
    character and nothing else; an unclosed block runs to the end of the document.
    """
    outside: list[str] = []
    blocks: list[str] = []
    current: list[str] | None = None
    opener = ""
    for line in markdown.split("\n"):
        if current is None:
            match = _FENCE_RE.match(line)
            if match and not (match[1][0] == "`" and "`" in line[match.end() :]):
                opener, current = match[1], []
            else:
                outside.append(line)
            continue
        stripped = line.strip()
        if stripped and set(stripped) == {opener[0]} and len(stripped) >= len(opener):
            blocks.append("\n".join(current))
            current = None
        else:
            current.append(line)
    if current is not None:
        blocks.append("\n".join(current))
    return "\n".join(outside), blocks


# ------------------------------------------------------------------------------------------------
# the harness


@dataclass
class ActionHarness:
    """One test's workspace and servers; :meth:`run` runs the action there."""

    tmp_path: Path
    workspace: Path
    llm: FakeLLMServer
    github: FakeGitHubServer
    env: dict[str, str | None] = field(default_factory=lambda: {"OPENAI_API_KEY": API_KEY})
    runs: int = 0
    #: Inputs every run gets unless the test gives its own.
    defaults: Mapping[str, str] = field(default_factory=lambda: dict(FAST_INPUTS))
    #: How a run happens: ``entrypoint.py`` as a subprocess, or (tests/container) in the image.
    runner: Callable[..., ActionResult] = run_action

    def write(self, relpath: str, text: str) -> Path:
        path = self.workspace / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(
        self,
        event_name: str,
        event: dict[str, Any],
        inputs: Mapping[str, str] | None = None,
        *,
        env: Mapping[str, str | None] | None = None,
        timeout: float = 90,
    ) -> ActionResult:
        """Run ``entrypoint.py`` once; each run gets fresh runner files (outputs, summary)."""
        self.runs += 1
        return self.runner(
            self.tmp_path / f"run-{self.runs}",
            inputs={**self.defaults, **(inputs or {})},
            event_name=event_name,
            event=event,
            workspace=self.workspace,
            env={**self.env, **(env or {})},
            github_api_url=self.github.url,
            timeout=timeout,
        )

    def run_action_in(
        self,
        name: str,
        event_name: str,
        event: dict[str, Any],
        inputs: Mapping[str, str] | None = None,
        *,
        timeout: float = 90,
    ) -> ActionResult:
        """Like :meth:`run`, with the runner files under ``name``: safe to call from threads
        (the matrix legs of one workflow run start together)."""
        return run_action(
            self.tmp_path / name,
            inputs={**FAST_INPUTS, **(inputs or {})},
            event_name=event_name,
            event=event,
            workspace=self.workspace,
            env=dict(self.env),
            github_api_url=self.github.url,
            timeout=timeout,
        )

    def run_pr(self, inputs: Mapping[str, str] | None = None, **event: Any) -> ActionResult:
        return self.run("pull_request", pr_event(**event), inputs)

    def run_push(
        self, inputs: Mapping[str, str] | None = None, *, after: str = MAIN_SHA
    ) -> ActionResult:
        return self.run("push", push_event(after=after), inputs)

    def check_run(self, number: int = -1) -> Any:
        runs = self.github.check_runs
        assert runs, "no check run was created"
        return runs[number]


def suite_text(
    name: str,
    api_base: str | None,
    prompts: str,
    *,
    probes: str = "",
) -> str:
    """A suite file: ``models:`` points at ``api_base`` (None: no ``models:``, use the input)."""
    models = f"models:\n  - model: {MODEL}\n    api_base: {api_base}\n" if api_base else ""
    suite_probes = f"probes:\n{probes}" if probes else ""
    return f"name: {name}\n{models}{suite_probes}prompts:\n{prompts}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def github_pr(github_server: FakeGitHubServer) -> FakeGitHubServer:
    """The fake GitHub server with pull request #7 (feature → main, same repository) seeded."""
    github_server.add_pull(PR_NUMBER, "feature", DEFAULT_BRANCH, HEAD_SHA, BASE_SHA)
    return github_server


@pytest.fixture
def harness(
    tmp_path: Path, workspace: Path, llm_server: FakeLLMServer, github_pr: FakeGitHubServer
) -> Iterator[ActionHarness]:
    yield ActionHarness(tmp_path, workspace, llm_server, github_pr)


@pytest.fixture
def git_harness(
    tmp_path: Path,
    git_workspace: GitWorkspace,
    llm_server: FakeLLMServer,
    github_pr: FakeGitHubServer,
) -> ActionHarness:
    """Like ``harness``, in a real git checkout whose ``origin`` is a bare repository on disk."""
    return ActionHarness(tmp_path, git_workspace.path, llm_server, github_pr)
