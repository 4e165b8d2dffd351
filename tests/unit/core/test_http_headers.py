"""The one Retry-After rule: seconds or an HTTP date, never negative, retry-after-ms first."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from promptcanary.core.http_headers import parse_retry_after, retry_after

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("2.5", 2.5), (" 7 ", 7.0), ("-3", 0.0), ("soon", None), ("", None), (None, None)],
)
def test_seconds_and_unreadable_values(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


def test_an_http_date_is_measured_against_the_clock() -> None:
    later = format_datetime(NOW.replace(minute=1), usegmt=True)
    assert parse_retry_after(later, clock=NOW.timestamp) == 60.0
    assert parse_retry_after(later, clock=lambda: NOW.timestamp() + 120) == 0.0


def test_headers_are_matched_case_insensitively_and_milliseconds_win() -> None:
    assert retry_after({"Retry-After": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"Retry-After-Ms": "oops", "RETRY-AFTER": "4"}) == 4.0
    assert retry_after({"content-type": "text/plain"}) is None
