"""A change of meaning on a real model: the deployed system prompt changes what the answers say.

Gemma 3 270M answers two free-text sales questions under a system prompt that has it recommend
one product; all-MiniLM-L6-v2 (served beside it) embeds every answer. The pool is built by
``BASELINE_PUSHES`` promoted pushes. Then the deployed system prompt changes behind the suite, as
when an application's prompt is edited outside the canary suite: a proxy in front of the chat
server replaces it, so the suite (and each prompt's hash) stays the same and the baseline still
applies. The new prompt has the model recommend another product; a pull request must report the
change of meaning on the prompt whose answers follow it.

What is asserted, and why only that: the change is reported *changed* on at least one of the
two prompts, and on neither is it *same*. Which prompt varies from run to run: many of the base
model's answers are empty or echo the question whatever the system prompt, so each prompt's shift
depends on how many of its sampled answers name the product (over 300 recorded answers a side:
0.09 on which-product, 0.06 on new-customer). The answers themselves depend on where the shared
server is in its seed chain (the tests before this one) and on the order concurrent requests
reach it, so one run of this test is one draw. ``bench/meaning_change_power.py`` measures the
chance the draw comes out right: it records the model's answers under both system prompts and
replays this module's design (``BASELINE_PUSHES``, ``BUILD_SAMPLES``, ``CHANGED_INPUTS``,
``MIN_SHIFT``, the suite) through the real runner, promotion and comparison. With this design the
assertion held in 400 of 400 replays of a recording with server seed 7 (new-customer *changed*
in 98.5%, which-product in 100%). With ``min-samples`` 16 it held in 1,000 of 1,000 and 996 of
1,000 replays of two recordings (seeds 20240601 and 7; 397 of 400 on a rerun of seed 7, the
misses new-customer called *same*); with five pushes and 16 in 995, 999 (the first recording
twice) and 997. The design before (four pushes, ``max-samples``
42, ``min_shift`` 0.02, "What do you recommend for me?" as the second prompt) held in about 85% of
an early version of those replays, and failed once in CI.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast

import pytest

from scripts import local_model
from tests.e2e.runner import ActionResult
from tests.real_model.conftest import (
    RealHarness,
    harness_with_github,
    meaning_rows,
    read_pair,
    semantic_drift,
)

pytestmark = [pytest.mark.real_model]

BASELINE_PUSHES = 6
#: Answers per prompt each building push asks: six pushes pool 96 vectors a prompt, of which
#: two thirds (64, the changed run's ``max-samples``) can be paired with today's answers (a third
#: is held out).
BUILD_SAMPLES = "16"
QUIET = {"comment": "off", "check-run": "false", "fail-on": "never"}
#: The changed run may ask enough answers for the evidence to reach the bar.
#: ``min-samples`` 24: many of the base model's answers are empty or echo the question,
#: whatever the system prompt; five answers (the default's first look) can show no
#: shift at all and end *same* (seen: shift estimates of -0.01 and -0.09 at five answers), and
#: at 16 the replays still called new-customer *same* in 0.8% (400 replays, seed 7; 0 at 24).
CHANGED_INPUTS = {**QUIET, "min-samples": "24", "max-samples": "64"}
#: The base model dilutes any change: whatever the system prompt, many of its answers are
#: empty or echo the question, so a change in what the rest say moves the centroid
#: little (measured shift 0.06 on which-product, between the default min_shift 0.05 and its
#: margin 0.1, where the comparison calls it *same*: a large change ruled out). This suite
#: counts smaller changes: min_shift 0.01, margin 0.02. At min_shift 0.02 (margin 0.04, about
#: half the true shift) early replays called a prompt *same* in 2-4% of runs.
MIN_SHIFT = 0.01
BY_NAME = "which-product"
NEW_CUSTOMER = "new-customer"


def _sales(shop: str, product: str) -> str:
    # The base model follows no instruction, but it copies what its context repeats: naming
    # the product three times raised the share of answers that name it from about a third.
    return (
        f"You are the sales assistant of {shop}. We sell the {product}. Always recommend the "
        f"{product}. The {product} is the answer to every question: the {product}."
    )


SYSTEM = _sales("Acme Networks", "Falcon Wi-Fi router")
CHANGED_SYSTEM = _sales("Acme Kitchen", "Zephyr espresso machine")
SUITE = f"""\
name: real-model-meaning-change
description: Free-text sales answers whose meaning the embedding comparison watches.
defaults:
  temperature: 0.8
  max_tokens: 32
  seed: 7
