"""Check-run annotations for a step's outcome: pure, one per notable result.

Regressions are failures, errored and flaky results warnings, improvements notices. Each points
at the suite file line of the prompt (or of its own probe entry when the prompt declares one);
a templated prompt's at its dataset row, and a conversation's regression quotes its last turns.
Annotation text is plain text from untrusted sources, so it is sanitised (no control or bidi
characters, no live mention) and cut to GitHub's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from promptcanary.core.models import ErroredResult, ProbeComparison
from promptcanary.core.render.markdown import escape_plain, truncate
from promptcanary_action.github.limits import ANNOTATION_TEXT_CHARS, CHECK_TITLE_CHARS
from promptcanary_action.outcome import PairOutcome, StepOutcome

DETAILS_LIMIT = 2_000
"""Probe details quoted in a message: well under GitHub's 64 KB, which counts bytes."""

Level = Literal["notice", "warning", "failure"]


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    annotation_level: Level
    title: str
    message: str
    raw_details: str = ""


def _clean(text: str, limit: int) -> str:
    return truncate(escape_plain(text), limit)


def _fit(text: str, limit_bytes: int) -> str:
    """Cut to a byte budget (multi-byte characters count for what they weigh)."""
    if len(text.encode("utf-8")) <= limit_bytes:
        return text
    return truncate(text, limit_bytes // 4)


def _scores(c: ProbeComparison) -> str:
    text = f"score {c.baseline_score:.3f} → {c.current_score:.3f} ({c.score_delta:+.3f})"
    if c.baseline_pass_rate is not None and c.current_pass_rate is not None:
        text += f"; pass rate {c.baseline_pass_rate:.0%} → {c.current_pass_rate:.0%}"
        if c.pass_rate_ci is not None:
            text += f" (CI of change [{c.pass_rate_ci[0]:+.2f}, {c.pass_rate_ci[1]:+.2f}])"
        if c.p_adjusted is not None:
            text += f", adjusted p = {c.p_adjusted:.3g}"
    return text


def _make(
    pair: PairOutcome,
    prompt_id: str,
    probe_key: str,
    level: Level,
    heading: str,
    message: str,
    details: str = "",
) -> Annotation:
    path, line = pair.suite_file, pair.line_for(prompt_id, probe_key) or 1
    row = pair.prompt_rows.get(prompt_id)
    if row is not None:  # a templated prompt: its dataset row, the template named in the text
        message += f"\nRow {row[0]}:{row[1]} of the template at {path}:{line}."
        path, line = row
    conversation = pair.conversations.get(prompt_id)
    if conversation and level == "failure":
        message += f"\nConversation before the answer:\n{conversation}"
    title = f"{heading}: {prompt_id} / {probe_key} ({pair.model})"
    return Annotation(
        path=path,
        start_line=line,
        end_line=line,
        annotation_level=level,
        title=_clean(title, CHECK_TITLE_CHARS),
        message=_fit(_clean(message, ANNOTATION_TEXT_CHARS), ANNOTATION_TEXT_CHARS),
        raw_details=_fit(_clean(details, ANNOTATION_TEXT_CHARS), ANNOTATION_TEXT_CHARS),
    )


def _comparison(pair: PairOutcome, c: ProbeComparison, level: Level, heading: str) -> Annotation:
    message = (
        f"{heading} of probe {c.probe_key} on prompt {c.prompt_id} ({pair.model}): {_scores(c)}."
    )
    if c.current_details:
        message += f"\nNow: {truncate(c.current_details, DETAILS_LIMIT)}"
    if c.baseline_details:
        message += f"\nBaseline: {truncate(c.baseline_details, DETAILS_LIMIT)}"
    return _make(pair, c.prompt_id, c.probe_key, level, heading, message)


def _errored(pair: PairOutcome, e: ErroredResult) -> Annotation:
    message = (
        f"No {e.side} response for prompt {e.prompt_id} ({pair.model}); probe {e.probe_key} "
        "was not compared and does not count as a regression."
    )
    return _make(pair, e.prompt_id, e.probe_key, "warning", "Errored", message, e.error)


def _pair_annotations(pair: PairOutcome) -> tuple[list[Annotation], list[Annotation]]:
    failures: list[Annotation] = []
    others: list[Annotation] = []
    drift = pair.drift
    if drift is None:
        # No baseline: errored responses of this run are still worth a warning.
        for r in pair.run.errored_results:
            e = ErroredResult(
                prompt_id=r.prompt_id, probe_key=r.probe_key, side="current", error=r.details
            )
            others.append(_errored(pair, e))
        return failures, others
    failures.extend(_comparison(pair, c, "failure", "Regression") for c in drift.regressions)
    others.extend(_errored(pair, e) for e in drift.errored)
    others.extend(_comparison(pair, c, "warning", "Flaky") for c in drift.flaky if not c.regression)
    others.extend(_comparison(pair, c, "notice", "Improvement") for c in drift.improvements)
    return failures, others


def build_annotations(outcome: StepOutcome) -> list[Annotation]:
    """Every annotation of the step, failures first (GitHub shows the first ones prominently)."""
    failures: list[Annotation] = []
    others: list[Annotation] = []
    for pair in outcome.pairs:
        pair_failures, pair_others = _pair_annotations(pair)
        failures.extend(pair_failures)
        others.extend(pair_others)
    return failures + others
