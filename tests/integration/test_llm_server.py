"""The fake OpenAI-compatible server, checked over raw HTTP and through LiteLLM 1.106.x.

What these tests pin down about LiteLLM (the engine relies on it):

* ``model="openai/<name>"`` + ``api_base=server.url`` (``http://127.0.0.1:PORT/v1``) posts to
  ``/v1/chat/completions`` with ``model=<name>``; temperature, seed, max_tokens, tools,
  tool_choice and response_format are forwarded as given.
* The OpenAI SDK under LiteLLM retries 429/5xx/timeouts twice by default (3 HTTP requests,
  honouring Retry-After). ``max_retries=0`` or ``num_retries=0`` gives exactly one request.
  ``num_retries=N>0`` becomes the SDK's max_retries AND (sync) triggers LiteLLM's own retry
  wrapper, which needs ``tenacity`` (not installed) and then raises a bare ``Exception``.
* 429 -> ``litellm.RateLimitError`` (``status_code == 429``); Retry-After is in
  ``exc.litellm_response_headers`` (an ``httpx.Headers``); ``exc.response.headers`` is EMPTY.
* 500 -> ``litellm.InternalServerError``; 503 -> ``ServiceUnavailableError``; 502 ->
  ``BadGatewayError``; 504 and client timeouts -> ``litellm.Timeout`` (``status_code == 408`` for
  a client timeout). All are subclasses of ``openai.APIError``.
* A 200 with a non-JSON body -> ``litellm.InternalServerError`` (status_code 500).
* ``choices: []`` -> no exception, ``response.choices == []``.
* ``content: null`` -> no exception, ``message.content is None``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
import time
from collections import Counter
from typing import Any

import pytest

from tests.fakes.llm_server import WEATHER_TOOL, FakeLLMServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")
litellm.suppress_debug_info = True

MODEL = "openai/fake-model"
NO_RETRY = {"max_retries": 0}


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail loudly if anything in these tests tries to connect beyond 127.0.0.1."""
    original = socket.socket.connect
    original_ex = socket.socket.connect_ex

    def check(addr: Any) -> None:
        if isinstance(addr, tuple) and addr[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"test tried to reach {addr!r}")

    def connect(self: socket.socket, addr: Any) -> None:
        check(addr)
        return original(self, addr)

    def connect_ex(self: socket.socket, addr: Any) -> int:
        check(addr)
        return original_ex(self, addr)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def ask(server: FakeLLMServer, text: str, **kwargs: Any) -> Any:
    params: dict[str, Any] = {"api_base": server.url, "api_key": "sk-test", **NO_RETRY}
    params.update(kwargs)
    return litellm.completion(model=MODEL, messages=[{"role": "user", "content": text}], **params)


