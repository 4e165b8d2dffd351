"""Progress of a run on stderr: counts only, never model text.

On a terminal the line is redrawn in place (``\\r``); in a CI log, where every write is a new line,
a plain line is printed at most every ``interval`` seconds or each time another 10% is done, so a
5,000-prompt run does not flood the log. A final line always closes the report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

_BAR_WIDTH = 20


class RunProgress:
    """Counts finished responses and reports them to ``stream`` (stderr by default).

    Args:
        total: Number of responses the run will produce.
        stream: Where to write; ``None`` means ``sys.stderr`` at construction time.
        enabled: ``False`` makes every method a no-op.
        is_tty: Force terminal (``True``) or log (``False``) rendering; ``None`` asks the stream.
        interval: Minimum seconds between two plain lines in log mode.
        clock: Monotonic clock (injectable for tests).
    """

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        is_tty: bool | None = None,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        label: str = "promptcanary",
    ) -> None:
        self.total = total
        self.done = 0
        self.errored = 0
        self.retries = 0
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled
        self._tty = _isatty(self._stream) if is_tty is None else is_tty
        self._interval = interval
        self._clock = clock
        self._label = label
        self._started = clock()
        self._last_line_at = self._started
        self._last_decile = 0
        self._finished = False

    def advance(self, *, errored: bool = False, retries: int = 0) -> None:
        """Record one finished response (its retries included) and maybe report."""
        self.done += 1
        self.errored += int(errored)
        self.retries += retries
        if not self._enabled:
            return
        if self._tty:
            self._write("\r" + self._bar_line())
            return
        now = self._clock()
        decile = self.done * 10 // self.total if self.total else 10
        if decile > self._last_decile or now - self._last_line_at >= self._interval:
            self._last_decile = decile
            self._last_line_at = now
            if self.done < self.total:  # the final line reports completion
                self._write(self._counts_line() + "\n")

    def finish(self) -> None:
        """Write the closing line (once)."""
        if not self._enabled or self._finished:
            return
        self._finished = True
        elapsed = self._clock() - self._started
        prefix = "\r" + " " * (len(self._bar_line()) + 2) + "\r" if self._tty else ""
        self._write(f"{prefix}{self._counts_line()} in {elapsed:.1f} s\n")

    # ── rendering ────────────────────────────────────────────────────────────

    def _counts_line(self) -> str:
        return (
            f"{self._label}: {self.done}/{self.total} responses "
            f"({self.errored} errored, {self.retries} retries)"
        )

    def _bar_line(self) -> str:
        filled = _BAR_WIDTH * self.done // self.total if self.total else _BAR_WIDTH
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        return f"[{bar}] {self._counts_line()}"

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            # A closed or broken stderr must not end the run: progress is a courtesy.
            self._enabled = False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