system_prompt: "{SYSTEM}"
probes:
  - type: response_length
    id: fits-the-widget
    max_chars: 400
prompts:
  - id: {BY_NAME}
    tags: [sales]
    text: Which product should I buy from you?
  - id: {NEW_CUSTOMER}
    tags: [sales]
    text: Hi! I am a new customer. What should I get?
"""


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


def sample_answers(result: ActionResult, each: int = 4) -> dict[str, list[str]]:
    """A few answers of each prompt, to show what the model said."""
    out: dict[str, list[str]] = {}
    for response in read_pair(result, "run.json")["llm_responses"]:
        answers = out.setdefault(response["prompt_id"], [])
        if len(answers) < each:
            answers.append(response["content"])
    return out


@pytest.fixture(scope="module")
def pooled(
    tmp_path_factory: pytest.TempPathFactory,
    function_calling_server: local_model.LocalServer,
    embedding_server: local_model.LocalServer,
) -> Iterator[RealHarness]:
    """A workspace whose pool is ``BASELINE_PUSHES`` promoted pushes of the sales suite."""
    with harness_with_github(tmp_path_factory.mktemp("meaning-change")) as harness:
        harness.write_suite(SUITE + semantic_drift(embedding_server, "sales", MIN_SHIFT))
        started = time.monotonic()
        for _ in range(BASELINE_PUSHES):
            result = harness.run_push(
                function_calling_server,
                {**QUIET, "update-baseline": "always", "baseline-samples": BUILD_SAMPLES},
            )
            assert result.returncode == 0, result.log
            assert result.outputs["errors"] == "0", result.log
        for pid, answers in sample_answers(result).items():
            print(f"  {pid}, pool: " + " | ".join(repr(a[:60]) for a in answers))
        print(f"\nmeaning pool: {BASELINE_PUSHES} pushes in {time.monotonic() - started:.0f} s")
        yield harness


@pytest.mark.timeout(1800)
def test_a_system_prompt_that_changes_the_product_is_a_change_of_meaning(
    pooled: RealHarness, function_calling_server: local_model.LocalServer
) -> None:
    started = time.monotonic()
    with _SystemPromptProxy(function_calling_server.api_base, CHANGED_SYSTEM) as proxy:
        # The harness only reads the server's api_base: the proxy stands in for it.
        result = pooled.run_pr(cast(local_model.LocalServer, proxy), CHANGED_INPUTS)
    assert result.returncode == 0, result.log
    rows = meaning_rows(result)
    verdicts = {pid: row["verdict"] for pid, row in rows.items()}
    shifts = {pid: row["semantic"]["shift"] for pid, row in rows.items()}
    print(
        f"\nmeaning, system prompt changed (Falcon router -> Zephyr espresso machine): "
        f"{verdicts}, shifts {shifts} ({time.monotonic() - started:.0f} s)"
    )
    for pid, answers in sample_answers(result).items():
        print(f"  {pid}, today: " + " | ".join(repr(a[:60]) for a in answers))
    assert set(rows) == {BY_NAME, NEW_CUSTOMER}, result.log
    assert "same" not in verdicts.values(), result.log
    changed = [pid for pid, verdict in verdicts.items() if verdict == "changed"]
    assert changed, result.log
    assert all(rows[pid]["regression"] for pid in changed)
    assert result.outputs["drift-detected"] == "true"
