"""The start of a rate-limit scope: how many requests go out before anything says its budget.

* **Before the scope's first answer** one request goes; the others wait for its answer (whose
  headers may say the budget), at most ``first_answer_wait`` seconds each, after which one
  run's concurrency (``first_burst``) may be in flight, so runs starting together on one key
  do not add up their bursts.
* **The first answer says the budget** (rate-limit headers, or ``rpm:``/``tpm:``): the gate
  opens; the budget paces from then on.
* **It says nothing** (no headers): the server may have no limit (a local model) or one it
  keeps to itself. The requests waiting then leave one every :data:`SPACING` seconds (the
  requests in flight may grow by one per spacing) until the first 429, which opens the gate
  for the rate search (:mod:`.rate_search`) to pace. A 429 comes back faster than an answer
  (the server refuses before it computes), so against a bucket of one or two requests' budget
  a few are refused, not the whole burst (every run's concurrency on the key together: 15 of
  16 at once, measured). Against a server without a limit the burst is spread over
  ``SPACING x concurrency`` (0.1 s at 16) once per scope; the client spends a few
  milliseconds of CPU on each request it sends anyway. Growing in flight per answer instead (a
  slow start, fourfold per round trip) cost such a server about a round trip more in the
  simulation (``tests/fakes/rate_sim.py``: +6.7% of 200 requests at 16 in flight, against
  +2.4% for the spread).

Waiting is on asyncio events and timers of the running loop; the limiter's clock measures it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import Callable

SPACING = 0.007
"""Seconds between the requests that leave after a first answer without rate-limit headers."""
RAMP_REASON = "the key's first answers (no rate-limit headers: the first burst spread out)"
"""Why requests wait for room while the first burst is spread out."""


class StartGate:
    """How many requests of one scope may be in flight while its budget is unknown."""

    def __init__(self, first_answer_wait: float, clock: Callable[[], float]) -> None:
        self.first_answer_wait = first_answer_wait
        self.clock = clock
        self.open = False
        """Nothing holds the scope's requests any more (a budget is known, or a 429 came)."""
        self.answered_at: float | None = None
        """The clock's time at the scope's first answer."""
        self._news: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._queue: deque[object] = deque()
        """The waiting requests' turns, in the order they asked."""

    def window(self, now: float) -> float:
        """Requests that may be in flight at the clock's time ``now``."""
        if self.open:
            return math.inf
        if self.answered_at is None:
            return 1.0
        # Whole steps, each a little early: a float's rounding must not let two out at once.
        return 1.0 + math.floor((now - self.answered_at) / SPACING + 1e-9)

    async def wait(self, in_flight: Callable[[], int], first_burst: int) -> tuple[float, float]:
        """Wait, first come first out, until ``in_flight()`` is below the window: the seconds
        waited for the first answer, and then for room in the spread burst (on the gate's
        clock; the first answer's timeout on the loop's)."""
        loop = asyncio.get_running_loop()
        started, clocked = loop.time(), self.clock()
        first = spread = 0.0
        turn = object()
        self._queue.append(turn)
        try:
            while True:
                head = self._queue[0] is turn
                if self.answered_at is None and not self.open:
                    # A slow first answer must not hold the run for long: after the wait,
                    # one run's concurrency may be in flight.
                    left = started + self.first_answer_wait - loop.time()
                    most = 1 if left > 0 else first_burst
                    if head and in_flight() < most:
                        return self.clock() - clocked, 0.0
                    await self._news_or(left if head and left > 0 else None)
                    first = self.clock() - clocked
                    continue
                if head and in_flight() < self.window(self.clock()):
                    return first, spread
                room = self._next_room(in_flight()) if head else None
                await self._news_or(room)
                if not self.open:  # once open, the line moves at once
                    spread = self.clock() - clocked - first
        finally:
            self._queue.remove(turn)
            self._notify()  # the next in line may go

    def _next_room(self, in_flight: int) -> float | None:
        """Seconds until the window holds one more than ``in_flight`` (``None``: only news)."""
        if self.open or self.answered_at is None:
            return None
        return max(self.answered_at + in_flight * SPACING - self.clock(), 1e-6)

    def settled(self, *, known: bool, rate_limited: bool) -> None:
        """One of the scope's requests is over (answered, failed or given up): ``known`` when a
        budget is known now."""
        if self.answered_at is None:
            self.answered_at = self.clock()
        if known or rate_limited:
            self.open = True
        self._notify()  # the gate opened or a request left the flight

    def _notify(self) -> None:
        if self._news is not None:
            self._news[1].set()
            self._news = None

    async def _news_or(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        if self._news is None or self._news[0] is not loop:
            self._news = (loop, asyncio.Event())
        with contextlib.suppress(TimeoutError):  # the time it waited for has come
            await asyncio.wait_for(self._news[1].wait(), timeout)
