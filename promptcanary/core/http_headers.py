"""HTTP response headers the engine and the action read: one ``Retry-After`` rule for both.

Standard library only, so any layer (the LiteLLM provider, the action's GitHub client) can use it
without loading anything heavy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime


def parse_retry_after(value: str | None, *, clock: Callable[[], float] = time.time) -> float | None:
    """``Retry-After`` as seconds (≥ 0): a number of seconds or an HTTP date; ``None`` if absent
    or unreadable. ``clock`` is the current Unix time, against which a date is measured."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - clock())


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asked to wait: ``retry-after-ms`` first (OpenAI), else ``Retry-After``.

    Header names are matched case-insensitively.
    """
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    return parse_retry_after(lowered.get("retry-after"))
