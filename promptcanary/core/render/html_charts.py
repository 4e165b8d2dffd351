"""Inline SVG charts for the HTML report: the score trend, latency/tokens/cost per model and
each prompt's pass-rate history.

Every label is escaped here (``markupsafe.escape``); the page inserts the returned ``Markup``
as is. Colours come from CSS classes (``s0`` … ``s5``), so both themes style them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape


@dataclass(frozen=True)
class ScoreTrend:
    """One suite's overall score per model over its promoted baselines, then this run."""

    suite: str
    labels: Sequence[str]
    series: dict[str, Sequence[float]]


WIDTH, HEIGHT, PAD = 600, 220, 40
SERIES_CLASSES = 6


def _chart(title: str, body: str, legend: Sequence[str]) -> Markup:
    items = "".join(
        f'<li><span class="key s{i % SERIES_CLASSES}"></span>{escape(name)}</li>'
        for i, name in enumerate(legend)
    )
    return Markup(
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">{body}</svg>'
        f'<ul class="legend">{items}</ul></figure>'
    )


def trend_chart(trend: ScoreTrend) -> Markup:
    """Overall score (0–1) per model at each promoted baseline, then this run."""
    labels = list(trend.labels)
    step = (WIDTH - 2 * PAD) / max(1, len(labels) - 1)
    parts = [
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" '
        f'x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>',
        f'<text class="tick" x="4" y="{PAD + 4}">1.0</text>',
        f'<text class="tick" x="4" y="{HEIGHT - PAD + 4}">0.0</text>',
    ]
    for i, label in enumerate(labels):
        parts.append(
            f'<text class="tick" x="{PAD + i * step:.1f}" y="{HEIGHT - 12}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    for n, values in enumerate(trend.series.values()):
        points = " ".join(
            f"{PAD + i * step:.1f},{HEIGHT - PAD - v * (HEIGHT - 2 * PAD):.1f}"
            for i, v in enumerate(values)
        )
        parts.append(f'<polyline class="line s{n % SERIES_CLASSES}" points="{points}"/>')
    return _chart(f"Score trend: {trend.suite}", "".join(parts), list(trend.series))


def _bars(title: str, values: list[tuple[str, float | None]], unit: str) -> Markup | None:
    known = [(name, v) for name, v in values if v is not None]
    if not known:
        return None
    top = max(v for _, v in known) or 1.0
    row = (HEIGHT - 20) / len(known)
    parts = []
    for n, (_, value) in enumerate(known):
        width = (WIDTH - 200) * value / top
        y = 10 + n * row
        parts.append(
            f'<rect class="bar s{n % SERIES_CLASSES}" x="10" y="{y:.1f}" '
            f'width="{max(width, 1):.1f}" height="{row * 0.7:.1f}"/>'
            f'<text class="tick" x="{width + 16:.1f}" y="{y + row * 0.45:.1f}">'
            f"{escape(_fmt(value, unit))}</text>"
        )
    return _chart(title, "".join(parts), [name for name, _ in known])


def _fmt(value: float, unit: str) -> str:
    if unit == "$":
        return f"${value:.4f}"
    return f"{value:,.0f} {unit}".strip()


def usage_charts(pairs: Sequence[dict[str, Any]]) -> list[Markup]:
    """p50 latency, completion tokens per answer and cost of the run, one bar per pair."""
    name = [f"{p['model']} · {p['suite']}" for p in pairs]
    metrics = (
        ("p50 latency", "latency_p50_ms", "ms"),
        ("Completion tokens per answer", "completion_tokens", "tokens"),
        ("Cost of the run", "cost_usd", "$"),
    )
    charts = []
    for title, attribute, unit in metrics:
        chart = _bars(
            title,
            [(n, getattr(p["usage"], attribute)) for n, p in zip(name, pairs, strict=True)],
            unit,
        )
        if chart is not None:
            charts.append(chart)
    return charts


SPARK_WIDTH, SPARK_HEIGHT = 96, 20


def pass_rate_sparkline(rates: Sequence[float]) -> Markup | None:
    """A prompt's pass rate at each promoted baseline, then this run (the last point, marked):
    a small line, its figures in the tooltip. None for fewer than two points."""
    if len(rates) < 2:
        return None
    step = (SPARK_WIDTH - 4) / (len(rates) - 1)
    points = [
        (2 + i * step, SPARK_HEIGHT - 2 - r * (SPARK_HEIGHT - 4)) for i, r in enumerate(rates)
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    figures = " → ".join(f"{r:.0%}" for r in rates)
    last_x, last_y = points[-1]
    # Thousands of these on a large page: the size is in the stylesheet, the figures in the
    # title only (the tooltip, and what a screen reader reads).
    return Markup(
        f'<svg class="spark" viewBox="0 0 {SPARK_WIDTH} {SPARK_HEIGHT}" role="img">'
        f"<title>pass rate: {escape(figures)} (this run last)</title>"
        f'<polyline class="line s0" points="{line}"/>'
        f'<circle class="dot" cx="{last_x:.1f}" cy="{last_y:.1f}" r="2"/></svg>'
    )
