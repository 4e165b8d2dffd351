"""The search for a key's rate when nothing says its budget (no rate-limit headers, no ``rpm:``).

Nothing is paced until a 429. Then requests go out at a rate found as TCP finds a window:

* **Probing** (until the second 429): 0.9 times the rate the server admitted over the last
  second, grown 3% per answer. A 429 before two answers measures nothing; a short
  ``Retry-After`` (a token bucket's time until one request fits) then bounds the rate from
  above, and 0.9 times its inverse is where probing starts, so the retries of a refused burst
  go paced instead of all at once when the hold ends.
* **Then, at every 429**: the rate the 429 came at (the lower of the rate and the admitted
  rate, but at least 0.9 times the rate) is the *peak*; the rate drops to 0.9 times it and
  grows back along a cubic of the time since (as TCP CUBIC does): fast at first, flat near the
  peak, then faster again beyond it. The peak is regained after :data:`RECOVERY_ANSWERS`
  answers' worth of time (2 to 60 s): a server whose limit does not move is asked at just
  under it most of the time, and probed past it only slowly (a linear increase reached the
  limit again within seconds, and every return cost a 429; 40 answers' time cost a 429 every
  6-8 s of a steady run, 80 fewer for the same wall time in the virtual-time simulation of
  ``tests/fakes/rate_sim.py``: two keys without headers 3.5% → 2.6% refused).

Pure: times are parameters.
"""

from __future__ import annotations

from collections import deque

DECREASE = 0.9
"""On a 429, the rate becomes this share of the rate the server admitted."""
PROBE_GROWTH = 0.03
"""Growth of the rate per answer until the second 429 (finding the limit)."""
RECOVERY_ANSWERS = 80.0
"""After a decrease the peak is regained in the time of this many answers at it."""
RECOVERY_SECONDS = (2.0, 60.0)
"""Shortest and longest time to regain the peak."""
MIN_RATE = 0.05
"""Requests per second the search never goes below (one every 20 s)."""
MIN_ADMITTED = 2
"""Answers needed before a 429 sets a rate: fewer say nothing about the server's."""
ADMITTED_WINDOW = 1.0
"""Seconds over which the rate the server admitted is measured at a 429."""
SHORTEST_SPAN = 0.1
"""Shortest span that rate is measured over (a 429 in the run's first moments)."""
SLACK = 0.1
"""Seconds of the schedule a late request may make up by going at once."""
CEILING = 1.5
"""The rate grows to at most this multiple of the rate admitted since the last 429."""
SEED_RETRY_AFTER = 1.0
"""A first 429's ``Retry-After`` up to this many seconds seeds the rate (see ``_seed``)."""
REPROBE = 0.5
"""A 429 that sets the rate below this share of the last one starts probing again."""


class RateSearch:
    """The rate found by 429s, and the schedule of requests sent at it."""

    def __init__(self, now: float) -> None:
        self.rate: float | None = None
        """Requests per second; ``None`` until the first 429 (nothing is paced)."""
        self.probing = True
        self.peak = 0.0
        """The rate the last 429 came at."""
        self.recovery = RECOVERY_SECONDS[0]
        """Seconds from the last decrease until the peak is regained."""
        self.last_event = now
        self.started: float | None = None
        self.admitted: deque[float] = deque()
        self.next_send = now

    def delay(self, now: float) -> float | None:
        """Seconds until the next request may go (``None``: nothing is paced)."""
        return None if self.rate is None else self.next_send - now

    def take(self, now: float) -> None:
        """A request went out at ``now``."""
        if self.started is None:
            self.started = now
        if self.rate is not None:
            # A late wake-up (a busy event loop) is made up, up to SLACK: lost time adds up.
            self.next_send = max(now - SLACK, self.next_send) + 1 / self.rate

    def forget(self) -> None:
        """Headers say the budget: the search is for providers that say nothing."""
        self.rate = None

    def decrease(self, sent_at: float, now: float, retry_after: float | None = None) -> None:
        """A 429 to a request sent at ``sent_at``, with the server's ``Retry-After``."""
        # One decrease per burst: a request sent before the last one went out at the old rate,
        # and one sent after it with no answer between still met the same empty bucket.
        if self.rate is not None and (sent_at <= self.last_event or not self._admitted_since()):
            return
        admitted = self.admitted_rate(now)
        if self.rate is None and len(self.admitted) < MIN_ADMITTED:
            self._seed(retry_after, now)
            return
        old = self.rate
        # Sending faster than the server admits: its admitted rate is the limit; but a busy
        # client may not have sent at its rate, so one 429 takes off at most 1 - DECREASE².
        self.peak = admitted if old is None else max(min(old, admitted), old * DECREASE)
        new = DECREASE * self.peak
        # Far below the last rate (the run was idle, or the first guess was off): probe again.
        self.probing = old is None or new < old * REPROBE
        self.rate = max(MIN_RATE, new)
        low, high = RECOVERY_SECONDS
        self.recovery = min(high, max(low, RECOVERY_ANSWERS / max(self.peak, MIN_RATE)))
        self.last_event = now
        self.next_send = max(self.next_send, now)

    def _seed(self, retry_after: float | None, now: float) -> None:
        """Too few answers to measure a rate: a short ``Retry-After`` (a token bucket's time
        until one request fits) bounds it from above; the retries go at DECREASE times that
        rather than all at once when the hold ends. A long one (a window that resets) says
        nothing of the rate: only the hold applies."""
        if retry_after is None or not 0 < retry_after <= SEED_RETRY_AFTER:
            return
        self.peak = 1 / retry_after
        self.rate = max(MIN_RATE, DECREASE * self.peak)
        self.probing = True
        self.last_event = now  # the rest of the burst met the same bucket
        self.next_send = max(self.next_send, now)

    def increase(self, now: float) -> None:
        """An answer that was not a 429."""
        self.admitted.append(now)
        if self.rate is None:
            return
        grown = self.rate * (1 + PROBE_GROWTH) if self.probing else self.cubic(now)
        # Never far above what is achieved: a rate the run cannot reach says nothing.
        achieved = self.admitted_rate(now, since=self.last_event)
        self.rate = min(grown, max(self.rate, CEILING * achieved))

    def cubic(self, now: float) -> float:
        """The rate ``now - last_event`` seconds after a decrease: DECREASE x peak at the
        decrease, the peak after ``recovery`` seconds, beyond it as fast again after as long."""
        share = (now - self.last_event) / self.recovery - 1.0
        return max(MIN_RATE, self.peak * (1 + (1 - DECREASE) * share**3))

    def _admitted_since(self) -> bool:
        return bool(self.admitted) and self.admitted[-1] > self.last_event

    def admitted_rate(self, now: float, since: float | None = None) -> float:
        """Answers per second over the last :data:`ADMITTED_WINDOW` seconds (or since
        ``since``, the run's start by default, when that is later)."""
        while self.admitted and self.admitted[0] < now - ADMITTED_WINDOW:
            self.admitted.popleft()
        if since is None:
            since = self.started if self.started is not None else now
        start = max(now - ADMITTED_WINDOW, since)
        count = sum(1 for t in self.admitted if t >= start)
        return count / max(now - start, SHORTEST_SPAN)
