"""The step's markdown: pull-request comment, job summary, drift issue and check-run output.

Templates mark *budget units* with ``unit(label, kind)``: a unit is the smallest piece that is kept
or dropped as a whole (a table row, one folded response diff, one warning). The renderer keeps
units in order until the next one does not fit the limit, then stops at that boundary and adds a
line naming what moved to the job summary and the report files; the limits are GitHub's
(:mod:`promptcanary_action.github.limits`).
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass

from promptcanary.core.models import severity_explanation
from promptcanary.core.render.markdown import code_span, escape_md, escape_plain, sanitize, truncate
from promptcanary.core.render.report import FILTERS, Trusted, template_environment
from promptcanary.core.verdict.usage import Metric, MetricChange, format_metric, format_usd
from promptcanary_action.approval.record import comment_record, record_block
from promptcanary_action.github.limits import (
    CHECK_OUTPUT_CHARS,
    CHECK_TITLE_CHARS,
    COMMENT_CHARS,
    ISSUE_TITLE_CHARS,
    SUMMARY_BYTES,
)
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.trend import Trend, colour_name, mermaid_chart, sparkline

ALL_SECTIONS = frozenset({"regressions", "diffs", "changes", "trend", "usage"})
"""``trend`` draws Mermaid charts; ``sparkline`` (check runs, no Mermaid there) one line each."""

_MARKER_ID_RE = re.compile(r"[^A-Za-z0-9_.-]")
_KINDS = ("body", "head", "keep", "omitted")


def comment_marker(comment_id: str) -> str:
    """The hidden HTML comment that identifies this step's sticky comment."""
    clean = _MARKER_ID_RE.sub("-", comment_id)[:64] or "default"
    return f"<!-- promptcanary-action:comment-id={clean} -->"


# ------------------------------------------------------------------------------------------------
# budget units


@dataclass
class _Unit:
    kind: str
    label: str
    text: str
    count: int = 1


class _Units:
    """The ``unit()`` / ``omitted()`` template globals of one rendering, and the parser."""

    def __init__(self) -> None:
        # Record separator + a random nonce: sanitize() strips \x1e from all untrusted text, and
        # the nonce keeps template literals from colliding by accident.
        self.prefix = f"\x1e{secrets.token_hex(8)}\x1f"

    def _mark(self, kind: str, label: str, count: int) -> Trusted:
        clean = sanitize(label).replace("\n", " ").replace("\x1f", " ")
        # No newline here: the template's own line break after ``}}`` ends the marker line.
        return Trusted(f"{self.prefix}{kind}\x1f{count}\x1f{clean}")

    def unit(self, label: str, kind: str = "body") -> Trusted:
        if kind not in _KINDS:
            raise ValueError(f"unknown unit kind {kind!r}; one of {', '.join(_KINDS)}")
        return self._mark(kind, label, 1)

    def omitted(self, label: str, count: int) -> Trusted:
        return self._mark("omitted", label, count) if count > 0 else Trusted("")

    def split(self, text: str) -> list[_Unit]:
        chunks = text.split(self.prefix)
        units = [_Unit("body", "", chunks[0].strip("\n"))] if chunks[0].strip() else []
        for chunk in chunks[1:]:
            header, _, body = chunk.partition("\n")
            kind, count, label = header.split("\x1f", 2)
            units.append(_Unit(kind, label, body.strip("\n"), int(count)))
        return [u for u in units if u.text or u.kind == "omitted"]


def _join(texts: list[str]) -> str:
    """Units joined by a blank line, except rows and list items that continue a table or list."""
    out: list[str] = []
    previous_last = ""
    for text in texts:
        if out:
            continues = any(
                text.startswith(lead) and previous_last.startswith(lead) for lead in ("|", "- ")
            )
            out.append("\n" if continues else "\n\n")
        out.append(text)
        previous_last = text.rpartition("\n")[2]
    return "".join(out)


def _moved_line(omitted: Counter[str], report_files: list[str]) -> str:
    labels = [f"{escape_md(label)} ({n})" for label, n in list(omitted.items())[:8]]
    if len(omitted) > 8:
        labels.append("…")
    where = "the job summary"
    if report_files:
        files = ", ".join(code_span(f) for f in report_files[:6])
        where += f" and the report files ({files})"
    return f"> [!NOTE]\n> Not everything fits here: {'; '.join(labels)} moved to {where}."


def _fit(
    units: list[_Unit], limit: int, measure: Callable[[str], int], report_files: list[str]
) -> str:
    kept_always = [u for u in units if u.kind == "keep"]
    # Each unit costs its text plus at most a blank line to join it.
    reserved = sum(measure(u.text) + 2 for u in kept_always)
    kept: list[_Unit] = []
    omitted: Counter[str] = Counter()
    used = 0
    stopped = False
    for u in units:
        if u.kind == "keep":
            continue
        if u.kind == "omitted":
            omitted[u.label] += u.count
            continue
        size = measure(u.text) + 2
        if not stopped and used + size + reserved <= limit:
            kept.append(u)
            used += size
        else:
            stopped = True
            omitted[u.label] += 1
    while True:
        # A section header with none of its rows left is noise: drop trailing headers too.
        while omitted and kept and kept[-1].kind == "head":
            omitted[kept.pop().label] += 0
        moved = [_moved_line(omitted, report_files)] if omitted else []
        body = _join([u.text for u in kept] + moved + [u.text for u in kept_always]) + "\n"
        if measure(body) <= limit or not kept:
            break
        dropped = kept.pop()
        omitted[dropped.label] += 1
    return body if measure(body) <= limit else truncate(body, limit)


