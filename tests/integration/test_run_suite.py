"""A whole suite through the runner and real LiteLLM against the local fake OpenAI server."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, CanaryRunResult
from promptcanary.core.probes.format import JsonValidityProbe, KeywordPresenceProbe
from promptcanary.core.probes.tool_use import ToolCallPresenceProbe
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.provider import MissingCredentialsError
from promptcanary.core.run.runner import run_suite
from promptcanary.core.spec import ProbeBinding
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.litellm import LiteLLMProvider
from promptcanary.providers.replay import ReplayProvider
from tests.fakes.llm_server import WEATHER_TOOL, FakeLLMServer
from tests.fakes.sleeps import AsyncSleeps

API_KEY = "sk-test-runner"


def provider_for(server: FakeLLMServer, **params: Any) -> LiteLLMProvider:
    return LiteLLMProvider("openai/fake", api_base=server.url, api_key=API_KEY, **params)


def numbered_suite(n: int, *, keyword: str = "question") -> CanarySuite:
    prompts = [CanaryPrompt(id=f"q{i:02d}", text=f"question {i:02d}") for i in range(n)]
    return CanarySuite("integration", prompts, [KeywordPresenceProbe(required_keywords=[keyword])])


def run(
    suite: CanarySuite,
    provider: LiteLLMProvider | ReplayProvider,
    *,
    sleep: Any = None,
    **options: Any,
) -> CanaryRunResult:
    options.setdefault("show_progress", False)
    kwargs: dict[str, Any] = {"rng": random.Random(0)}
    if sleep is not None:
        kwargs["sleep"] = sleep
    return asyncio.run(run_suite(suite, provider, RunOptions(**options), **kwargs))


def test_twenty_four_prompts_run_concurrently_in_suite_order(llm_server: FakeLLMServer) -> None:
    llm_server.latency = 0.05
    suite = numbered_suite(24)

    result = run(suite, provider_for(llm_server), concurrency=8)

    assert llm_server.peak_in_flight > 1
    assert llm_server.peak_in_flight <= 8
    assert [r.prompt_id for r in result.llm_responses] == [p.id for p in suite.prompts]
    assert [r.content for r in result.llm_responses] == [p.text for p in suite.prompts]  # echo
    assert result.error_count == 0 and result.overall_score == 1.0
    assert llm_server.request_count == 24
    assert result.token_usage.total_tokens > 0


def test_tool_calls_and_request_parameters_round_trip(llm_server: FakeLLMServer) -> None:
    llm_server.script(
        "weather", tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    )
    prompts = [
        CanaryPrompt(id="tool", text="weather in Oslo", tools=[WEATHER_TOOL]),
        CanaryPrompt(id="json", text="json please", response_format={"type": "json_object"}),
    ]
    suite = CanarySuite(
        "tools",
        prompts,
        [],
        bindings=[
            ProbeBinding(ToolCallPresenceProbe(strategy="native"), "called", prompt_id="tool"),
            ProbeBinding(JsonValidityProbe(), "json_ok", prompt_id="json"),
        ],
    )

    result = run(suite, provider_for(llm_server, seed=9), temperature=0.25)

    tool_response = result.responses_for("tool")[0]
    assert [(c.name, c.arguments) for c in tool_response.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    by_key = {r.probe_key: r for r in result.probe_results}
    assert by_key["called"].passed
    assert not by_key["json_ok"].passed  # the echo "json please" is not JSON: it was scored
    tool_request = llm_server.requests_matching("weather")[0]
    assert tool_request["tools"] == [WEATHER_TOOL]
    assert (tool_request["temperature"], tool_request["seed"]) == (0.25, 9)
    assert llm_server.requests_matching("json please")[0]["response_format"] == {
        "type": "json_object"
    }


def test_rate_limit_with_retry_after_is_retried_and_succeeds(llm_server: FakeLLMServer) -> None:
    llm_server.script("question 01", status=429, retry_after=1, fail_times=1, content="recovered")
    started = time.monotonic()

    result = run(numbered_suite(3), provider_for(llm_server))  # real asyncio.sleep

    elapsed = time.monotonic() - started
    limited = result.responses_for("q01")[0]
    assert not limited.errored and limited.retries == 1
    assert limited.content == "recovered"
    assert len(llm_server.requests_matching("question 01")) == 2
    assert elapsed >= 1.0  # Retry-After was honoured
    assert result.retry_count == 1


def test_permanent_server_error_ends_errored_while_the_rest_completes(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("question 02", status=500)
    sleep = AsyncSleeps()

    result = run(numbered_suite(5), provider_for(llm_server), max_retries=2, sleep=sleep)

    broken = result.responses_for("q02")[0]
    assert broken.errored and broken.retries == 2
    assert "500" in (broken.error or "")
    assert len(llm_server.requests_matching("question 02")) == 3  # one request per attempt
    assert len(sleep.delays) == 2
    assert [r.errored for r in result.llm_responses] == [False, False, True, False, False]
    assert [r.prompt_id for r in result.errored_results] == ["q02"]
    assert result.error_count == 1


def test_hang_is_retried_then_errored_within_the_time_budget(llm_server: FakeLLMServer) -> None:
    llm_server.script("question 00", hang=True)
    timeout, retries = 0.5, 1
    result = run(
        numbered_suite(2),
        provider_for(llm_server),
        timeout=timeout,
        max_retries=retries,
        sleep=AsyncSleeps(),
    )

    hung = result.responses_for("q00")[0]
    assert hung.errored and "timed out" in (hung.error or "") and hung.retries == retries
    assert len(llm_server.requests_matching("question 00")) == retries + 1
    assert not result.responses_for("q01")[0].errored


def test_unusable_answers_end_errored_with_clear_reasons(llm_server: FakeLLMServer) -> None:
    llm_server.script("question 00", malformed=True)
    llm_server.script("question 01", empty_choices=True)
    llm_server.script("question 02", null_content=True)

    result = run(numbered_suite(4), provider_for(llm_server), max_retries=1, sleep=AsyncSleeps())

    errors = {r.prompt_id: r.error or "" for r in result.llm_responses if r.errored}
    assert "malformed response body" in errors["q00"]
    assert "empty choices in response" in errors["q01"]
    assert "no content and no tool calls" in errors["q02"]
    assert set(errors) == {"q00", "q01", "q02"}
    # malformed bodies are retried (transient), the others are not
    assert len(llm_server.requests_matching("question 00")) == 2
    assert len(llm_server.requests_matching("question 01")) == 1
    assert len(llm_server.requests_matching("question 02")) == 1


def test_every_attempt_is_exactly_one_http_request(llm_server: FakeLLMServer) -> None:
    llm_server.script("question 01", status=503, fail_times=2)
    llm_server.script("question 03", status=429, fail_times=1)

    result = run(numbered_suite(6), provider_for(llm_server), sleep=AsyncSleeps())

    attempts = sum(r.retries + 1 for r in result.llm_responses)
    assert llm_server.request_count == attempts == 6 + 2 + 1


def test_samples_use_consecutive_seeds(llm_server: FakeLLMServer) -> None:
    result = run(numbered_suite(2), provider_for(llm_server), samples=3, seed=100)

    seeds = sorted((r["last_user"], r["seed"]) for r in llm_server.requests)
    assert seeds == [(f"question {i:02d}", 100 + s) for i in range(2) for s in range(3)]
    assert [(r.prompt_id, r.sample) for r in result.llm_responses] == [
        (p, s) for p in ("q00", "q01") for s in range(3)
    ]


def test_recorded_run_replays_to_identical_scores(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("question 01", content="no keyword here")
    llm_server.script("question 02", status=400)
    suite = numbered_suite(4)
    recording = tmp_path / "run.jsonl"

    live = run(suite, provider_for(llm_server), record=recording)
    replayed = run(suite, ReplayProvider(recording))

    def scores(result: CanaryRunResult) -> list[tuple[str, float, bool]]:
        return [(r.prompt_id, r.score, r.errored) for r in result.probe_results]

    assert scores(replayed) == scores(live)
    assert API_KEY not in recording.read_text()


def test_run_provider_config_is_redacted(llm_server: FakeLLMServer) -> None:
    result = run(numbered_suite(1), provider_for(llm_server))
    assert result.provider.extra_params == {"api_base": llm_server.url, "api_key": "***"}
    assert API_KEY not in result.model_dump_json()


def test_missing_api_key_stops_the_run_before_any_request(
    llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    suite = numbered_suite(2)

    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        suite.run(LiteLLMProvider("openai/gpt-4o-mini"), show_progress=False)
    assert llm_server.request_count == 0


def test_suite_run_uses_the_runner_end_to_end(llm_server: FakeLLMServer) -> None:
    suite = numbered_suite(5)
    result = suite.run(provider_for(llm_server), show_progress=False, concurrency=3, max_tokens=12)
    assert result.error_count == 0 and len(result.llm_responses) == 5
    assert {r["max_tokens"] for r in llm_server.requests} == {12}
    assert result.provider.max_tokens == 12


def test_requests_overlap_up_to_the_concurrency_and_no_further(llm_server: FakeLLMServer) -> None:
    # Guards against accidental serialisation without timing anything (speed is `make bench`'s).
    n, concurrency = 64, 16
    llm_server.latency = 0.5  # long enough that every free slot fills before one finishes

    result = run(numbered_suite(n), provider_for(llm_server), concurrency=concurrency)

    assert result.error_count == 0
    assert llm_server.request_count == n
    assert llm_server.peak_in_flight == concurrency
