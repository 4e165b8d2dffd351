"""An asyncio event loop on a virtual clock: a sleep of an hour returns at once, in order.

Whenever nothing is ready to run, the loop jumps its clock to the next timer instead of waiting
for it, so coroutines that only sleep and wait on each other (no sockets, no threads) run as
they would on a real clock, deterministically and without wall time. For simulations of timing
arithmetic (the pacing against a token bucket): the clock hands its time to the code under test
(``Pacing(clock=...)``) and ``asyncio.sleep`` moves it.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualClock:
    """Seconds since the simulation began; only the loop's idle moments move it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class _JumpingSelector(selectors.SelectSelector):
    """Polls the loop's own wake-up pipe, then jumps the clock over the wait it was asked for."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # Nothing ready and no timer: on a virtual clock nothing can ever happen again.
            raise RuntimeError("virtual time: every task waits and no timer is set (deadlock)")
        self.clock.now += timeout
        return ready


class VirtualLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` is ``clock`` and whose idle waits take no time."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(_JumpingSelector(clock))
        self.clock = clock

    def time(self) -> float:
        return self.clock.now


def run_virtual(main: Coroutine[Any, Any, T], clock: VirtualClock) -> T:
    """Run ``main`` to completion on a :class:`VirtualLoop` over ``clock``."""
    with asyncio.Runner(loop_factory=lambda: VirtualLoop(clock)) as runner:
        return runner.run(main)
