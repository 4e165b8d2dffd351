"""The limiter's arithmetic on a fake clock: budgets from rpm/tpm and from headers, the token
estimate corrected by usage, the margin after a 429 the budget did not foresee, the search for
the rate on 429s without headers (its arithmetic: test_rate_search.py), the scope's Retry-After
hold."""

from __future__ import annotations

import asyncio
import itertools
import math

import pytest

from promptcanary.core.run import pacing, rate_search
from promptcanary.core.run.pacing import Limiter, Pacing, TokenEstimate
from promptcanary.core.run.rate_headers import Budget, RateLimitHeaders


class FakeTime:
    """A clock that only the sleeps move."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def sends(limiter: Limiter, clock: FakeTime, n: int, tokens: int = 1) -> list[float]:
    """The clock's time at each of ``n`` requests let through one after another (each settled
    at once, with no news)."""

    async def go() -> list[float]:
        times = []
        for _ in range(n):
            ticket = await limiter.acquire(tokens, clock.sleep)
            times.append(clock.now)
            limiter.settle(ticket)
        return times

    return asyncio.run(go())


def headers(remaining: float, limit: float = 60, tokens: Budget | None = None) -> RateLimitHeaders:
    return RateLimitHeaders(Budget(limit=limit, remaining=remaining), tokens or Budget())


def test_a_limiter_that_knows_nothing_never_waits() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)
    assert limiter.idle
    sends(limiter, clock, 50)
    assert clock.sleeps == []


def test_rpm_paces_requests_after_a_seconds_burst() -> None:
    clock = FakeTime()
    limiter = Limiter("s", rpm=600, clock=clock)  # 10 per second, a burst of 10
    times = sends(limiter, clock, 30)
    assert times[9] == 1000.0  # the first 10 at once
    assert times[-1] - times[0] == pytest.approx(2.0)  # then 20 more at 10 per second
    gaps = [b - a for a, b in itertools.pairwise(times[10:])]
    assert all(g == pytest.approx(0.1) for g in gaps)


def test_tpm_paces_the_estimated_tokens() -> None:
    clock = FakeTime()
    limiter = Limiter("s", tpm=6000, clock=clock)  # 100 tokens per second, burst 100
    times = sends(limiter, clock, 5, tokens=50)
    # 100 at once (2 requests), then 50 tokens every 0.5 s.
    assert times[1] == times[0]
    assert times[-1] - times[0] == pytest.approx(1.5)
    assert "the tokens budget (from tpm:)" in limiter.stats.reasons


def test_headers_set_the_rate_and_what_is_left_less_what_is_in_flight() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)

    async def go() -> float:
        first = await limiter.acquire(1, clock.sleep)
        second = await limiter.acquire(1, clock.sleep)  # still in flight when `first` answers
        # 60 per minute, 2 left when the server answered: 1 of them is the second request's.
        limiter.settle(first, headers=headers(remaining=2))
        await limiter.acquire(1, clock.sleep)  # the one left
        started = clock.now
        await limiter.acquire(1, clock.sleep)  # then one per second
        limiter.settle(second)
        return clock.now - started

    assert asyncio.run(go()) == pytest.approx(1.0)
    assert limiter.from_headers
    assert "the requests budget (from the answers' headers)" in limiter.stats.reasons


def test_an_answer_lowers_the_count_to_what_it_says_but_never_raises_it() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)  # headers say 60 a minute: one a second

    def step() -> None:
        clock.now += 0.01

    limiter.settle(asyncio.run(limiter.acquire(1, clock.sleep)), headers=headers(remaining=10))
    bucket = limiter.buckets["requests"]
    step()
    a = asyncio.run(limiter.acquire(1, clock.sleep))
    step()
    b = asyncio.run(limiter.acquire(1, clock.sleep))
    step()
    # a's count includes a, maybe not b (still in flight): 8 or 9 now, 8 counted here.
    limiter.settle(a, headers=headers(remaining=9))
    assert bucket.level == pytest.approx(8.0, abs=0.05)
    step()
    # Another job spent the key: 3 left when b arrived.
    limiter.settle(b, headers=headers(remaining=3))
    assert bucket.level == pytest.approx(3.0, abs=0.05)
    step()
    c = asyncio.run(limiter.acquire(1, clock.sleep))
    step()
    # An answer saying more than is counted here is old news: not raised.
    limiter.settle(c, headers=headers(remaining=9))
    assert bucket.level == pytest.approx(2.0, abs=0.05)


def test_an_explicit_rpm_below_the_headers_limit_wins() -> None:
    clock = FakeTime()
    limiter = Limiter("s", rpm=30, clock=clock)
    ticket = sends(limiter, clock, 1)
    assert ticket
    first = asyncio.run(limiter.acquire(1, clock.sleep))
    limiter.settle(first, headers=headers(remaining=0, limit=600))
    assert limiter.buckets["requests"].rate == pytest.approx(0.5)


def test_the_token_estimate_is_corrected_by_usage() -> None:
    estimate = TokenEstimate()
    # Before any answer: 4 characters a token, the whole max_tokens for the completion.
    assert estimate.estimate(400, 256) == 100 + pacing.MESSAGE_OVERHEAD + 256
    estimate.learn(400, 50 + pacing.MESSAGE_OVERHEAD, 30)  # 8 characters a token, 30 out
    assert estimate.estimate(400, 256) == 50 + pacing.MESSAGE_OVERHEAD + 30
    estimate.learn(400, 50 + pacing.MESSAGE_OVERHEAD, 10)
    assert estimate.estimate(800, 256) == 100 + pacing.MESSAGE_OVERHEAD + 20
    assert estimate.estimate(800, 5) == 100 + pacing.MESSAGE_OVERHEAD + 5  # never past the cap


def test_usage_refunds_an_overestimate_to_the_token_bucket() -> None:
    clock = FakeTime()
    limiter = Limiter("s", tpm=6000, clock=clock)  # burst of 100 tokens
    ticket = asyncio.run(limiter.acquire(100, clock.sleep))
    assert limiter.buckets["tokens"].level == 0
    limiter.settle(ticket, used_tokens=30)
    assert limiter.buckets["tokens"].level == 70
    # An underestimate is charged: the bucket goes into debt and the next request waits.
    ticket = asyncio.run(limiter.acquire(70, clock.sleep))
    limiter.settle(ticket, used_tokens=120)
    assert limiter.buckets["tokens"].level == -50
    asyncio.run(limiter.acquire(10, clock.sleep))
    assert clock.sleeps[-1] == pytest.approx(0.6)


def test_a_429_burst_without_headers_decreases_the_rate_once() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)

    async def go() -> None:
        for _ in range(20):  # 20 answers over 1 s
            ticket = await limiter.acquire(1, clock.sleep)
            limiter.settle(ticket)
            clock.now += 0.05
        burst = [await limiter.acquire(1, clock.sleep) for _ in range(8)]
        for ticket in burst:  # all eight answered 429
            limiter.settle(ticket, rate_limited=True)

    asyncio.run(go())
    # 20 admitted over the last second: 0.9 x 20 per second, set once for the burst.
    assert limiter.rate == pytest.approx(rate_search.DECREASE * 20)
    assert limiter.stats.rate_limited == 8
    assert limiter.search.probing


def test_a_first_429_with_no_answers_only_holds() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    limiter.settle(ticket, rate_limited=True, retry_after=2.0)
    assert limiter.rate is None
    asyncio.run(limiter.acquire(1, clock.sleep))
    assert clock.sleeps == [2.0]


def test_retry_after_holds_new_requests_of_the_scope_but_not_the_retry() -> None:
    clock = FakeTime()
    limiter = Limiter("s", rpm=6000, clock=clock)
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    limiter.settle(ticket, rate_limited=True, retry_after=3.0)
    asyncio.run(limiter.acquire(1, clock.sleep, retry=True))
    assert clock.sleeps == []  # its own backoff already waited
    asyncio.run(limiter.acquire(1, clock.sleep))
    assert clock.sleeps == [3.0]
    assert limiter.stats.reasons == {"a 429's Retry-After": 3.0}


def test_models_on_one_scope_share_a_limiter_and_other_scopes_do_not() -> None:
    clock = FakeTime()
    shared = Pacing(clock=clock)
    a = shared.limiter("openai|https://api.openai.com|k1", rpm=60)
    assert shared.limiter("openai|https://api.openai.com|k1", rpm=600) is a
    other = shared.limiter("openai|https://api.openai.com|k2", rpm=60)
    assert other is not a
    # One budget for the first scope: two "models" asking through it wait for each other.
    times = sends(a, clock, 2) + sends(shared.limiter("openai|https://api.openai.com|k1"), clock, 2)
    assert times[-1] - times[0] == pytest.approx(3.0)
    assert sends(other, clock, 1) == [clock.now]  # its own, untouched budget


def test_a_cancelled_request_leaves_the_in_flight_count() -> None:
    clock = FakeTime()
    limiter = Limiter("s", rpm=60, clock=clock)
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    assert limiter.in_flight == [ticket]
    limiter.settle(ticket)
    limiter.settle(ticket)  # twice is harmless
    assert limiter.in_flight == []
    assert math.isclose(limiter.buckets["requests"].capacity, 1.0)


def test_before_the_first_answer_one_request_goes_and_the_others_wait_for_it() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock, first_answer_wait=60.0)

    async def go() -> list[str]:
        order: list[str] = []
        first = await limiter.acquire(1, clock.sleep, first_burst=8)
        order.append("first out")

        async def other(name: str) -> None:
            await limiter.acquire(1, clock.sleep, first_burst=8)
            order.append(name)

        others = [asyncio.ensure_future(other(f"other {i} out")) for i in range(3)]
        for _ in range(5):
            await asyncio.sleep(0)
        order.append("first answer")
        limiter.settle(first, headers=headers(remaining=10))  # room for all three
        await asyncio.gather(*others)
        return order

    assert asyncio.run(go()) == ["first out", "first answer"] + [f"other {i} out" for i in range(3)]
    # Once answered, nothing waits for it.
    asyncio.run(limiter.acquire(1, clock.sleep, first_burst=1))


def test_a_slow_first_answer_lets_one_runs_burst_go_after_the_wait() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock, first_answer_wait=0.01)

    async def go() -> list[str]:
        order: list[str] = []
        first = await limiter.acquire(1, clock.sleep, first_burst=2)

        async def other(name: str) -> None:
            await limiter.acquire(1, clock.sleep, first_burst=2)
            order.append(name)

        second = asyncio.ensure_future(other("second out"))
        await second  # the wait is over: one run's burst (2) may be in flight
        third = asyncio.ensure_future(other("third out"))
        await asyncio.sleep(0.05)
        order.append("first answer")
        limiter.settle(first, headers=headers(remaining=10))  # two in flight held the third
        await third
        return order

    assert asyncio.run(go()) == ["second out", "first answer", "third out"]


def test_a_429_although_the_budget_had_room_widens_the_spacing_then_it_narrows() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)  # headers: 60 a minute, one request of budget

    limiter.settle(asyncio.run(limiter.acquire(1, clock.sleep)), headers=headers(remaining=0))
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    assert clock.sleeps == [pytest.approx(1.0)]  # exact spacing: one a second
    # It arrived bunched with the one before (jitter): refused although the count said room.
    limiter.settle(ticket, headers=headers(remaining=0), rate_limited=True)
    assert limiter.margin == pytest.approx(pacing.WIDEN)
    clock.sleeps.clear()
    sends(limiter, clock, 3)
    # Each request now costs 1 + WIDEN: a second more between them, narrowing per answer.
    assert clock.sleeps[-1] == pytest.approx(1 + pacing.WIDEN * (1 - pacing.NARROW), rel=0.01)
    assert limiter.margin == pytest.approx(pacing.WIDEN * (1 - pacing.NARROW) ** 3)


def test_refusals_of_one_bunch_widen_once_and_the_margin_is_capped() -> None:
    clock = FakeTime()
    limiter = Limiter("s", rpm=600, clock=clock)  # rpm: known budget, so a 429 widens

    async def bunch() -> None:
        tickets = [await limiter.acquire(1, clock.sleep) for _ in range(4)]
        clock.now += 0.01
        for ticket in tickets:  # all four answered 429: one widening
            limiter.settle(ticket, rate_limited=True)

    asyncio.run(bunch())
    assert limiter.margin == pytest.approx(pacing.WIDEN)
    assert limiter.rate is None  # a known budget is not searched for
    for _ in range(30):
        asyncio.run(bunch())
    assert limiter.margin == pytest.approx(pacing.MAX_MARGIN)


def test_without_a_known_budget_a_429_searches_the_rate_and_adds_no_margin() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)
    limiter.search.started = clock.now
    limiter.search.admitted.extend([clock.now] * 10)
    clock.now += 1.0
    limiter.settle(asyncio.run(limiter.acquire(1, clock.sleep)), rate_limited=True)
    assert limiter.rate is not None
    assert limiter.margin == 0.0


def test_waits_for_the_first_answer_are_counted_with_their_reason() -> None:
    limiter = Limiter("s", first_answer_wait=60.0)  # the real clock: the wait is for an event

    async def go() -> float:
        first = await limiter.acquire(1, asyncio.sleep, first_burst=8)

        async def answer() -> None:
            await asyncio.sleep(0.05)
            limiter.settle(first)

        answering = asyncio.ensure_future(answer())
        second = await limiter.acquire(1, asyncio.sleep, first_burst=8)
        await answering
        return second.waits.get(pacing.FIRST_ANSWER_REASON, 0.0)

    assert asyncio.run(go()) > 0
    assert set(limiter.stats.reasons) == {pacing.FIRST_ANSWER_REASON}


def reset_headers(remaining: float, reset: float, limit: float = 300) -> RateLimitHeaders:
    return RateLimitHeaders(Budget(limit=limit, remaining=remaining, reset=reset))


def test_a_429_that_says_how_early_its_request_came_widens_to_what_it_needed() -> None:
    clock = FakeTime()
    limiter = Limiter("s", clock=clock)  # headers: 300 a minute, 5 a second, 0.2 s apart

    first = asyncio.run(limiter.acquire(1, clock.sleep))
    limiter.settle(first, headers=reset_headers(remaining=4, reset=0.2))  # holds 5: no margin
    assert limiter.margin == 0.0
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    # Refused 10 ms too early (it fits Retry-After later): 0.05 of a request's spacing.
    limiter.settle(ticket, rate_limited=True, retry_after=0.01)
    assert limiter.margin == pytest.approx(max(pacing.MIN_WIDEN, 0.05 * pacing.DEFICIT_SAFETY))
    # A refusal far too early for bunching (a whole spacing) widens by the flat step.
    clock.now += 1.0
    ticket = asyncio.run(limiter.acquire(1, clock.sleep))
    before = limiter.margin
    limiter.settle(ticket, rate_limited=True, retry_after=0.2)
    assert limiter.margin == pytest.approx(before + pacing.WIDEN)


def test_a_one_request_bucket_starts_with_a_margin_and_holds_what_it_says() -> None:
    def first_answer(remaining: float) -> Limiter:
        clock = FakeTime()
        limiter = Limiter("s", clock=clock)
        ticket = asyncio.run(limiter.acquire(1, clock.sleep))
        limiter.settle(ticket, headers=reset_headers(remaining, reset=0.2))
        return limiter

    # Nothing left, full again in 0.2 s at 5 a second: the server's bucket holds one request.
    tiny = first_answer(remaining=0)
    # One left, full in 0.2 s: it holds two, which absorbs requests arriving bunched.
    roomy = first_answer(remaining=1)
    assert tiny.margin == pytest.approx(pacing.TINY_BUCKET_MARGIN, rel=0.01)  # less one narrowing
    assert roomy.margin == 0.0
    assert tiny.buckets["requests"].capacity == pytest.approx(1.0)
    assert roomy.buckets["requests"].capacity == pytest.approx(2.0)