def raw_post(
    server: FakeLLMServer, body: dict[str, Any], path: str = "/v1/chat/completions"
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def user(text: str, system: str | None = None) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": text})
    return {"model": "fake-model", "messages": messages}


def content_of(raw: bytes) -> str | None:
    return json.loads(raw)["choices"][0]["message"]["content"]


# --- the server over raw HTTP ---------------------------------------------------------------


def test_models_endpoint_lists_models(llm_server: FakeLLMServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", llm_server.port, timeout=5)
    conn.request("GET", "/v1/models")
    resp = conn.getresponse()
    payload = json.loads(resp.read())
    conn.close()
    assert resp.status == 200
    assert [m["id"] for m in payload["data"]] == ["fake-model"]
    assert llm_server.models_request_count == 1
    assert llm_server.request_count == 0


def test_stream_true_is_refused_with_400(llm_server: FakeLLMServer) -> None:
    status, _, raw = raw_post(llm_server, {**user("hi"), "stream": True})
    assert status == 400
    assert "stream" in json.loads(raw)["error"]["message"]
    assert llm_server.last_request["stream"] is True


def test_unknown_path_and_bad_json(llm_server: FakeLLMServer) -> None:
    assert raw_post(llm_server, user("hi"), path="/v1/completions")[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", llm_server.port, timeout=5)
    conn.request("POST", "/v1/chat/completions", b"{not json", {"Content-Type": "application/json"})
    assert conn.getresponse().status == 400
    conn.close()


def test_default_echoes_and_first_matching_rule_wins(llm_server: FakeLLMServer) -> None:
    llm_server.script("capital", content="general")
    llm_server.script("capital of France", content="specific, but added second")
    llm_server.script("Paris", exact=True, content="exact only")
    assert content_of(raw_post(llm_server, user("What is the capital of France?"))[2]) == "general"
    assert content_of(raw_post(llm_server, user("unmatched text"))[2]) == "unmatched text"
    assert content_of(raw_post(llm_server, user("Paris"))[2]) == "exact only"
    assert content_of(raw_post(llm_server, user("Paris, France"))[2]) == "Paris, France"
    assert [r["rule"] for r in llm_server.requests] == [0, None, 2, None]
    llm_server.default(content="fixed")
    assert content_of(raw_post(llm_server, user("anything"))[2]) == "fixed"
    # Also reachable without the /v1 prefix.
    status, _, raw = raw_post(llm_server, user("x"), path="/chat/completions")
    assert (status, content_of(raw)) == (200, "fixed")


def test_last_user_message_and_system_condition(llm_server: FakeLLMServer) -> None:
    llm_server.script("weather", system="pirate", content="Arr, sunny")
    llm_server.script("weather", content="Sunny")
    assert content_of(raw_post(llm_server, user("weather?", system="You are a pirate"))[2]) == (
        "Arr, sunny"
    )
    assert content_of(raw_post(llm_server, user("weather?", system="Be formal"))[2]) == "Sunny"
    # Only the LAST user message is matched.
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": "Sunny"},
            {"role": "user", "content": [{"type": "text", "text": "and tomorrow?"}]},
        ],
    }
    assert content_of(raw_post(llm_server, body)[2]) == "and tomorrow?"


def test_sequence_cycles_over_repeated_requests(llm_server: FakeLLMServer) -> None:
    llm_server.script("count", sequence=["one", {"content": "two"}, {"status": 503}])
    results = []
    for _ in range(4):
        status, _, raw = raw_post(llm_server, user("count"))
        results.append(content_of(raw) if status == 200 else status)
    assert results == ["one", "two", 503, "one"]


def test_choices_random_is_seeded_and_weighted() -> None:
    draws = []
    for _ in range(2):
        with FakeLLMServer() as server:
            server.script("q", choices_random=(1234, [(0.8, "yes"), (0.2, "no")]))
            draws.append([content_of(raw_post(server, user("q"))[2]) for _ in range(200)])
    assert draws[0] == draws[1]
    counts = Counter(draws[0])
    assert set(counts) == {"yes", "no"}
    assert 130 <= counts["yes"] <= 190


def test_fail_times_then_success(llm_server: FakeLLMServer) -> None:
    llm_server.script("r", status=429, retry_after=3, fail_times=2, content="finally")
    first = raw_post(llm_server, user("r"))
    second = raw_post(llm_server, user("r"))
    third = raw_post(llm_server, user("r"))
    assert [first[0], second[0], third[0]] == [429, 429, 200]
    assert first[1]["Retry-After"] == "3"
    assert json.loads(first[2])["error"]["type"] == "rate_limit_exceeded"
    assert content_of(third[2]) == "finally"
    assert "Retry-After" not in third[1]
    assert [r["status"] for r in llm_server.requests] == [429, 429, 200]


def test_drift_switch_uses_drifted_alternative(llm_server: FakeLLMServer) -> None:
    llm_server.script("capital", content="Paris", drifted={"content": "Lyon"})
    llm_server.script("other", content="stable")
    assert content_of(raw_post(llm_server, user("capital"))[2]) == "Paris"
    llm_server.drift = True
    assert content_of(raw_post(llm_server, user("capital"))[2]) == "Lyon"
    assert content_of(raw_post(llm_server, user("other"))[2]) == "stable"


def test_reset_clears_records_but_keeps_script(llm_server: FakeLLMServer) -> None:
    llm_server.script("a", sequence=["1", "2"])
    raw_post(llm_server, user("a"))
    llm_server.reset()
    assert llm_server.request_count == 0 and llm_server.peak_in_flight == 0
    assert content_of(raw_post(llm_server, user("a"))[2]) == "1"  # rule counter restarted too
    llm_server.reset(script=True)
    assert content_of(raw_post(llm_server, user("a"))[2]) == "a"  # back to echo


def test_usage_defaults_and_override(llm_server: FakeLLMServer) -> None:
    llm_server.script("big", content="x" * 40, usage={"prompt_tokens": 7, "completion_tokens": 11})
    usage = json.loads(raw_post(llm_server, user("big"))[2])["usage"]
    assert usage == {"prompt_tokens": 7, "completion_tokens": 11, "total_tokens": 18}
    rough = json.loads(raw_post(llm_server, user("y" * 40))[2])["usage"]
    assert rough["prompt_tokens"] == 10 and rough["completion_tokens"] == 10


def test_stop_does_not_wait_for_a_hanging_request() -> None:
    server = FakeLLMServer().start()
    server.script("hang", hang=True)
    errors: list[BaseException] = []

    def client() -> None:
        try:
            raw_post(server, user("hang"))
        except BaseException as exc:  # the connection is closed by stop()
            errors.append(exc)

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while server.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.in_flight == 1
    server.stop()  # returns although a handler is blocked (else the test hits its timeout)
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert errors, "the hanging request must not have received an answer"


def test_latency_is_accurate_under_concurrency(llm_server: FakeLLMServer) -> None:
    llm_server.latency = 0.3
    durations: list[float] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        t0 = time.monotonic()
        status, _, _ = raw_post(llm_server, user(f"p{i}"))
        assert status == 200
        with lock:
            durations.append(time.monotonic() - t0)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(durations) == 30
    assert min(durations) >= 0.29  # every answer waited its latency
    # Concurrent, not serial: speed itself is measured in bench/, never asserted here.
    assert llm_server.peak_in_flight >= 10


# --- through LiteLLM ------------------------------------------------------------------------


def test_completion_returns_scripted_content_and_records_parameters(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("capital of France", content="Paris is the capital.")
    response = ask(
        llm_server, "What is the capital of France?", temperature=0, seed=7, max_tokens=50
    )
    assert response.choices[0].message.content == "Paris is the capital."
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.total_tokens == (
        response.usage.prompt_tokens + response.usage.completion_tokens
    )
    assert response.usage.completion_tokens == len("Paris is the capital.") // 4 + 1
    assert llm_server.request_count == 1
    req = llm_server.last_request
    assert req["path"] == "/v1/chat/completions"
    assert req["model"] == "fake-model"
    assert (req["temperature"], req["seed"], req["max_tokens"]) == (0, 7, 50)
    assert req["messages"] == [{"role": "user", "content": "What is the capital of France?"}]
    assert req["headers"]["has_authorization"] is True
    assert req["headers"]["auth_scheme"] == "Bearer"
    assert req["stream"] in (None, False)


def test_tool_calls_round_trip(llm_server: FakeLLMServer) -> None:
    llm_server.script(
        "weather", tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}]
    )
    response = ask(
        llm_server, "What's the weather in Paris?", tools=[WEATHER_TOOL], tool_choice="auto"
    )
    message = response.choices[0].message
    assert response.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.id.startswith("call_fake_")
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    req = llm_server.last_request
    assert req["tools"] == [WEATHER_TOOL]
    assert req["tool_choice"] == "auto"


