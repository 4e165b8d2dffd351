"""Fixtures of the real-model layer: a llama.cpp server with Gemma 3 270M (and one with the
embedding model all-MiniLM-L6-v2 beside it), and the action run against them the way a workflow
runs it against a self-hosted model.

The servers are started by ``scripts/local_model.py`` (``make test-real-model`` installs the
optional set first). A missing install fails every test here with the command that fixes it:
this layer never skips. Each test runs for minutes (the server answers one request at a time),
so each sets its own ``pytest.mark.timeout``.

The model is the *base* Gemma 3 270M (not instruction-tuned): it rarely follows formats, often
echoes the question and sometimes answers with nothing. The tests therefore assert what the
action must do with such answers (score them, report them, tell errors from regressions), never
what the model says.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scripts import local_model
from tests.e2e.conftest import pr_event, push_event
from tests.e2e.runner import ActionResult, run_action
from tests.fakes.github_server import FakeGitHubServer

MODEL = f"openai/{local_model.MODEL_ALIAS}"
#: The server answers one request at a time: a queued request waits for those before it.
REAL_INPUTS = {
    "models": MODEL,
    "baseline": "path",
    "timeout": "300",
    "max-retries": "1",
    "concurrency": "2",
}


@pytest.fixture(scope="session")
def function_calling_server() -> Iterator[local_model.LocalServer]:
    """The server as a team would run it: chat format with native function calling."""
    yield from _serve(local_model.FUNCTION_CALLING)


def _require_install() -> None:
    if not local_model.is_installed():
        pytest.fail(
            "the local model is not installed (.venv-model): run `make model-install`, or "
            "run this layer with `make test-real-model`, which installs it first",
            pytrace=False,
        )


def _serve(
    chat_format: str = local_model.FUNCTION_CALLING, *, embedding: bool = False
) -> Iterator[local_model.LocalServer]:
    _require_install()
    try:
        server = local_model.start(chat_format=chat_format, embedding=embedding)
    except local_model.ModelSetupError as exc:
        what = "embedding" if embedding else "local model"
        pytest.fail(f"the {what} server did not start: {exc}", pytrace=False)
    with server:
        yield server


@pytest.fixture(scope="session")
def embedding_server() -> Iterator[local_model.LocalServer]:
    """all-MiniLM-L6-v2 answering ``/v1/embeddings``, beside the chat server."""
    yield from _serve(embedding=True)


def semantic_drift(
    server: local_model.LocalServer, tag: str, min_shift: float | None = None
) -> str:
    """A suite's ``semantic_drift:`` block comparing the meaning of the prompts tagged ``tag``
    with the embedding server's MiniLM (appended to a suite's text: the port is known only once
    the server runs); ``min_shift`` left at the default unless given."""
    return (
        "\nsemantic_drift:\n"
        f"  embedding_model: openai/{local_model.EMBEDDING_ALIAS}\n"
        f"  api_base: {server.api_base}\n"
        f"  apply_to: {{tags: [{tag}]}}\n"
        + (f"  min_shift: {min_shift}\n" if min_shift is not None else "")
    )


def meaning_rows(result: ActionResult) -> dict[str, dict[str, Any]]:
    """The run's meaning comparisons (probe key ``semantic``) by prompt."""
    drift = read_pair(result, "drift.json")
    return {c["prompt_id"]: c for c in drift["comparisons"] if c["probe_key"] == "semantic"}


@pytest.fixture
def plain_gemma_server() -> Iterator[local_model.LocalServer]:
    """The same model and weights behind the plain Gemma chat template (no tool support)."""
    yield from _serve(local_model.PLAIN_GEMMA)


@dataclass
class RealHarness:
    """A workspace, the fake GitHub server, and ``entrypoint.py`` pointed at a real server."""

    tmp_path: Path
    workspace: Path
    github: FakeGitHubServer
    runs: int = 0
    inputs: dict[str, str] = field(default_factory=lambda: dict(REAL_INPUTS))

    def write_suite(self, text: str) -> None:
        """The suite as ``canary.yaml``, the ``config`` input's default."""
        (self.workspace / "canary.yaml").write_text(text, encoding="utf-8")

    def run(
        self,
        server: local_model.LocalServer,
        event_name: str,
        event: dict[str, Any],
        inputs: Mapping[str, str] | None = None,
        *,
        timeout: float = 1800,
    ) -> ActionResult:
        """One run of the action; the model is reached as ``openai/<alias>`` + ``OPENAI_API_BASE``,
        as a workflow reaches any self-hosted OpenAI-compatible endpoint."""
        self.runs += 1
        return run_action(
            self.tmp_path / f"run-{self.runs}",
            inputs={**self.inputs, **(inputs or {})},
            event_name=event_name,
            event=event,
            workspace=self.workspace,
            # No key at all: the server checks none, and the action must not need one.
            env={"OPENAI_API_BASE": server.api_base},
            github_api_url=self.github.url,
            timeout=timeout,
        )

    def run_push(
        self, server: local_model.LocalServer, inputs: Mapping[str, str] | None = None
    ) -> ActionResult:
        return self.run(server, "push", push_event(), inputs)

    def run_pr(
        self, server: local_model.LocalServer, inputs: Mapping[str, str] | None = None
    ) -> ActionResult:
        return self.run(server, "pull_request", pr_event(), inputs)


def make_harness(tmp_path: Path, github: FakeGitHubServer) -> RealHarness:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return RealHarness(tmp_path, workspace, github)


@contextlib.contextmanager
def harness_with_github(tmp_path: Path) -> Iterator[RealHarness]:
    """A harness on its own GitHub fake for a module's pool: stopped after, and every response
    it sent checked against GitHub's OpenAPI description."""
    github = FakeGitHubServer().start()
    try:
        yield make_harness(tmp_path, github)
    finally:
        github.stop()
    assert not github.response_errors, github.response_errors


def read_pair(result: ActionResult, name: str) -> dict[str, Any]:
    """``run.json`` or ``drift.json`` of the run's only suite × model pair."""
    [path] = result.output_path("report-dir").glob(f"*/*/{name}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def regressed_prompts(result: ActionResult) -> list[str]:
    drift = read_pair(result, "drift.json")
    return sorted({c["prompt_id"] for c in drift["comparisons"] if c["regression"]})
