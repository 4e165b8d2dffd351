"""Markdown and JSON renderers for drift reports and runs, over sandboxed jinja2 templates.

Markdown has no autoescape in jinja2, so the environment escapes by default instead: its
``finalize`` hook passes every ``{{ … }}`` value that is not :class:`Trusted` through
:func:`~promptcanary.core.render.markdown.escape_md`. Filters that build markup from untrusted text
(``md``, ``cell``, ``html``, ``code``, ``codespan``, ``diff``) escape it themselves and return
``Trusted``. Numbers are formatted by filters (``score``, ``delta``, ``pct``, ``pvalue``) and URLs
by ``url``; those return ``Trusted`` too. Templates are package data (``<package>/templates/*.j2``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import Any
from urllib.parse import quote, urlsplit

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptcanary.core.models import CanaryRunResult, DriftReport
from promptcanary.core.render.markdown import (
    code_block,
    code_span,
    escape_cell,
    escape_html,
    escape_md,
    escape_plain,
    sanitize,
    truncate,
)
from promptcanary.core.words import plural

RESPONSE_LIMIT = 4_000
"""Characters of one response shown in a report before it is cut (the full text is in JSON)."""


class Trusted(str):
    """Markdown built by our own code: the environment's ``finalize`` leaves it unescaped."""

    __slots__ = ()


def _finalize(value: Any) -> str:
    if isinstance(value, Trusted):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Enum):
        return escape_md(str(value.value))
    return escape_md(str(value))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def _md(value: Any, limit: int | None = None) -> Trusted:
    text = _text(value)
    return Trusted(escape_md(truncate(text, limit) if limit is not None else text))


def _cell(value: Any, limit: int | None = None) -> Trusted:
    text = _text(value)
    return Trusted(escape_cell(truncate(text, limit) if limit is not None else text))


def _html(value: Any, limit: int | None = None) -> Trusted:
    text = _text(value)
    return Trusted(escape_html(truncate(text, limit) if limit is not None else text))


def _code(value: Any, lang: str = "", limit: int | None = None) -> Trusted:
    text = _text(value)
    return Trusted(code_block(truncate(text, limit) if limit is not None else text, lang))


def _codespan(value: Any, cell: bool = False) -> Trusted:
    return Trusted(code_span(_text(value), cell=cell))


def _plain(value: Any, limit: int | None = None) -> str:
    text = escape_plain(_text(value))
    return truncate(text, limit) if limit is not None else text


def unified_diff(baseline: str, current: str, limit: int = RESPONSE_LIMIT) -> str:
    """A unified diff of two responses, each cut to ``limit`` characters first (bounded work)."""
    before = truncate(baseline, limit).splitlines()
    after = truncate(current, limit).splitlines()
    lines = difflib.unified_diff(before, after, "baseline", "current", lineterm="", n=2)
    return "\n".join(lines)


def _diff(baseline: Any, current: Any, limit: int = RESPONSE_LIMIT) -> Trusted:
    return Trusted(code_block(unified_diff(_text(baseline), _text(current), limit), "diff"))


def _score(value: float | None) -> Trusted:
    return Trusted("–" if value is None else f"{value:.3f}")


def _delta(value: float | None) -> Trusted:
    return Trusted("–" if value is None else f"{value:+.3f}")


def _pct(value: float | None) -> Trusted:
    return Trusted("–" if value is None else f"{value:.0%}")


def _pvalue(value: float | None) -> Trusted:
    if value is None:
        return Trusted("–")
    return Trusted("< 0.001" if value < 0.001 else f"{value:.3f}")


def _evalue(value: float | None) -> Trusted:
    if value is None:
        return Trusted("–")
    if value == float("inf") or value >= 1e6:
        return Trusted("> 10⁶")
    return Trusted(f"{value:,.0f}" if value >= 100 else f"{value:.2g}")


def _ci(value: tuple[float, float] | None) -> Trusted:
    if value is None:
        return Trusted("–")
    low, high = value
    return Trusted(f"[{low:+.2f}, {high:+.2f}]")


def _plural(count: int, singular: str, plural_form: str | None = None) -> Trusted:
    return Trusted(plural(count, singular, plural_form))


def _interval(value: tuple[float, float] | None) -> Trusted:
    """An unsigned interval (a meaning shift's), three decimals."""
    if value is None:
        return Trusted("–")
    low, high = value
    return Trusted(f"[{low:.3f}, {high:.3f}]")


def _url(value: Any) -> Trusted:
    """An http(s) URL safe inside ``[text](…)``; anything else becomes ``#``."""
    text = sanitize(str(value))
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return Trusted("#")
    # Parentheses, spaces and angle brackets would end the link target: percent-encode them.
    return Trusted(quote(text, safe=":/?#@!$&'*+,;=%-._~"))


def _raw(value: Any) -> Trusted:
    """For template-built markup only (never for data): marks a string as already safe."""
    return Trusted(str(value))


FILTERS: dict[str, Callable[..., Any]] = {
    "md": _md,
    "cell": _cell,
    "html": _html,
    "code": _code,
    "codespan": _codespan,
    "diff": _diff,
    "plain": _plain,
    "score": _score,
    "delta": _delta,
    "pct": _pct,
    "pvalue": _pvalue,
    "evalue": _evalue,
    "ci": _ci,
    "interval": _interval,
    "plural": _plural,
    "url": _url,
    "raw": _raw,
}


@cache
def template_environment(package: str) -> SandboxedEnvironment:
    """The sandboxed, escape-by-default environment over ``<package>/templates``."""
    env = SandboxedEnvironment(
        loader=PackageLoader(package, "templates"),
        autoescape=False,
        finalize=_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


# ------------------------------------------------------------------------------------------------
# engine renderers (CLI, library users)


def render_markdown(
    report: DriftReport, run: CanaryRunResult | None = None, *, response_limit: int = 2_000
) -> str:
    """A drift report as markdown; with ``run`` (the current run), regressed responses too."""
    template = template_environment("promptcanary").get_template("report.md.j2")
    return template.render(kind="drift", report=report, run=run, response_limit=response_limit)


def render_run_markdown(run: CanaryRunResult, *, response_limit: int = 2_000) -> str:
    """One run (no baseline) as markdown: scores, failed probes, errored responses."""
    template = template_environment("promptcanary").get_template("report.md.j2")
    return template.render(kind="run", report=None, run=run, response_limit=response_limit)


def render_json(report: DriftReport) -> str:
    """A drift report as JSON, computed fields (regressions, severity, summary …) included."""
    return report.model_dump_json(indent=2)
