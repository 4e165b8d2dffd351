"""The start of a scope on a virtual clock: one request before the first answer, then the rest
at once when a budget is known, spread out when nothing is, and the gate open at a 429."""

from __future__ import annotations

import asyncio

import pytest

from promptcanary.core.run import rate_start
from promptcanary.core.run.pacing import FIRST_ANSWER_REASON, Limiter
from promptcanary.core.run.rate_headers import Budget, RateLimitHeaders
from tests.fakes.virtual_time import VirtualClock, run_virtual


def known_budget() -> RateLimitHeaders:
    return RateLimitHeaders(Budget(limit=6000, remaining=100, reset=0.01))


async def burst(limiter: Limiter, clock: VirtualClock, n: int, **first: object) -> list[float]:
    """``n`` requests asked at once (one run's concurrency ``n``); the first is answered 50 ms
    after it goes (with ``first``'s keywords), the others stay in flight. When each went, in
    seconds after the first."""
    start = clock.now
    sent: list[float] = []

    async def one() -> None:
        ticket = await limiter.acquire(1, asyncio.sleep, first_burst=n)
        sent.append(clock.now - start)
        if len(sent) == 1:
            await asyncio.sleep(0.05)
            limiter.settle(ticket, **first)  # type: ignore[arg-type]

    await asyncio.gather(*(one() for _ in range(n)))
    return sent


def test_a_first_answer_with_headers_lets_the_rest_go_at_once() -> None:
    clock = VirtualClock()
    limiter = Limiter("s", clock=clock)

    sent = run_virtual(burst(limiter, clock, 6, headers=known_budget()), clock)

    assert sent == [0.0] + [pytest.approx(0.05)] * 5
    assert limiter.start.open
    assert limiter.stats.reasons[FIRST_ANSWER_REASON] == pytest.approx(5 * 0.05)


def test_a_first_answer_without_headers_spreads_the_rest_out() -> None:
    clock = VirtualClock()
    limiter = Limiter("s", clock=clock)

    sent = run_virtual(burst(limiter, clock, 6), clock)

    # After the answer at 50 ms, one request leaves every SPACING seconds.
    spacing = rate_start.SPACING
    assert sent == [0.0] + [pytest.approx(0.05 + i * spacing) for i in range(5)]
    assert not limiter.start.open
    assert limiter.stats.reasons[rate_start.RAMP_REASON] == pytest.approx(
        sum(i * spacing for i in range(5))
    )


def test_a_429_opens_the_gate_for_the_rate_search() -> None:
    clock = VirtualClock()
    limiter = Limiter("s", clock=clock)

    async def go() -> list[float]:
        first = await limiter.acquire(1, asyncio.sleep, first_burst=8)
        limiter.settle(first)  # answered, no headers: the spread begins
        spread = [await limiter.acquire(1, asyncio.sleep, first_burst=8) for _ in range(2)]
        limiter.settle(spread[0], rate_limited=True, retry_after=0.2)
        start = clock.now
        # Open: the next requests are paced by the rate the 429 seeded, not by the spread.
        await limiter.acquire(1, asyncio.sleep, first_burst=8, retry=True)
        return [start, clock.now]

    start, after = run_virtual(go(), clock)
    assert limiter.start.open
    assert limiter.rate is not None
    assert after == pytest.approx(start)  # the seeded schedule begins at the 429


def test_requests_after_the_spread_are_not_held() -> None:
    clock = VirtualClock()
    limiter = Limiter("s", clock=clock)

    async def go() -> float:
        first = await limiter.acquire(1, asyncio.sleep, first_burst=8)
        limiter.settle(first)
        await asyncio.sleep(1.0)  # the window has grown past any concurrency
        start = clock.now
        await asyncio.gather(*(limiter.acquire(1, asyncio.sleep, first_burst=8) for _ in range(8)))
        return clock.now - start

    assert run_virtual(go(), clock) == 0.0