# ------------------------------------------------------------------------------------------------
# trend, usage and links: context functions of every template


def _change(
    change: MetricChange | None, full: bool = False, cost_before: float | None = None
) -> Trusted:
    """`` (+35%)``; in full, with the baseline value and the interval when there is one.

    The cost column shows the run's total, so its "was" is the baseline run's (``cost_before``).
    """
    if change is None or change.change_pct is None:
        return Trusted("")
    text = f"{change.change_pct:+.0f}%"
    if full:
        before = (
            format_usd(cost_before)
            if change.metric == "cost_per_answer"
            else format_metric(change.metric, change.baseline)
        )
        text = f"was {before}; {text}"
        if change.interval_pct is not None:
            low, high = change.interval_pct
            text += f", CI {low:+.0f}% to {high:+.0f}%"
    return Trusted(f" ({escape_md(text)})")  # leading space: nothing at all when unknown


def _insights(outcome: StepOutcome) -> dict[str, Callable[..., Trusted] | str]:
    def prompt_link(pair: PairOutcome, prompt_id: str) -> Trusted:
        shown = code_span(prompt_id, cell=True)
        url = outcome.prompt_url(pair, prompt_id)
        link = f"[{shown}]({FILTERS['url'](url)})" if url else shown
        row, row_url = pair.prompt_rows.get(prompt_id), outcome.row_url(pair, prompt_id)
        if row is not None:  # a templated prompt: its dataset row too
            label = code_span(f"{row[0]}#L{row[1]}", cell=True)
            link += f" ([{label}]({FILTERS['url'](row_url)}))" if row_url else f" ({label})"
        return Trusted(link)

    def metric(name: Metric, value: float | None) -> Trusted:
        return Trusted(escape_md(format_metric(name, value)))

    return {
        "mermaid": lambda trend: Trusted(mermaid_chart(trend) if isinstance(trend, Trend) else ""),
        "spark": lambda values: Trusted(sparkline(values)),
        "colour": lambda index: Trusted(colour_name(index)),
        "metric": metric,
        "change": _change,
        "usd": lambda value: Trusted(escape_md(format_usd(value))),
        "prompt_link": prompt_link,
        "severity_scale": severity_explanation(),
    }


def _render(
    template_name: str,
    outcome: StepOutcome,
    *,
    limit: int,
    measure: Callable[[str], int] = len,
    sections: Collection[str] = ALL_SECTIONS,
    response_limit: int,
    max_diffs: int,
    details_limit: int = 300,
    pair: PairOutcome | None = None,
    full: bool = False,
) -> str:
    env = template_environment("promptcanary_action")
    units = _Units()
    text = env.get_template(template_name).render(
        outcome=outcome,
        pair=pair,
        unit=units.unit,
        omitted=units.omitted,
        sections=frozenset(sections),
        response_limit=response_limit,
        max_diffs=max_diffs,
        details_limit=details_limit,
        full=full,
        trends=outcome.trends if frozenset(sections) & {"trend", "sparkline"} else [],
        **_insights(outcome),
    )
    return _fit(units.split(text), limit, measure, outcome.report_files)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# ------------------------------------------------------------------------------------------------
# public renderers


def render_comment(outcome: StepOutcome, marker: str, *, limit: int = COMMENT_CHARS) -> str:
    """The sticky pull-request comment, ``marker`` last, never longer than ``limit``.

    With approvals on, the hidden approval record comes just before the marker (never cut).
    """
    record = f"{record_block(comment_record(outcome))}\n" if outcome.approve_label else ""
    budget = limit - len(marker) - len(record) - 1
    body = _render("comment.md.j2", outcome, limit=budget, response_limit=1_500, max_diffs=20)
    return f"{body}{record}{marker}"


def render_summary(outcome: StepOutcome, *, limit: int = SUMMARY_BYTES) -> str:
    """The job summary: the comment's content with a bigger budget (``limit`` in UTF-8 bytes)."""
    return _render(
        "summary.md.j2",
        outcome,
        limit=limit,
        measure=_utf8_len,
        response_limit=10_000,
        max_diffs=200,
        details_limit=2_000,
        full=True,
    )


def render_issue(outcome: StepOutcome, pair: PairOutcome) -> tuple[str, str]:
    """Title and body of the drift issue for one (suite, model) pair."""
    title = f"PromptCanary: drift in {pair.suite_name} on {pair.model} ({pair.severity.value})"
    body = _render(
        "issue.md.j2",
        outcome,
        pair=pair,
        limit=COMMENT_CHARS,
        response_limit=3_000,
        max_diffs=20,
        details_limit=1_000,
    )
    return truncate(escape_plain(title.replace("\n", " ")), ISSUE_TITLE_CHARS), body


def check_run_output(outcome: StepOutcome) -> tuple[str, str, str]:
    """``(title, summary, text)`` of the check run: the report, then the response diffs."""
    title = truncate(escape_plain(outcome.verdict.replace("\n", " ")), CHECK_TITLE_CHARS)
    summary = _render(
        "comment.md.j2",
        outcome,
        limit=CHECK_OUTPUT_CHARS,
        sections={"regressions", "changes", "usage", "sparkline"},
        response_limit=0,
        max_diffs=0,
    )
    text = _render(
        "comment.md.j2",
        outcome,
        limit=CHECK_OUTPUT_CHARS,
        sections={"diffs"},
        response_limit=2_000,
        max_diffs=30,
    )
    return title, summary, text
