"""The time a request spends on the wire: from handing it to the HTTP client until its answer's
body has arrived.

The latency a run reports is this time, not the whole LiteLLM call: a client's first call also
builds its HTTP client, imports the provider's modules and compiles response models (≈0.1–1 s),
which says nothing about the model and made the first answer of every run look slow. Connection
set-up (TCP, TLS) stays in: a real client pays it too. ``httpx`` (under LiteLLM and the OpenAI
SDK) is handed in, not imported, so this module imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Iterator
from typing import Any

_durations: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "promptcanary_wire_durations", default=None
)
_patched: set[type] = set()


def time_sends(client_classes: tuple[type, ...]) -> None:
    """Wrap ``send`` of each httpx client class (once) to record its duration when measured."""
    for cls in client_classes:
        if cls in _patched:
            continue
        _patched.add(cls)
        original = cls.send  # type: ignore[attr-defined]  # an httpx client class
        timed = _timed_async(original) if _is_coroutine(original) else _timed_sync(original)
        setattr(cls, "send", timed)  # noqa: B010  # mypy cannot see send on a bare type


def _is_coroutine(fn: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(fn)


def _timed_async(original: Any) -> Any:
    @functools.wraps(original)
    async def send(self: Any, *args: Any, **kwargs: Any) -> Any:
        durations = _durations.get()
        started = time.perf_counter()
        try:
            return await original(self, *args, **kwargs)
        finally:
            if durations is not None:
                durations.append(time.perf_counter() - started)

    return send


def _timed_sync(original: Any) -> Any:
    @functools.wraps(original)
    def send(self: Any, *args: Any, **kwargs: Any) -> Any:
        durations = _durations.get()
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            if durations is not None:
                durations.append(time.perf_counter() - started)

    return send


@contextlib.contextmanager
def measured() -> Iterator[list[float]]:
    """Collect the durations (seconds) of the sends made inside this block (this task only)."""
    durations: list[float] = []
    token = _durations.set(durations)
    try:
        yield durations
    finally:
        _durations.reset(token)
