"""Pacing to a provider's rate limit: one limiter per rate-limit scope (provider, key, endpoint).

Every model sent with the same key to the same endpoint shares the provider's budget, so they
share one :class:`Limiter` (a :class:`Pacing` holds one per scope). A limiter paces two budgets,
requests and tokens, each a bucket that refills continuously at its limit per minute:

* **The budget** comes from ``rpm:`` / ``tpm:`` (the model mapping), or is learnt from the
  answers' rate-limit headers (:mod:`.rate_headers`): their limit sets the refill rate; the
  first answer's remaining, less what is still in flight, the level; remaining plus the refill
  until the ``reset`` time, what the bucket holds (so a late request may make up for the time
  it lost where the server's bucket would have kept it too). Later answers only lower
  it, to what they say is left (another job spending the key): their count is old and rounded
  down, and re-setting the level from it at every answer kept the bucket below the server's,
  which refused nothing but wasted whatever it could not hold.
* **Tokens** are counted before sending: the prompt's characters over the characters per token
  seen so far (4 until an answer's usage says), plus the completion tokens seen so far (the
  ``max_tokens`` cap until one is seen). The answer's usage then corrects the bucket.
* **No headers and no ``rpm:``**: nothing is paced until a 429; then the rate is searched for
  as TCP finds a window (:mod:`.rate_search`). Every 429's ``Retry-After`` holds the whole
  scope, not only the request that got it.

**A 429 although the budget said there was room** (headers or ``rpm:``/``tpm:`` known): the
server's bucket is smaller than the jitter between requests (requests sent evenly arrive
bunched). Every request then costs a margin more, which widens the spacing: its
``Retry-After`` says how early the request came, and the margin becomes what that request
needed, half as much again (a margin grown a tenth per 429 swung between 7% and 20% over a
one-request bucket); a 429 that says nothing adds a tenth; at most twice the cost. The margin
shrinks by 0.2% of itself per answer, so it settles where such 429s are rare, and a bucket
that holds a single request (no bunching absorbed at all) starts with 5%.

Before a scope's budget is known, :mod:`.rate_start` decides how many requests go: one until
the first answer, then all (its headers said the budget) or a few milliseconds apart (they did
not), so that no blind burst meets a server holding a fraction of a second of budget.

Pure: the clock and the sleep are parameters. A limiter that knows nothing costs nothing.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from promptcanary.core.run.rate_headers import Budget, RateLimitHeaders
from promptcanary.core.run.rate_search import RateSearch
from promptcanary.core.run.rate_start import RAMP_REASON, StartGate

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[object]]

CHARS_PER_TOKEN = 4.0
"""Characters per prompt token assumed until an answer's usage says otherwise."""
MESSAGE_OVERHEAD = 8
"""Tokens a chat request adds to its texts (roles, separators)."""
PACED_BURST_SECONDS = 1.0
"""With ``rpm:``/``tpm:`` and no headers, at most this many seconds of budget go out at once."""
EPSILON = 1e-6
"""Waits shorter than this (seconds) are not waited."""
FIRST_ANSWER_WAIT = 2.0
"""Seconds the requests after a scope's first wait for its answer before going out anyway."""
FIRST_ANSWER_REASON = "the key's first answer (its headers say the budget)"
"""Why requests before a scope's first answer wait."""
WIDEN = 0.1
"""A 429 although the budget said there was room adds this share of a request's cost."""
MAX_MARGIN = 1.0
"""The margin never adds more than this share (the spacing at most doubles)."""
NARROW = 0.002
"""Share of the margin taken off per answer that was not a 429."""
TINY_BUCKET = 2.0
"""A server bucket holding fewer requests than this absorbs no bunching of their arrivals."""
TINY_BUCKET_MARGIN = 0.05
"""The margin a tiny bucket starts with (requests sent evenly arrive a few ms bunched)."""
DEFICIT_SAFETY = 1.5
"""A 429 that says how early its request came widens to this multiple of what it needed."""
MIN_WIDEN = 0.02
"""Such a 429 adds at least this share to the margin its request was sent with."""