def test_malformed_tool_arguments_are_passed_through_verbatim(llm_server: FakeLLMServer) -> None:
    llm_server.script("weather", tool_calls=[{"name": "get_weather", "arguments": '{"city": '}])
    response = ask(llm_server, "weather", tools=[WEATHER_TOOL])
    assert response.choices[0].message.tool_calls[0].function.arguments == '{"city": '


def test_response_format_is_forwarded(llm_server: FakeLLMServer) -> None:
    llm_server.script("json", content='{"answer": 42}')
    response = ask(llm_server, "json please", response_format={"type": "json_object"})
    assert json.loads(response.choices[0].message.content) == {"answer": 42}
    assert llm_server.last_request["response_format"] == {"type": "json_object"}


def test_keep_alive_connections_are_reused(llm_server: FakeLLMServer) -> None:
    for i in range(5):
        ask(llm_server, f"hello {i}")
    ports = {r["client_port"] for r in llm_server.requests}
    assert llm_server.request_count == 5
    assert len(ports) < 5


def test_env_fixture_points_litellm_at_the_server(llm_env: FakeLLMServer) -> None:
    llm_env.script("env", content="via environment")
    response = litellm.completion(
        model=MODEL, messages=[{"role": "user", "content": "env"}], max_retries=0
    )
    assert response.choices[0].message.content == "via environment"
    assert llm_env.request_count == 1


def test_acompletion_runs_concurrently(llm_server: FakeLLMServer) -> None:
    llm_server.script("slow", latency=0.2, sequence=[f"answer {i}" for i in range(20)])

    async def run() -> list[Any]:
        return await asyncio.gather(
            *(
                litellm.acompletion(
                    model=MODEL,
                    messages=[{"role": "user", "content": f"slow {i}"}],
                    api_base=llm_server.url,
                    api_key="sk-test",
                    max_retries=0,
                )
                for i in range(20)
            )
        )

    responses = asyncio.run(run())
    assert sorted(r.choices[0].message.content for r in responses) == sorted(
        f"answer {i}" for i in range(20)
    )
    assert llm_server.request_count == 20
    assert llm_server.peak_in_flight > 1


