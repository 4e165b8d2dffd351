"""Cancellation: a cancelled job (or one past ``timeout-minutes``) stops cleanly.

The runner signals the container (SIGINT, then SIGTERM, then a kill seconds later). The signal
handler only records the request and wakes the event loop: it never raises, so whatever runs
synchronously when the signal arrives (a ``git push`` of the data branch, a GitHub call, a report
file being written) finishes first. The step then stops sending model requests, never promotes,
writes what it has and completes its check run as cancelled
(:attr:`promptcanary_action.outcome.StepOutcome.cancelled`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Cancellation:
    """Whether, and why, the step was asked to stop; ``main()`` routes the signals here."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def requested(self) -> bool:
        return self.reason is not None

    def request(self, reason: str) -> None:
        """Ask the step to stop (the first reason is kept); safe from a signal handler."""
        if self.reason is None:
            self.reason = reason
        loop, event = self._loop, self._event
        if loop is not None and event is not None:
            # Thread-safe: wakes a loop blocked in select(), which a bare set() would not; a
            # closed loop (RuntimeError) has nothing left to stop.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    def install(self) -> None:
        """Route SIGINT and SIGTERM here (main thread only)."""
        for signum in SIGNALS:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.request(f"the job was cancelled ({signal.Signals(signum).name})")

    def stop_event(self) -> asyncio.Event:
        """The event the model requests of the running loop stop on (already set if asked)."""
        loop = asyncio.get_running_loop()
        if self._event is None or self._loop is not loop:
            self._event = asyncio.Event()
            self._loop = loop
        if self.requested:
            self._event.set()
        return self._event
