"""What an answer's rate-limit headers say about the budget left: OpenAI's and Anthropic's forms.

OpenAI (and most OpenAI-compatible servers) send ``x-ratelimit-limit-requests``,
``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests`` (a duration such as ``1s``,
``6m0s`` or ``20ms``), and the same three for ``tokens``. Anthropic sends
``anthropic-ratelimit-requests-limit`` / ``-remaining`` / ``-reset`` (an RFC 3339 time) and the
same for ``tokens``. LiteLLM hands the provider's headers back prefixed ``llm_provider-``, and
translates Anthropic's into OpenAI's names as well; both spellings are read here.

Standard library only; pure (the current Unix time is a parameter).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

_PROVIDER_PREFIX = "llm_provider-"
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")

DIMENSIONS = ("requests", "tokens")


@dataclass(frozen=True)
class Budget:
    """One dimension of a rate limit as an answer reported it: the limit per minute, what is left,
    and the seconds until it is whole again; ``None`` where the header was absent or unreadable."""

    limit: float | None = None
    remaining: float | None = None
    reset: float | None = None

    @property
    def known(self) -> bool:
        return self.limit is not None or self.remaining is not None


@dataclass(frozen=True)
class RateLimitHeaders:
    """The budgets one answer reported (requests and tokens)."""

    requests: Budget = Budget()
    tokens: Budget = Budget()

    @property
    def known(self) -> bool:
        return self.requests.known or self.tokens.known


def parse_duration(value: str) -> float | None:
    """OpenAI's reset durations (``1s``, ``6m0s``, ``1h2m3.5s``, ``20ms``) or plain seconds."""
    text = value.strip().lower()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(number) * scale[unit] for number, unit in parts)


def _time_until(value: str, now: float) -> float | None:
    """Seconds from ``now`` (Unix time) to an RFC 3339 time; a duration is read as one too."""
    text = value.strip()
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return parse_duration(text)
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number >= 0 else None


def _lowered(headers: Mapping[str, str]) -> dict[str, str]:
    """Names lower-cased; LiteLLM's ``llm_provider-`` copies win over its translations."""
    plain: dict[str, str] = {}
    prefixed: dict[str, str] = {}
    for name, value in headers.items():
        key = str(name).lower()
        if key.startswith(_PROVIDER_PREFIX):
            prefixed[key[len(_PROVIDER_PREFIX) :]] = str(value)
        else:
            plain[key] = str(value)
    return {**plain, **prefixed}


def _budget(headers: Mapping[str, str], dimension: str, now: float) -> Budget:
    anthropic = f"anthropic-ratelimit-{dimension}-"
    if any(name.startswith(anthropic) for name in headers):
        reset = headers.get(anthropic + "reset")
        return Budget(
            limit=_number(headers.get(anthropic + "limit")),
            remaining=_number(headers.get(anthropic + "remaining")),
            reset=_time_until(reset, now) if reset is not None else None,
        )
    reset = headers.get(f"x-ratelimit-reset-{dimension}")
    return Budget(
        limit=_number(headers.get(f"x-ratelimit-limit-{dimension}")),
        remaining=_number(headers.get(f"x-ratelimit-remaining-{dimension}")),
        reset=parse_duration(reset) if reset is not None else None,
    )


def parse_rate_limit_headers(headers: Mapping[str, str], *, now: float) -> RateLimitHeaders:
    """The requests and tokens budgets in ``headers`` (any case, LiteLLM's prefix or not);
    ``now`` is the current Unix time, against which Anthropic's reset times are measured."""
    lowered = _lowered(headers)
    return RateLimitHeaders(*(_budget(lowered, d, now) for d in DIMENSIONS))


def rate_limit_header_names(headers: Mapping[str, str]) -> dict[str, str]:
    """Only the headers this module or the ``Retry-After`` rule reads (what a response keeps)."""
    return {
        str(k): str(v)
        for k, v in headers.items()
        if "ratelimit" in str(k).lower() or "retry-after" in str(k).lower()
    }