class _Bucket:
    """One budget: refills at ``rate`` per second up to ``capacity``; may go into debt."""

    def __init__(self, rate: float, capacity: float, level: float, now: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.level = level
        self.stamp = now

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` (at most the capacity) is in the bucket."""
        self.refill(now)
        need = min(cost, self.capacity) - self.level
        return need / self.rate if need > 0 else 0.0


@dataclass
class TokenEstimate:
    """A request's tokens before it is sent, corrected by what answers' usage reports."""

    chars: int = 0
    prompt_tokens: int = 0
    completions: int = 0
    completion_tokens: int = 0

    def estimate(self, prompt_chars: int, max_tokens: int) -> int:
        per_token = self.chars / self.prompt_tokens if self.prompt_tokens else CHARS_PER_TOKEN
        completion = (
            min(max_tokens, math.ceil(self.completion_tokens / self.completions))
            if self.completions
            else max_tokens
        )
        return math.ceil(prompt_chars / per_token) + MESSAGE_OVERHEAD + completion

    def learn(self, prompt_chars: int, prompt_tokens: int | None, completion: int | None) -> None:
        if prompt_tokens:
            self.chars += max(prompt_chars, 1)
            self.prompt_tokens += max(prompt_tokens - MESSAGE_OVERHEAD, 1)
        if completion is not None:
            self.completions += 1
            self.completion_tokens += completion


@dataclass
class Ticket:
    """One request let through: when, and the tokens it was counted for."""

    sent_at: float
    tokens: int
    margin: float = 0.0
    """The limiter's margin when the request went (see :meth:`Limiter._widen`)."""
    waits: dict[str, float] = field(default_factory=dict)
    """Seconds it waited, by what made it wait."""
    settled: bool = False

    @property
    def waited(self) -> float:
        return sum(self.waits.values())


@dataclass
class PacingStats:
    """What one scope's limiter did: for the log and ``run.json``."""

    waited: float = 0.0
    """Seconds requests spent waiting for the budget, summed over requests."""
    rate_limited: int = 0
    """Answers with HTTP 429."""
    reasons: dict[str, float] = field(default_factory=dict)
    """Seconds waited, by the budget that made them wait."""


class Limiter:
    """The pacing of one rate-limit scope (see the module's docstring)."""

    def __init__(
        self,
        scope: str,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        clock: Clock = time.monotonic,
        first_answer_wait: float = FIRST_ANSWER_WAIT,
    ) -> None:
        self.scope = scope
        self.clock = clock
        self.first_answer_wait = first_answer_wait
        now = clock()
        self.configured = {"requests": rpm, "tokens": tpm}
        self.buckets: dict[str, _Bucket] = {}
        for name, per_minute in self.configured.items():
            if per_minute:
                rate = per_minute / 60
                burst = max(1.0, rate * PACED_BURST_SECONDS)
                self.buckets[name] = _Bucket(rate, burst, burst, now)
        self.tokens = TokenEstimate()
        self.stats = PacingStats()
        self.from_headers = False
        self.search = RateSearch(now)
        """The rate found by 429s, when nothing says the budget."""
        self.held_until = 0.0
        self.margin = 0.0
        """Share of a request's cost charged on top (see the module's docstring)."""
        self.widened = -math.inf
        self.in_flight: list[Ticket] = []
        self._synced = -math.inf
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self.start = StartGate(first_answer_wait, clock)

    # ── before a request ──

    @property
    def rate(self) -> float | None:
        """The rate found by 429s (requests per second); ``None`` while it is not searched."""
        return self.search.rate

    @property
    def idle(self) -> bool:
        """Nothing known yet: requests go out unpaced."""
        return not self.buckets and self.rate is None and self.held_until <= 0.0

    def delay(self, tokens: int, now: float, *, retry: bool = False) -> tuple[float, str]:
        """Seconds the next request must wait, and which budget makes it wait. A retry is not
        held by a 429's ``Retry-After``: its own backoff waited for it."""
        waits = [(0.0 if retry else self.held_until - now, "a 429's Retry-After")]
        searched = self.search.delay(now)
        if searched is not None:
            waits.append((searched, "the rate found by 429s (no rate-limit headers)"))
        for name, bucket in self.buckets.items():
            cost = 1.0 if name == "requests" else float(tokens)
            source = "the answers' headers" if self.from_headers else f"{name[0]}pm:"
            waits.append((bucket.wait(cost, now), f"the {name} budget (from {source})"))
        return max(waits, key=lambda w: w[0])

    async def acquire(
        self, tokens: int, sleep: Sleep, *, retry: bool = False, first_burst: int | None = None
    ) -> Ticket:
        """Wait until the budget lets a request of ``tokens`` tokens out, then count it.

        While nothing says the scope's budget, the start gate (:mod:`.rate_start`) bounds the
        requests in flight: one until the first answer (at most ``first_answer_wait``
        seconds, then ``first_burst``: one run's concurrency), then, if that answer said no
        budget, one more every few milliseconds until a 429."""
        waits: dict[str, float] = {}
        if first_burst is not None and not self.start.open:
            first, ramp = await self.start.wait(lambda: len(self.in_flight), first_burst)
            self._count(waits, FIRST_ANSWER_REASON, first)
            self._count(waits, RAMP_REASON, ramp)
        if not self.idle:
            async with self._loop_lock():
                while True:
                    wait, reason = self.delay(tokens, self.clock(), retry=retry)
                    if wait <= EPSILON:  # rounding must not leave a waiter spinning
                        break
                    self._count(waits, reason, wait)
                    await sleep(wait)
        ticket = self._take(tokens)
        ticket.waits = waits
        return ticket

    def _count(self, waits: dict[str, float], reason: str, seconds: float) -> None:
        if seconds > 0:
            waits[reason] = waits.get(reason, 0.0) + seconds
            self.stats.waited += seconds
            self.stats.reasons[reason] = self.stats.reasons.get(reason, 0.0) + seconds

    def _take(self, tokens: int) -> Ticket:
        now = self.clock()
        self.search.take(now)
        for name, bucket in self.buckets.items():
            bucket.refill(now)
            bucket.level -= (1.0 if name == "requests" else float(tokens)) * (1 + self.margin)
        ticket = Ticket(sent_at=now, tokens=tokens, margin=self.margin)
        self.in_flight.append(ticket)
        return ticket

    def _loop_lock(self) -> asyncio.Lock:
        # One lock per event loop: a Pacing may outlive the loop of a blocking run.
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    # ── after the answer ──

    def settle(
        self,
        ticket: Ticket,
        *,
        headers: RateLimitHeaders | None = None,
        used_tokens: int | None = None,
        rate_limited: bool = False,
        retry_after: float | None = None,
    ) -> None:
        """Account for an answer (or a failure) to the request of ``ticket``."""
        if ticket.settled:
            return
        ticket.settled = True
        self.in_flight.remove(ticket)
        now = self.clock()
        tokens = self.buckets.get("tokens")
        if tokens is not None and used_tokens is not None:
            tokens.refill(now)
            tokens.level += ticket.tokens - used_tokens  # the estimate corrected by usage
        # A slow answer's headers are older than those of a request sent after it.
        if headers is not None and headers.known and ticket.sent_at >= self._synced:
            self._synced = ticket.sent_at
            self._learn(headers, now, ticket.sent_at)
        self.start.settled(known=bool(self.buckets), rate_limited=rate_limited)
        if rate_limited:
            self.stats.rate_limited += 1
            if retry_after is not None and retry_after > 0:
                self.held_until = max(self.held_until, now + retry_after)
            if self.from_headers or self.configured["requests"]:
                self._widen(ticket, now, retry_after)
            else:
                self.search.decrease(ticket.sent_at, now, retry_after)
        else:
            self.margin *= 1 - NARROW
            self.search.increase(now)

    def _learn(self, headers: RateLimitHeaders, now: float, sent_at: float) -> None:
        """Headers say the budget: the refill rate from the limit; the level from what is left
        (see :meth:`_learn_budget`)."""
        self.from_headers = True
        self.search.forget()
        for name, budget in (("requests", headers.requests), ("tokens", headers.tokens)):
            self._learn_budget(name, budget, now, sent_at)

    def _learn_budget(self, name: str, budget: Budget, now: float, sent_at: float) -> None:
        configured = self.configured[name]
        limit = budget.limit or configured
        if limit is None or budget.remaining is None:
            return
        unit = 1.0 if name == "requests" else None
        in_flight = sum(unit or t.tokens for t in self.in_flight)
        bucket = self.buckets.get(name)
        rate = min(limit, configured) / 60 if configured else limit / 60
        # What is left and the time until the bucket is full say how much it holds.
        holds = budget.remaining + (budget.reset or 0.0) * rate
        if bucket is None:
            self.buckets[name] = _Bucket(rate, max(1.0, holds), budget.remaining - in_flight, now)
            if name == "requests" and budget.reset is not None and holds < TINY_BUCKET:
                self.margin = max(self.margin, TINY_BUCKET_MARGIN)
            return
        bucket.refill(now)
        bucket.rate = rate
        bucket.capacity = max(bucket.capacity, holds, 1.0)
        # The answer's count is old (taken when its request arrived): what it says and the
        # refill since the request went are left, less what is in flight (counted by the
        # server or not: the margin for requests that arrive bunched). The bucket's own count
        # is exact while this process is the key's only user, so the answer only ever lowers
        # it (another job spending the key's budget).
        most = budget.remaining + (now - sent_at) * rate - in_flight
        bucket.level = min(bucket.level, most)

    def _widen(self, ticket: Ticket, now: float, retry_after: float | None) -> None:
        # One widening per bunch: requests sent before the last one met the old spacing.
        if ticket.sent_at <= self.widened:
            return
        self.widened = now
        requests = self.buckets.get("requests")
        if retry_after is None or requests is None or retry_after * requests.rate >= WIDEN:
            self.margin = min(MAX_MARGIN, self.margin + WIDEN)
            return
        # The server said how early the request came (it fits Retry-After later): the spacing
        # that would have let it through, and half as much again for a worse bunching.
        needed = (ticket.margin + retry_after * requests.rate) * DEFICIT_SAFETY
        self.margin = min(MAX_MARGIN, max(self.margin, needed, ticket.margin + MIN_WIDEN))


class Pacing:
    """One :class:`Limiter` per rate-limit scope, shared by every run handed this object."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._limiters: dict[str, Limiter] = {}

    def limiter(self, scope: str, *, rpm: float | None = None, tpm: float | None = None) -> Limiter:
        """The scope's limiter (made on first use; a later ``rpm``/``tpm`` does not replace the
        first, since one key has one limit)."""
        if scope not in self._limiters:
            self._limiters[scope] = Limiter(scope, rpm=rpm, tpm=tpm, clock=self.clock)
        return self._limiters[scope]

    @property
    def limiters(self) -> dict[str, Limiter]:
        """The limiters made so far, by scope."""
        return dict(self._limiters)
