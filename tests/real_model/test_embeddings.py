"""Meaning comparisons against a real model: llama.cpp serving Gemma 3 270M twice, the chat
server and, beside it, an embedding server (``scripts/embedding_server.py``: llama-cpp-python's
server whose contexts pool each text's token vectors by their mean, one vector per text).

* **Pooled vectors**: through LiteLLM and the answer phase, each distinct text gets one finite
  vector of one dimension, served once per run.
* **No change**: a free-text suite at temperature 0.8 (every answer a new wording) builds its
  pool in ``BASELINE_PUSHES`` promoted pushes, then runs ``NO_CHANGE_RUNS`` times on a pull
  request: at most ``MAX_FALSE_ALARMS`` run reports a change of meaning.
* **A changed system prompt**: the deployed system prompt changes behind the suite (a proxy in
  front of the chat server replaces it: the suite and so the prompts' hashes stay the same, as when
  an application's prompt is edited outside the canary suite); what the answers say changes, and
  the meaning comparison reports it on the prompts.

Kept small for the layer's time on 2 cores (the chat server answers one request at a time): two
prompts, ``max_tokens`` 24, ``max-samples`` 12 for the no-change runs. The time of each part is
printed (``-s``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import pytest

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure, ServiceRequest, served_output
from promptcanary.core.run.answer_phase import AnswerPhase
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.providers.litellm import LiteLLMEmbedder
from scripts import local_model
from tests.e2e.runner import ActionResult
from tests.fakes.github_server import FakeGitHubServer
from tests.real_model.conftest import RealHarness, make_harness, read_pair

pytestmark = [pytest.mark.real_model]

BASELINE_PUSHES = 2
#: Answers per prompt each building push asks: two pushes pool 32 vectors a prompt, enough for
#: the betting test to reach the suite's bar on a real change (a third is held out).
BUILD_SAMPLES = "16"
NO_CHANGE_RUNS = 10
MAX_FALSE_ALARMS = 1
QUIET = {"comment": "off", "check-run": "false", "fail-on": "never"}
NO_CHANGE_INPUTS = {**QUIET, "max-samples": "12"}
#: The changed run may ask enough answers for the evidence to reach the bar.
CHANGED_INPUTS = {**QUIET, "max-samples": "30"}

SYSTEM = (
    "You are the sales assistant of Acme Cloud. Always recommend the Pro plan: 20 dollars a "
    "month, unlimited projects, priority support."
)
CHANGED_SYSTEM = (
    "You are a pirate captain. Talk only about your ship, the sea and buried treasure, in "
    "pirate slang; never mention plans, prices or software."
)
PROMPTS = ("plan-for-team", "plan-for-startup")
SUITE = f"""\
name: real-model-meaning
description: Free-text answers whose meaning the embedding comparison watches.
defaults:
  temperature: 0.8
  max_tokens: 24
  seed: 7
system_prompt: "{SYSTEM}"
semantic_drift:
  embedding_model: openai/{local_model.MODEL_ALIAS}
  api_base: {{api_base}}
probes:
  - type: response_length
    id: fits-the-widget
    max_chars: 400
prompts:
  - id: plan-for-team
    text: Which plan do you recommend for a team of five developers?
  - id: plan-for-startup
    text: What should a small startup buy from you?
