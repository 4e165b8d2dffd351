"""Injectable ``sleep`` functions that record the requested delays instead of waiting."""

from __future__ import annotations

import asyncio


class Sleeps:
    """A ``sleep(seconds)`` for synchronous retry loops (GitHub client, data-branch pushes)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class AsyncSleeps:
    """An ``await sleep(delay)`` for the runner's backoff; it yields to the loop once, as a real
    sleep does, so other requests proceed meanwhile."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)
