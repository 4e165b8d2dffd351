"""Rate-limit headers in OpenAI's and Anthropic's forms, as LiteLLM hands them back, or absent."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from promptcanary.core.run.rate_headers import (
    Budget,
    parse_duration,
    parse_rate_limit_headers,
    rate_limit_header_names,
)

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("2.5", 2.5),
        ("7m12s", 432.0),
        ("soon", None),
        ("5 s", None),
        ("", None),
    ],
)
def test_openai_reset_durations(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_openai_headers_give_both_budgets() -> None:
    headers = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "X-RateLimit-Limit-Tokens": "30000",
        "X-RateLimit-Remaining-Tokens": "29950",
        "X-RateLimit-Reset-Tokens": "1m30s",
    }
    parsed = parse_rate_limit_headers(headers, now=NOW)
    assert parsed.requests == Budget(limit=500, remaining=499, reset=pytest.approx(0.12))
    assert parsed.tokens == Budget(limit=30000, remaining=29950, reset=90.0)
    assert parsed.known


def test_anthropic_headers_reset_at_a_time_measured_from_now() -> None:
    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "12",
        "anthropic-ratelimit-requests-reset": "2025-03-01T12:00:30Z",
        "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-reset": "2025-03-01T11:59:00Z",  # already past: 0
    }
    parsed = parse_rate_limit_headers(headers, now=NOW)
    assert parsed.requests == Budget(limit=50, remaining=12, reset=30.0)
    assert parsed.tokens == Budget(limit=40000, remaining=39000, reset=0.0)


def test_litellms_provider_copies_win_over_its_translations() -> None:
    # LiteLLM translates Anthropic's names into OpenAI's and forwards the originals prefixed.
    headers = {
        "x-ratelimit-remaining-requests": "99",
        "llm_provider-anthropic-ratelimit-requests-limit": "50",
        "llm_provider-anthropic-ratelimit-requests-remaining": "7",
        "llm_provider-x-ratelimit-remaining-requests": "8",
    }
    parsed = parse_rate_limit_headers(headers, now=NOW)
    assert parsed.requests.limit == 50 and parsed.requests.remaining == 7


def test_absent_or_unreadable_headers_say_nothing() -> None:
    assert not parse_rate_limit_headers({}, now=NOW).known
    assert not parse_rate_limit_headers({"content-type": "application/json"}, now=NOW).known
    unreadable = {"x-ratelimit-remaining-requests": "lots", "x-ratelimit-limit-requests": "-1"}
    assert not parse_rate_limit_headers(unreadable, now=NOW).known
    odd_reset = {"x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "whenever"}
    assert parse_rate_limit_headers(odd_reset, now=NOW).tokens == Budget(remaining=10)


def test_only_rate_limit_headers_are_kept() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "3",
        "Retry-After": "2",
        "retry-after-ms": "1500",
        "set-cookie": "secret=1",
        "openai-organization": "org-123",
    }
    assert rate_limit_header_names(headers) == {
        "x-ratelimit-remaining-requests": "3",
        "Retry-After": "2",
        "retry-after-ms": "1500",
    }
