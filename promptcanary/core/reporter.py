"""``Reporter`` and ``DriftReporter``: the report objects of PromptCanary 0.2.2, on our renderers.

Code written for that package calls ``Reporter(run).to_markdown("report.md")`` or
``DriftReporter(report).print_terminal()``; these classes keep that working. The text comes from
the engine's own renderers (sandboxed, escaped templates; terminal output with control characters
neutralised), so it differs in layout from 0.2.2's. HTML is not produced: ``to_html`` raises
:class:`HtmlReportUnavailable`, which says to use markdown instead.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import CanaryRunResult, DriftReport
from promptcanary.core.render.report import render_json, render_markdown, render_run_markdown
from promptcanary.core.render.terminal import format_drift, format_run

__all__ = ["DriftReporter", "HtmlReportUnavailable", "Reporter", "score_to_emoji"]


class HtmlReportUnavailable(NotImplementedError):
    """HTML reports are not produced by this engine; markdown is (GitHub and editors render it)."""

    def __init__(self) -> None:
        super().__init__(
            "HTML reports are not produced by this version of promptcanary: use to_markdown() "
            "(or `--output-md` on the command line), which GitHub and most editors render"
        )


def score_to_emoji(score: float) -> str:
    """A coloured circle for a 0–1 score (0.95 green, 0.80 yellow, 0.60 orange, else red)."""
    for threshold, emoji in ((0.95, "🟢"), (0.80, "🟡"), (0.60, "🟠")):
        if score >= threshold:
            return emoji
    return "🔴"


class _ReporterBase:
    """What both reporters do with the text their subclass renders."""

    def _text(self) -> str:
        raise NotImplementedError

    def _markdown(self) -> str:
        raise NotImplementedError

    def _json(self) -> str:
        raise NotImplementedError

    def print_terminal(self, console: Any = None) -> None:
        """Print as plain text to stdout, or to ``console`` (a file or a rich Console).

        A rich Console would read "[bold]" in model text as markup: its file is written instead.
        """
        stream = getattr(console, "file", console) if console is not None else sys.stdout
        stream.write(self._text() + "\n")

    def to_markdown(self, path: str | Path | None = None) -> str:
        return self._emit(self._markdown(), path)

    def to_json(self, path: str | Path | None = None) -> str:
        return self._emit(self._json(), path)

    def to_html(self, path: str | Path | None = None) -> str:
        raise HtmlReportUnavailable()

    @staticmethod
    def _emit(text: str, path: str | Path | None) -> str:
        if path is not None:
            atomic_write_text(Path(path), text)
        return text


class Reporter(_ReporterBase):
    """Reports for one :class:`CanaryRunResult` (no baseline)."""

    def __init__(self, result: CanaryRunResult) -> None:
        self.result = result

    def _text(self) -> str:
        return format_run(self.result)

    def _markdown(self) -> str:
        return render_run_markdown(self.result)

    def _json(self) -> str:
        return self.result.model_dump_json(indent=2)


class DriftReporter(_ReporterBase):
    """Reports for a :class:`DriftReport`."""

    def __init__(self, report: DriftReport) -> None:
        self.report = report

    def _text(self) -> str:
        return format_drift(self.report)

    def _markdown(self) -> str:
        return render_markdown(self.report)

    def _json(self) -> str:
        return render_json(self.report)
