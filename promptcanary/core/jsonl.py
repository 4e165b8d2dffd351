"""Reading JSON Lines text (replay recordings, baseline history): one JSON value a line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def numbered_values(text: str) -> Iterator[tuple[int, Any, str]]:
    """``(line number, value, "")`` for each non-blank line (numbered from 1), or
    ``(line number, None, why)`` for a line that is not valid JSON."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON ({exc.msg})"
            continue
        yield number, value, ""
