"""The search for a rate on 429s without headers: pure arithmetic on given times."""

from __future__ import annotations

import pytest

from promptcanary.core.run import rate_search
from promptcanary.core.run.rate_search import DECREASE, PROBE_GROWTH, RateSearch


def answered(search: RateSearch, start: float, n: int, per_second: float) -> float:
    """``n`` answers at ``per_second`` from ``start``, each request sent just before; the time
    of the last."""
    now = start
    for _ in range(n):
        search.take(now)
        search.increase(now)
        now += 1 / per_second
    return now - 1 / per_second


def test_nothing_is_paced_until_a_429() -> None:
    search = RateSearch(0.0)
    answered(search, 0.0, 50, 100.0)
    assert search.rate is None and search.delay(1.0) is None


def test_the_first_429_sets_the_rate_from_what_the_server_admitted_then_it_probes() -> None:
    search = RateSearch(0.0)
    now = answered(search, 0.0, 20, 20.0)  # 20 a second
    search.decrease(now, now + 0.05)
    first = search.rate
    assert first == pytest.approx(DECREASE * 20, rel=0.06)
    assert search.probing
    # Growth is capped near what the run achieves since: once answers come fast, 3% each.
    now = answered(search, now + 0.1, 10, 100.0)
    before = search.rate or 0
    answered(search, now + 0.01, 5, 100.0)
    assert search.rate == pytest.approx(before * (1 + PROBE_GROWTH) ** 5)


def slowed_twice(per_second: float) -> RateSearch:
    """A search that probed at ``per_second`` and met its second 429."""
    search = RateSearch(0.0)
    now = answered(search, 0.0, 20, per_second)
    search.decrease(now, now)
    now = answered(search, now + 0.5 / per_second, 30, per_second)
    search.decrease(now, now + 0.01)
    return search


def test_after_the_second_429_it_grows_back_along_a_cubic_flat_near_the_peak() -> None:
    search = slowed_twice(5.0)
    assert not search.probing
    peak, at = search.peak, search.last_event
    assert search.rate == pytest.approx(DECREASE * peak)
    # The time of RECOVERY_ANSWERS answers at the peak (within 2 s and 60 s).
    recovery = search.recovery
    assert recovery == pytest.approx(rate_search.RECOVERY_ANSWERS / peak)
    assert 2.0 < recovery < 60.0
    # Halfway: most of the decrease regained; at `recovery`: the peak, and no faster yet.
    assert search.cubic(at + recovery / 2) == pytest.approx(peak * (1 - 0.1 / 8))
    assert search.cubic(at + recovery) == pytest.approx(peak)
    assert search.cubic(at + recovery * 1.2) < peak * 1.001
    assert search.cubic(at + 2 * recovery) == pytest.approx(peak * (2 - DECREASE))
    # The rate follows the cubic while the run achieves it.
    start = at + recovery / 2
    answered(search, start, 10, peak)
    assert search.rate == pytest.approx(search.cubic(start + 9 / peak))


def test_a_fast_peak_recovers_in_no_less_than_the_shortest_recovery() -> None:
    search = slowed_twice(100.0)
    assert search.recovery == rate_search.RECOVERY_SECONDS[0]


def test_one_decrease_per_burst() -> None:
    search = RateSearch(0.0)
    now = answered(search, 0.0, 20, 20.0)
    search.decrease(now, now)
    now = answered(search, now + 0.05, 30, 20.0)
    search.decrease(now, now + 0.01)
    rate = search.rate
    search.decrease(now - 0.1, now + 0.02)  # sent before the last 429: the same burst
    search.decrease(now + 0.03, now + 0.04)  # no answer since the last 429: the same burst
    assert search.rate == rate


def test_the_schedule_spaces_requests_at_the_rate_and_makes_up_little_lost_time() -> None:
    search = RateSearch(0.0)
    now = answered(search, 0.0, 20, 20.0)
    search.decrease(now, now)
    rate = search.rate or 0
    send = now + 5.0  # idle for a while: no burst to make up for it
    search.take(send)
    assert search.delay(send) == pytest.approx(1 / rate - rate_search.SLACK)


def test_a_429_before_two_answers_seeds_the_rate_from_a_short_retry_after() -> None:
    search = RateSearch(0.0)
    answered(search, 0.0, 1, 1.0)
    # A token bucket refusing says when one request fits: 0.2 s, so at most 5 a second.
    search.decrease(0.01, 0.02, retry_after=0.2)
    assert search.rate == pytest.approx(DECREASE * 5)
    assert search.probing
    # The rest of the burst (sent before the seed) met the same bucket: no second decrease.
    search.decrease(0.01, 0.03, retry_after=0.19)
    assert search.rate == pytest.approx(DECREASE * 5)


def test_a_long_retry_after_or_none_seeds_nothing() -> None:
    for retry_after in (None, rate_search.SEED_RETRY_AFTER * 2):
        search = RateSearch(0.0)
        search.decrease(0.0, 0.01, retry_after=retry_after)
        assert search.rate is None  # a window that resets says nothing of the rate
