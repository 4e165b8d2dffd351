"""LiteLLM's request set-up runs in the event loop's thread during the engine's calls to providers
whose set-up does no I/O, and in a thread pool for everything else (real LiteLLM, real local
server; where the set-up ran is observed with a profile hook on every thread, not patched)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from promptcanary.providers.litellm import LiteLLMProvider, import_litellm
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.test_litellm_bookkeeping import direct_completion, engine_call


@pytest.fixture
def setup_threads() -> Iterator[list[int]]:
    """Idents of the threads in which LiteLLM's synchronous ``completion`` (its request set-up)
    started while the test ran."""
    seen: list[int] = []
    main_module = sys.modules.get("litellm.main") or import_litellm().main
    code = main_module.completion.__wrapped__.__code__

    def hook(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code is code:
            seen.append(threading.get_ident())

    threading.setprofile(hook)  # threads started from now on (asyncio.run makes a new pool)
    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def run_in_new_loop(call: Callable[[], Any], executor: Any = None) -> tuple[Any, int]:
    """Run ``call()``'s coroutine in a fresh event loop; returns its result and the loop thread."""

    async def go() -> Any:
        if executor is not None:
            asyncio.get_running_loop().set_default_executor(executor)
        return await call()

    return asyncio.run(go()), threading.get_ident()


def test_our_call_runs_the_set_up_in_the_loop_thread(
    llm_server: FakeLLMServer, setup_threads: list[int]
) -> None:
    response, loop_thread = run_in_new_loop(engine_call(llm_server))

    assert response.content
    assert setup_threads == [loop_thread]


def test_other_litellm_calls_in_the_process_keep_the_thread_pool(
    llm_server: FakeLLMServer, setup_threads: list[int]
) -> None:
    litellm = import_litellm()
    run_in_new_loop(engine_call(llm_server))  # our executor is installed on that loop only

    async def direct() -> Any:
        # In a loop where our provider already installed its executor: still a pool thread.
        await engine_call(llm_server)()
        return await direct_completion(litellm, llm_server)

    setup_threads.clear()
    response, loop_thread = run_in_new_loop(direct)

    assert response.choices[0].message.content
    assert len(setup_threads) == 2
    ours, theirs = setup_threads
    assert ours == loop_thread
    assert theirs != loop_thread


def test_a_loop_with_its_own_default_executor_keeps_it(
    llm_server: FakeLLMServer, setup_threads: list[int]
) -> None:
    mine = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="mine")
    names: dict[int, str] = {}
    original_submit = mine.submit

    def submit(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def named() -> Any:
            names[threading.get_ident()] = threading.current_thread().name
            return fn(*args, **kwargs)

        return original_submit(named)

    mine.submit = submit  # type: ignore[method-assign]

    response, loop_thread = run_in_new_loop(engine_call(llm_server), executor=mine)

    assert response.content
    assert len(setup_threads) == 1
    assert setup_threads[0] != loop_thread
    assert names[setup_threads[0]].startswith("mine")


@pytest.mark.parametrize(
    ("model", "inline"),
    [
        ("openai/gpt-4o-mini", True),
        ("gpt-4o-mini", True),  # LiteLLM's default provider is OpenAI
        ("anthropic/claude-3-5-haiku-latest", True),
        ("hosted_vllm/llama", True),
        # Set-up may fetch credentials or model details over the network: keep the thread.
        ("vertex_ai/gemini-1.5-pro", False),
        ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", False),
        ("azure/my-deployment", False),
        ("ollama/llama3", False),
        ("no-such-provider/x", False),
    ],
)
def test_which_providers_run_the_set_up_inline(model: str, inline: bool) -> None:
    assert LiteLLMProvider(model)._inline_setup() is inline
