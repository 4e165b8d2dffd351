"""LiteLLMProvider against the real local OpenAI-compatible server, through real LiteLLM."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from promptcanary.core.http_headers import parse_retry_after
from promptcanary.core.models import CanaryPrompt, LLMResponse, ToolCall
from promptcanary.core.run.provider import MissingCredentialsError, ProviderError
from promptcanary.providers.litellm import LiteLLMProvider
from tests.fakes.llm_server import WEATHER_TOOL, FakeLLMServer

API_KEY = "sk-test-do-not-leak-1234"


def provider_for(server: FakeLLMServer, **params: Any) -> LiteLLMProvider:
    return LiteLLMProvider("openai/fake", api_base=server.url, api_key=API_KEY, **params)


def call(
    provider: LiteLLMProvider,
    prompt: CanaryPrompt,
    *,
    system_prompt: str | None = None,
    sample: int = 0,
    timeout: float = 10.0,
) -> LLMResponse:
    return asyncio.run(
        provider.acomplete(prompt, system_prompt=system_prompt, sample=sample, timeout=timeout)
    )


def failure(provider: LiteLLMProvider, text: str, *, timeout: float = 10.0) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        call(provider, CanaryPrompt(id="x", text=text), timeout=timeout)
    return info.value


# ── successful calls ─────────────────────────────────────────────────────────


def test_text_answer_and_what_was_sent(llm_server: FakeLLMServer) -> None:
    llm_server.script("capital", content="Paris is the capital.", usage={"prompt_tokens": 11})
    provider = provider_for(llm_server, temperature=0.3, max_tokens=77, seed=5)
    prompt = CanaryPrompt(
        id="cap",
        text="What is the capital of France?",
        response_format={"type": "json_object"},
    )

    response = call(provider, prompt, system_prompt="Be brief.", sample=2)

    assert response.content == "Paris is the capital."
    assert (response.prompt_id, response.sample, response.finish_reason) == ("cap", 2, "stop")
    assert response.prompt_tokens == 11 and response.total_tokens == 11 + response.completion_tokens
    assert response.latency_ms is not None and response.latency_ms > 0
    assert response.provider_model_id == "openai/fake"
    request = llm_server.last_request
    assert request["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.3, 77, 5)
    assert request["response_format"] == {"type": "json_object"}
    assert request["headers"]["has_authorization"]


def test_raw_response_is_small_and_has_no_key(llm_server: FakeLLMServer) -> None:
    response = call(provider_for(llm_server), CanaryPrompt(id="x", text="hello"))
    assert set(response.raw_response) <= {"id", "model", "system_fingerprint", "usage"}
    assert response.raw_response["id"].startswith("chatcmpl-fake-")
    assert API_KEY not in response.model_dump_json()


def test_native_tool_calls_round_trip(llm_server: FakeLLMServer) -> None:
    llm_server.script(
        "weather", tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}]
    )
    prompt = CanaryPrompt(id="w", text="weather in Paris?", tools=[WEATHER_TOOL])

    response = call(provider_for(llm_server), prompt)

    assert response.content == ""
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == [
        ToolCall(
            name="get_weather",
            arguments={"city": "Paris"},
            arguments_raw='{"city": "Paris"}',
            id="c1",
        )
    ]
    assert llm_server.last_request["tools"] == [WEATHER_TOOL]


def test_a_prompt_with_tools_asks_for_tool_choice_auto(llm_server: FakeLLMServer) -> None:
    """llama-cpp-python's function-calling formats answer in prose unless the request carries
    ``tool_choice``; "auto" is what OpenAI assumes when it is absent, so sending it is safe."""
    llm_server.script("weather", tool_calls=[{"name": "get_weather", "arguments": {"city": "X"}}])
    call(provider_for(llm_server), CanaryPrompt(id="w", text="weather?", tools=[WEATHER_TOOL]))
    assert llm_server.last_request["tool_choice"] == "auto"


def test_tool_choice_of_the_model_entry_is_kept_and_sent_only_with_tools(
    llm_server: FakeLLMServer,
) -> None:
    forced = {"type": "function", "function": {"name": "get_weather"}}
    provider = provider_for(llm_server, tool_choice=forced)

    call(provider, CanaryPrompt(id="w", text="weather?", tools=[WEATHER_TOOL]))
    assert llm_server.last_request["tool_choice"] == forced

    call(provider, CanaryPrompt(id="p", text="plain question"))
    assert llm_server.last_request["tool_choice"] is None
    assert llm_server.last_request["tools"] is None


def test_tool_call_with_invalid_json_arguments_keeps_the_raw_text(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("weather", tool_calls=[{"name": "get_weather", "arguments": '{"city": Par'}])
    response = call(provider_for(llm_server), CanaryPrompt(id="w", text="weather?"))
    assert response.tool_calls[0].arguments is None
    assert response.tool_calls[0].arguments_raw == '{"city": Par'


def test_spec_style_extra_params_keyword_is_forwarded(llm_server: FakeLLMServer) -> None:
    provider = LiteLLMProvider(
        "openai/fake",
        max_tokens=2048,
        extra_params={"response_format": {"type": "json_object"}, "api_base": llm_server.url},
        api_key=API_KEY,
    )
    assert provider.config.extra_params == {
        "response_format": {"type": "json_object"},
        "api_base": llm_server.url,
        "api_key": API_KEY,
    }
    call(provider, CanaryPrompt(id="x", text="hi"))
    assert llm_server.last_request["response_format"] == {"type": "json_object"}
    assert llm_server.last_request["max_tokens"] == 2048


def test_blocking_complete_works(llm_server: FakeLLMServer) -> None:
    llm_server.script("sync", content="sync answer")
    response = provider_for(llm_server).complete(CanaryPrompt(id="s", text="sync please"))
    assert response.content == "sync answer"
    assert llm_server.request_count == 1


# ── errors: one call is one HTTP request ─────────────────────────────────────


def test_rate_limit_is_transient_with_retry_after_and_one_request(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("limited", status=429, retry_after=1)
    error = failure(provider_for(llm_server), "limited")
    assert (error.status_code, error.retry_after, error.transient) == (429, 1.0, True)
    assert "429" in str(error)
    assert llm_server.request_count == 1


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_transient_and_not_retried_inside(
    llm_server: FakeLLMServer, status: int
) -> None:
    llm_server.script("broken", status=status)
    error = failure(provider_for(llm_server), "broken")
    assert error.status_code == status and error.transient
    assert llm_server.request_count == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_transient(llm_server: FakeLLMServer, status: int) -> None:
    llm_server.script("bad", status=status)
    error = failure(provider_for(llm_server), "bad")
    assert error.status_code == status and not error.transient
    assert str(status) in str(error)
    assert llm_server.request_count == 1


def test_timeout_is_transient_and_one_request(llm_server: FakeLLMServer) -> None:
    llm_server.script("slow", hang=True)
    error = failure(provider_for(llm_server), "slow", timeout=0.5)
    assert error.transient and "timed out after 0.5 s" in str(error)
    assert llm_server.request_count == 1


def test_connection_refused_is_transient() -> None:
    provider = LiteLLMProvider("openai/fake", api_base="http://127.0.0.1:9/v1", api_key=API_KEY)
    with pytest.raises(ProviderError) as info:
        call(provider, CanaryPrompt(id="x", text="anyone?"), timeout=2)
    assert info.value.transient


def test_malformed_body_is_a_clear_transient_error(llm_server: FakeLLMServer) -> None:
    llm_server.script("garbled", malformed=True)
    error = failure(provider_for(llm_server), "garbled")
    assert "malformed response body (not valid JSON)" in str(error)
    assert error.transient
    assert llm_server.request_count == 1


def test_empty_choices_is_a_clear_permanent_error(llm_server: FakeLLMServer) -> None:
    llm_server.script("nothing", empty_choices=True)
    error = failure(provider_for(llm_server), "nothing")
    assert str(error) == "empty choices in response" and not error.transient


def test_null_content_without_tool_calls_is_a_clear_permanent_error(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("silent", null_content=True)
    error = failure(provider_for(llm_server), "silent")
    assert "model returned no content and no tool calls" in str(error)
    assert not error.transient


def test_the_api_key_never_appears_in_an_error(llm_server: FakeLLMServer) -> None:
    llm_server.script("leak", status=401, error_message=f"Incorrect API key provided: {API_KEY}")
    error = failure(provider_for(llm_server), "leak")
    assert API_KEY not in str(error)
    assert "***" in str(error)


# ── environment ──────────────────────────────────────────────────────────────


@pytest.fixture
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_missing_api_key_names_the_variable(no_openai_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(MissingCredentialsError) as info:
        LiteLLMProvider("openai/gpt-4o-mini").check_environment()
    message = str(info.value)
    assert "'openai/gpt-4o-mini' needs OPENAI_API_KEY in the environment" in message
    assert "env:" in message
    assert info.value.transient is False


def test_blank_api_key_counts_as_missing(no_openai_env: pytest.MonkeyPatch) -> None:
    no_openai_env.setenv("OPENAI_API_KEY", "")
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        LiteLLMProvider("openai/gpt-4o-mini").check_environment()


def test_a_local_endpoint_without_any_key_gets_a_placeholder_key(
    llm_server: FakeLLMServer, no_openai_env: pytest.MonkeyPatch
) -> None:
    """A self-hosted server (llama.cpp, vLLM, Ollama) checks no key; without one the OpenAI client
    under LiteLLM refused to send the request ("Missing credentials", reported as a retryable 500).
    """
    llm_server.script("capital", content="Canberra")
    provider = LiteLLMProvider("openai/local", api_base=llm_server.url)
    provider.check_environment()

    response = call(provider, CanaryPrompt(id="c", text="capital of Australia?"))

    assert response.content == "Canberra"
    assert llm_server.last_request["headers"]["has_authorization"] is True


def test_a_configured_key_is_sent_instead_of_the_placeholder(
    llm_server: FakeLLMServer, no_openai_env: pytest.MonkeyPatch
) -> None:
    provider = LiteLLMProvider("openai/local", api_base=llm_server.url, api_key=API_KEY)
    assert "api_key" in provider.request_kwargs(CanaryPrompt(id="c", text="x"), None, None)
    assert provider.request_kwargs(CanaryPrompt(id="c", text="x"), None, None)["api_key"] == API_KEY
    no_openai_env.setenv("OPENAI_API_KEY", API_KEY)
    from_env = LiteLLMProvider("openai/local", api_base=llm_server.url)
    assert "api_key" not in from_env.request_kwargs(CanaryPrompt(id="c", text="x"), None, None)


def test_anthropic_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_API_BASE",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        LiteLLMProvider("anthropic/claude-3-5-sonnet-20241022").check_environment()


@pytest.mark.parametrize(
    ("env", "params"),
    [
        ({"OPENAI_API_KEY": "sk-env"}, {}),
        ({}, {"api_key": "sk-param"}),
        ({}, {"api_base": "http://127.0.0.1:1/v1"}),
        ({"OPENAI_API_BASE": "http://127.0.0.1:1/v1"}, {}),
    ],
)
def test_configured_environments_pass(
    no_openai_env: pytest.MonkeyPatch, env: dict[str, str], params: dict[str, str]
) -> None:
    for name, value in env.items():
        no_openai_env.setenv(name, value)
    provider = LiteLLMProvider("openai/gpt-4o-mini", **params)
    provider.check_environment()  # must not raise
    assert provider.config.model_id == "openai/gpt-4o-mini"


# ── import behaviour ─────────────────────────────────────────────────────────


def _fresh_python(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return result.stdout.strip()


def test_importing_the_module_does_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "from promptcanary.providers.litellm import LiteLLMProvider\n"
        "LiteLLMProvider('openai/x', api_key='k')\n"
        "print('litellm' in sys.modules)"
    )
    assert _fresh_python(code) == "False"


def test_prewarm_imports_litellm_in_the_background_offline() -> None:
    code = (
        "import os, sys\n"
        "from promptcanary.providers.litellm import LiteLLMProvider\n"
        "thread = LiteLLMProvider.prewarm()\n"
        "assert thread is LiteLLMProvider.prewarm()\n"
        "thread.join(60)\n"
        "print('litellm' in sys.modules, os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'))"
    )
    assert _fresh_python(code) == "True True"


def test_parse_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("-3") == 0.0
    later = datetime.now(UTC) + timedelta(seconds=30)
    assert 25 <= (parse_retry_after(format_datetime(later, usegmt=True)) or 0) <= 31
    assert parse_retry_after("soon") is None
