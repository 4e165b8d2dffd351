"""LiteLLM's per-call cost calculation and success logging: skipped during the engine's own calls
when no LiteLLM callback is configured, untouched for everything else (real LiteLLM, real local
server; the skipped work is observed with a profile hook, not patched)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse
from promptcanary.providers.litellm import LiteLLMProvider, import_litellm
from tests.fakes.llm_server import FakeLLMServer

#: A model in LiteLLM's price table, so that a cost can be computed at all.
PRICED_MODEL = "openai/gpt-4o-mini"


def calls_of(function_name: str, action: Any) -> tuple[int, Any]:
    """How often a Python function named ``function_name`` ran during ``action()``."""
    seen = 0

    def hook(frame: FrameType, event: str, arg: object) -> None:
        nonlocal seen
        if event == "call" and frame.f_code.co_name == function_name:
            seen += 1

    sys.setprofile(hook)
    try:
        result = action()
    finally:
        sys.setprofile(None)
    return seen, result


@pytest.fixture
def litellm() -> Iterator[Any]:
    module = import_litellm()
    yield module
    module.callbacks = []


def engine_call(server: FakeLLMServer, text: str = "hi") -> Callable[[], Awaitable[LLMResponse]]:
    """One call through the engine's provider, to be awaited in the caller's event loop."""
    provider = LiteLLMProvider(PRICED_MODEL, api_base=server.url, api_key="sk-test")

    async def call() -> LLMResponse:
        try:
            return await provider.acomplete(CanaryPrompt(id="p", text=text), timeout=10)
        finally:
            await provider.aclose()

    return call


async def direct_completion(litellm: Any, server: FakeLLMServer) -> Any:
    """The same request made with LiteLLM directly, not through the engine."""
    return await litellm.acompletion(
        model=PRICED_MODEL,
        messages=[{"role": "user", "content": "hi"}],
        api_base=server.url,
        api_key="sk-test",
    )


def our_call(server: FakeLLMServer, text: str = "hi") -> LLMResponse:
    return asyncio.run(engine_call(server, text)())


def direct_call(litellm: Any, server: FakeLLMServer) -> Any:
    return asyncio.run(direct_completion(litellm, server))


def test_our_calls_skip_the_cost_calculation(litellm: Any, llm_server: FakeLLMServer) -> None:
    our_call(llm_server)  # warm-up: first-call imports are not the point here

    costed, response = calls_of("completion_cost", lambda: our_call(llm_server))

    assert response.content
    assert costed == 0


def test_other_litellm_calls_in_the_process_still_get_their_cost(
    litellm: Any, llm_server: FakeLLMServer
) -> None:
    our_call(llm_server)

    costed, response = calls_of("completion_cost", lambda: direct_call(litellm, llm_server))

    assert costed >= 1
    cost = response._hidden_params.get("response_cost")
    assert isinstance(cost, float) and cost > 0


def test_a_configured_callback_still_sees_our_calls_with_their_cost(
    litellm: Any, llm_server: FakeLLMServer
) -> None:
    from litellm.integrations.custom_logger import CustomLogger

    events: list[dict[str, Any]] = []

    class Recorder(CustomLogger):  # type: ignore[misc]
        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):  # type: ignore[no-untyped-def]
            events.append(kwargs)

    litellm.callbacks = [Recorder()]

    our_call(llm_server, "callback check")

    # Only this call's event: a task another test left queued in LiteLLM may be delivered too.
    ours = [
        e for e in events if e.get("messages") == [{"role": "user", "content": "callback check"}]
    ]
    assert len(ours) == 1, events
    assert isinstance(ours[0].get("response_cost"), float)