def test_rate_limit_error_exposes_status_and_retry_after(llm_server: FakeLLMServer) -> None:
    llm_server.script("limited", status=429, retry_after=7, error_message="slow down")
    with pytest.raises(litellm.RateLimitError) as info:
        ask(llm_server, "limited")
    exc = info.value
    assert exc.status_code == 429
    assert "slow down" in str(exc)
    assert exc.litellm_response_headers["retry-after"] == "7"
    # LiteLLM rebuilds exc.response without the provider's headers:
    assert exc.response.status_code == 429
    assert "retry-after" not in exc.response.headers
    assert llm_server.request_count == 1


@pytest.mark.parametrize(
    "kwargs", [{"max_retries": 0}, {"num_retries": 0}, {"max_retries": 0, "num_retries": 0}]
)
def test_retries_disabled_means_exactly_one_request(
    llm_server: FakeLLMServer, kwargs: dict[str, int]
) -> None:
    llm_server.script(None, status=500)
    with pytest.raises(litellm.InternalServerError):
        litellm.completion(
            model=MODEL,
            messages=[{"role": "user", "content": "x"}],
            api_base=llm_server.url,
            api_key="sk-test",
            **kwargs,
        )
    assert llm_server.request_count == 1

    async def run() -> None:
        await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "x"}],
            api_base=llm_server.url,
            api_key="sk-test",
            **kwargs,
        )

    with pytest.raises(litellm.InternalServerError):
        asyncio.run(run())
    assert llm_server.request_count == 2


def test_default_sdk_retries_three_requests_honouring_retry_after(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script("r", status=429, retry_after="0.1", fail_times=2, content="ok")
    response = litellm.completion(
        model=MODEL,
        messages=[{"role": "user", "content": "r"}],
        api_base=llm_server.url,
        api_key="sk-test",
    )
    assert response.choices[0].message.content == "ok"
    assert [r["headers"].get("x-stainless-retry-count") for r in llm_server.requests] == [
        "0",
        "1",
        "2",
    ]
    gaps = [
        b["received_at"] - a["received_at"]
        for a, b in zip(llm_server.requests[:-1], llm_server.requests[1:], strict=True)
    ]
    assert all(0.09 <= g < 1.0 for g in gaps)  # Retry-After: 0.1 honoured


@pytest.mark.parametrize(
    ("status", "exc_name"),
    [
        (400, "BadRequestError"),
        (404, "NotFoundError"),
        (500, "InternalServerError"),
        (502, "BadGatewayError"),
        (503, "ServiceUnavailableError"),
        (504, "Timeout"),
    ],
)
def test_http_errors_map_to_litellm_exceptions(
    llm_server: FakeLLMServer, status: int, exc_name: str
) -> None:
    llm_server.script(None, status=status)
    with pytest.raises(getattr(litellm, exc_name)) as info:
        ask(llm_server, "x")
    assert info.value.status_code == status
    assert llm_server.request_count == 1


def test_hang_with_timeout_raises_litellm_timeout(llm_server: FakeLLMServer) -> None:
    llm_server.script("hang", hang=True)
    started = time.monotonic()
    with pytest.raises(litellm.Timeout) as info:
        ask(llm_server, "hang", timeout=1)
    assert time.monotonic() - started >= 0.9  # the client waited its timeout, not less
    assert info.value.status_code == 408
    assert llm_server.request_count == 1
    # The client closed the connection; the handler notices and leaves.
    deadline = time.monotonic() + 2
    while llm_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    assert llm_server.in_flight == 0
    assert llm_server.last_request["status"] is None


def test_malformed_body_raises_internal_server_error(llm_server: FakeLLMServer) -> None:
    llm_server.script("broken", malformed=True)
    with pytest.raises(litellm.InternalServerError) as info:
        ask(llm_server, "broken")
    assert info.value.status_code == 500
    assert "Expecting value" in str(info.value)
    assert llm_server.last_request["status"] == 200


def test_empty_choices_and_null_content_do_not_raise(llm_server: FakeLLMServer) -> None:
    llm_server.script("empty", empty_choices=True)
    llm_server.script("null", null_content=True)
    assert ask(llm_server, "empty").choices == []
    response = ask(llm_server, "null")
    assert response.choices[0].message.content is None
    assert response.choices[0].message.tool_calls is None
    assert llm_server.request_count == 2
