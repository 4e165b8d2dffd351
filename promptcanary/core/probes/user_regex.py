"""Regular expressions written by users, searched in model output with a time limit.

A suite's pattern meets text nobody has read: one catastrophic-backtracking pattern
(``^(a|a)*$``) on a long answer would hang the job with the standard ``re`` module, which cannot
be interrupted. The ``regex`` library searches with a ``timeout``; a search that runs out of time
raises :class:`RegexTimeout`, which the probe reports as an *errored* result naming the pattern
(neither a pass nor a failure: the model's answer was not judged).

Patterns use ``regex``'s version 0 syntax, which is the standard library's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from promptcanary.core.models import ProbeResult
    from promptcanary.core.probes.base import BaseProbe

REGEX_TIMEOUT_SECONDS = 1.0
"""CPU seconds one search of a user's pattern may take (``regex`` counts the process's CPU time,
so a busy machine stretches it in wall time); the probe stops at the first search out of time."""


class RegexTimeout(Exception):
    """A user's pattern did not finish searching one response in time."""

    def __init__(self, pattern: str, seconds: float, text_length: int) -> None:
        super().__init__(
            f"regex {pattern!r} did not finish within {seconds:g} s on {text_length} characters "
            "(catastrophic backtracking?); simplify the pattern, e.g. avoid nested or "
            "overlapping repetition like (a+)+ or (a|a)*"
        )
        self.pattern = pattern


@dataclass(frozen=True)
class UserRegex:
    """A compiled user pattern; :meth:`search` raises :class:`RegexTimeout` instead of hanging."""

    pattern: str
    compiled: regex.Pattern[str]
    timeout: float = REGEX_TIMEOUT_SECONDS

    def search(self, text: str) -> regex.Match[str] | None:
        try:
            return self.compiled.search(text, timeout=self.timeout)
        except TimeoutError:
            raise RegexTimeout(self.pattern, self.timeout, len(text)) from None


def compile_user_regex(
    pattern: str, *, ignore_case: bool = False, timeout: float = REGEX_TIMEOUT_SECONDS
) -> UserRegex:
    """Compile ``pattern``; raises ``ValueError`` with the library's reason when it is invalid."""
    flags = regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0)
    try:
        return UserRegex(pattern, regex.compile(pattern, flags), timeout)
    except regex.error as exc:
        raise ValueError(str(exc)) from None


def timed_out_result(probe: BaseProbe, prompt_id: str, exc: RegexTimeout) -> ProbeResult:
    """The errored result of a probe whose pattern ran out of time on this response."""
    return probe._make_result(
        prompt_id,
        passed=False,
        score=0.0,
        details=f"Not judged: {exc}.",
        metadata={"regex_timeout": exc.pattern},
        errored=True,
    )
