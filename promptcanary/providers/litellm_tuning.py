"""Work LiteLLM does on every call that the engine does not need, skipped during our calls only.

A run at concurrency 16 on a two-core machine is bound by the client's CPU per request, most of
it LiteLLM's. Three costs are avoidable, each only while one of *our* calls runs (a context
variable set by :func:`our_call`), so any other use of LiteLLM in the same process is unchanged:

* **Pricing and success logging.** LiteLLM prices every answer (a model-table lookup) and queues
  a logging task for its callbacks; the engine reads neither. Both are skipped while no LiteLLM
  callback is configured (:func:`skip_unused_bookkeeping`).
* **A thread per request for the set-up.** ``litellm.acompletion`` runs its synchronous request
  set-up (``completion(..., acompletion=True)``: parameter mapping, logging object, client
  look-up; it only builds the request's coroutine) in the event loop's default thread pool. That
  thread contends with the event loop for the GIL, and under concurrency the hand-offs, not the
  work, dominate: a request reached the server ~15-20 ms after it was started at c=16. For
  providers whose set-up is pure computation (a static API key; :data:`INLINE_SETUP_PROVIDERS`)
  the set-up runs in the loop's own thread instead (:class:`SetupInLoopThread`). Providers whose
  set-up may fetch credentials over the network (Vertex AI, Bedrock, Azure AD, watsonx, …) keep
  the thread: a hung token fetch there must not stall the whole run.

Everything here is an optimisation: a LiteLLM without these internals, or a loop with its own
default executor, is left as it is.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: Providers (LiteLLM's ``custom_llm_provider``) authenticated by a static key or none, whose
#: request set-up does no I/O, so it may run in the event loop's thread.
INLINE_SETUP_PROVIDERS = frozenset(
    {
        "openai",
        "custom_openai",
        "hosted_vllm",
        "litellm_proxy",
        "anthropic",
        "gemini",
        "mistral",
        "groq",
        "deepseek",
        "together_ai",
        "fireworks_ai",
        "openrouter",
        "xai",
        "perplexity",
        "deepinfra",
        "cerebras",
    }
)

#: True inside one of our calls (asyncio tasks copy it into what LiteLLM starts).
_in_our_call: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "promptcanary_litellm_call", default=False
)
#: True inside one of our calls whose provider is in INLINE_SETUP_PROVIDERS.
_setup_inline: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "promptcanary_litellm_setup_inline", default=False
)
_lock = threading.Lock()
_UNKNOWN = object()


@contextlib.contextmanager
def our_call(*, inline_setup: bool) -> Iterator[None]:
    """Mark the enclosed LiteLLM call as the engine's (see the module docstring)."""
    call = _in_our_call.set(True)
    inline = _setup_inline.set(inline_setup)
    try:
        yield
    finally:
        _setup_inline.reset(inline)
        _in_our_call.reset(call)


def skip_unused_bookkeeping(litellm: Any, utils: Any, logging_class: Any) -> None:
    """Wrap LiteLLM's per-call cost calculation (``Logging.response_cost_calculator``) and its
    success-logging task (``utils._client_async_logging_helper``) so that they do nothing during
    our calls while no callback is configured (they feed only callbacks and the response's hidden
    ``response_cost``, which the engine never reads). Installed once per process: a second call
    finds its own wrapper in place and leaves it."""
    with _lock:
        calculate = getattr(logging_class, "response_cost_calculator", None)
        log_success = getattr(utils, "_client_async_logging_helper", None)
        if calculate is None or log_success is None or getattr(calculate, "_promptcanary", False):
            return

        def unused() -> bool:
            return _in_our_call.get() and not (
                litellm.callbacks or litellm.success_callback or litellm._async_success_callback
            )

        def response_cost_calculator(self: Any, *args: Any, **kwargs: Any) -> Any:
            return None if unused() else calculate(self, *args, **kwargs)

        async def client_async_logging_helper(*args: Any, **kwargs: Any) -> None:
            if not unused():
                await log_success(*args, **kwargs)

        response_cost_calculator._promptcanary = True  # type: ignore[attr-defined]
        logging_class.response_cost_calculator = response_cost_calculator
        utils._client_async_logging_helper = client_async_logging_helper


class SetupInLoopThread(concurrent.futures.ThreadPoolExecutor):
    """An event loop's default executor that runs LiteLLM's request set-up for our calls (of
    providers in :data:`INLINE_SETUP_PROVIDERS`) in the calling thread, and everything else
    (DNS look-ups, other code's ``run_in_executor(None, …)``) in its thread pool as usual.

    ``setup_function`` is LiteLLM's ``completion``, which ``acompletion`` submits wrapped as
    ``partial(context.run, partial(completion, …))``.
    """

    def __init__(self, setup_function: Callable[..., Any]) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self._setup_function = setup_function

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not _setup_inline.get() or not self._is_setup(fn):
            return super().submit(fn, *args, **kwargs)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            result = fn()
        except Exception as exc:  # delivered to the awaiting call exactly as from a thread
            future.set_exception(exc)
        else:
            future.set_result(result)
        return future

    def _is_setup(self, fn: Callable[..., Any]) -> bool:
        inner = fn.args[0] if isinstance(fn, functools.partial) and len(fn.args) == 1 else None
        return isinstance(inner, functools.partial) and inner.func is self._setup_function


def use_setup_executor(loop: Any, setup_function: Callable[..., Any]) -> None:
    """Make :class:`SetupInLoopThread` the loop's default executor, unless the loop already has
    one (a caller's own executor is kept; the set-up then runs in its threads as before)."""
    current = getattr(loop, "_default_executor", _UNKNOWN)
    if current is None:
        loop.set_default_executor(SetupInLoopThread(setup_function))