"""


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[local_model.LocalServer]:
    if not local_model.is_installed():
        pytest.fail("the local model is not installed: run `make model-install`", pytrace=False)
    try:
        server = local_model.start(embedding=True)
    except local_model.ModelSetupError as exc:
        pytest.fail(f"the embedding server did not start: {exc}", pytrace=False)
    with server:
        yield server


@pytest.mark.timeout(420)
def test_each_text_gets_one_pooled_vector(embedding_server: local_model.LocalServer) -> None:
    embedder = LiteLLMEmbedder(
        f"openai/{local_model.MODEL_ALIAS}", api_base=embedding_server.api_base
    )
    phase = AnswerPhase.of([EmbeddingService(embedder)], max_retries=1)
    texts = ["We recommend the Pro plan for a team of five.", "Arr, the treasure be buried."]
    requests = [ServiceRequest(EMBEDDING, t) for t in [*texts, texts[0]]]
    served = asyncio.run(phase.serve(requests))
    vectors = [served_output(served, ServiceRequest(EMBEDDING, t)) for t in texts]
    for vector in vectors:
        assert not isinstance(vector, ServiceFailure), vector
        assert all(isinstance(v, float) for v in vector)
    assert len(vectors[0]) == len(vectors[1]) > 1
    assert vectors[0] != vectors[1]
    (usage,) = phase.usage()
    assert usage.items == 2 and usage.errors == 0 and usage.tokens > 0  # the repeat: served once


class _SystemPromptProxy:
    """Forwards chat requests to the chat server with every system message replaced."""

    def __init__(self, upstream: str, system: str) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                for message in body.get("messages", []):
                    if message.get("role") == "system":
                        message["content"] = proxy.system
                request = urllib.request.Request(
                    proxy.upstream + self.path.removeprefix("/v1"),
                    data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=600) as answer:
                    status, data = answer.status, answer.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.upstream, self.system = upstream, system
        self.server = ThreadingHTTPServer((local_model.HOST, 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://{local_model.HOST}:{self.server.server_address[1]}/v1"

    def __enter__(self) -> _SystemPromptProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _meaning_rows(result: ActionResult) -> dict[str, dict[str, Any]]:
    drift = read_pair(result, "drift.json")
    return {c["prompt_id"]: c for c in drift["comparisons"] if c["probe_key"] == "semantic"}


@pytest.fixture(scope="module")
def pooled(
    tmp_path_factory: pytest.TempPathFactory,
    function_calling_server: local_model.LocalServer,
    embedding_server: local_model.LocalServer,
) -> Iterator[RealHarness]:
    """A workspace whose pool is ``BASELINE_PUSHES`` promoted pushes of the meaning suite."""
    github = FakeGitHubServer().start()
    try:
        harness = make_harness(tmp_path_factory.mktemp("meaning"), github)
        harness.write_suite(SUITE.format(api_base=embedding_server.api_base))
        started = time.monotonic()
        for _ in range(BASELINE_PUSHES):
            result = harness.run_push(
                function_calling_server,
                {**QUIET, "update-baseline": "always", "baseline-samples": BUILD_SAMPLES},
            )
            assert result.returncode == 0, result.log
            assert result.outputs["errors"] == "0", result.log
        print(f"\nmeaning pool: {BASELINE_PUSHES} pushes in {time.monotonic() - started:.0f} s")
        yield harness
    finally:
        github.stop()
    assert not github.response_errors, github.response_errors


@pytest.mark.timeout(1800)
def test_no_change_runs_rarely_report_a_change_of_meaning(
    pooled: RealHarness, function_calling_server: local_model.LocalServer
) -> None:
    started = time.monotonic()
    alarms = []
    for number in range(1, NO_CHANGE_RUNS + 1):
        result = pooled.run_pr(function_calling_server, NO_CHANGE_INPUTS)
        assert result.returncode == 0, result.log
        rows = _meaning_rows(result)
        assert set(rows) == set(PROMPTS), result.log  # every prompt compared, none skipped
        for row in rows.values():
            assert row["semantic"]["reason"] is None, row  # vectors of one model, pooled
        changed = sorted(pid for pid, row in rows.items() if row["verdict"] == "changed")
        verdicts = {pid: row["verdict"] for pid, row in rows.items()}
        print(f"  no-change run {number}: {verdicts}")
        if changed:
            alarms.append((number, changed))
    print(
        f"meaning, no change: {len(alarms)} of {NO_CHANGE_RUNS} runs reported a change "
        f"({time.monotonic() - started:.0f} s)"
    )
    assert len(alarms) <= MAX_FALSE_ALARMS, alarms


@pytest.mark.timeout(1800)
def test_a_changed_system_prompt_is_a_change_of_meaning(
    pooled: RealHarness, function_calling_server: local_model.LocalServer
) -> None:
    started = time.monotonic()
    with _SystemPromptProxy(function_calling_server.api_base, CHANGED_SYSTEM) as proxy:
        # The harness only reads the server's api_base: the proxy stands in for it.
        served = cast(local_model.LocalServer, proxy)
        result = pooled.run_pr(served, CHANGED_INPUTS)
    assert result.returncode == 0, result.log
    rows = _meaning_rows(result)
    verdicts = {pid: row["verdict"] for pid, row in rows.items()}
    shifts = {pid: row["semantic"]["shift"] for pid, row in rows.items()}
    print(
        f"\nmeaning, changed system prompt: {verdicts}, shifts {shifts} "
        f"({time.monotonic() - started:.0f} s)"
    )
    assert verdicts == dict.fromkeys(PROMPTS, "changed"), result.log
    assert all(rows[pid]["regression"] for pid in PROMPTS)
