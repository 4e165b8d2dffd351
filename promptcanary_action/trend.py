"""The score trend of a suite: promoted baselines from the history, plus the current run.

Pure: :func:`build_trend` turns history records (see :mod:`baselines.history`) into aligned
series, :func:`mermaid_chart` draws them as a Mermaid ``xychart-beta`` line chart (GitHub renders
Mermaid in comments and job summaries) and :func:`sparkline` as one line of block characters
(for the check run, where Mermaid is not rendered).

Alignment: the x axis is the promotions of every model of the suite, in time order (one per
commit), last :data:`DEFAULT_TREND_POINTS` of them, then the current run. A model promoted on
only some of those commits keeps its previous baseline score in between: that was its baseline
then. Mermaid draws a line from the first category on and has no gaps, so the axis starts at the
first promotion every charted model already had.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptcanary.core.models import CanaryRunResult
from promptcanary_action.baselines.history import prompt_history, prompt_pass_rates

DEFAULT_TREND_POINTS = 20
"""Promoted baselines drawn before the current run (input ``trend-points``)."""
CURRENT_LABEL = "this run"
CHANGED_MARK = " (model changed)"
"""Added to a point's label when a model was served by other ids than at the point before."""
SPARK_BARS = "▁▂▃▄▅▆▇█"
_LABEL_LIMIT = 40
# Mermaid's xychart lexer ends a quoted string at the next '"' (there is no escape), starts a
# markdown string at '"`', and Mermaid pre-processes '%%' comments and '#…;' entities before
# parsing: keep only characters that mean nothing to it.
_UNSAFE_LABEL = re.compile(r"[^A-Za-z0-9 ._:/@+=()\[\]-]")


LINE_COLOURS = ("royalblue", "darkorange", "seagreen", "mediumpurple", "crimson", "slategray")
"""Line colours in order, by CSS name: Mermaid's default palette starts with a near-white one,
and a "#hex" code would read as an issue reference to a markdown scanner. The legend names them,
since GitHub's Mermaid draws no legend for line charts."""
_INIT = (
    '%%{init: {"xyChart": {"height": 320}, "themeVariables": {"xyChart": '
    '{"plotColorPalette": "' + ", ".join(LINE_COLOURS) + '"}}}}%%'
)


def colour_name(index: int) -> str:
    """The name of the colour of the ``index``-th line (the palette repeats)."""
    return LINE_COLOURS[index % len(LINE_COLOURS)]


@dataclass(frozen=True)
class Trend:
    suite_name: str
    labels: list[str]
    """X axis: one label per promoted baseline (short commit), then :data:`CURRENT_LABEL`."""
    series: dict[str, list[float]]
    """Model id → overall score at each label, as many values as labels."""


@dataclass(frozen=True)
class _Promotion:
    key: str
    label: str
    order: tuple[str, int]
    score: float
    served: tuple[str, ...] = ()


def _promotions(records: Sequence[Mapping[str, Any]]) -> list[_Promotion]:
    """Usable history records (damaged lines and records without a score are skipped)."""
    found: list[_Promotion] = []
    for index, record in enumerate(records):
        score = record.get("overall_score")
        if "error" in record or not isinstance(score, int | float) or not math.isfinite(score):
            continue
        sha = str(record.get("sha") or "")
        key = sha or str(record.get("snapshot_id") or record.get("time") or index)
        label = sha[:7] if sha else str(record.get("time") or "")[:10] or f"#{index + 1}"
        served = record.get("served")
        ids = tuple(sorted(str(s) for s in served)) if isinstance(served, list) else ()
        order = (str(record.get("time") or ""), index)
        found.append(_Promotion(key, label, order, float(score), ids))
    return found


def build_trend(
    suite_name: str,
    histories: Mapping[str, Sequence[Mapping[str, Any]]],
    current: Mapping[str, float | None],
    points: int = DEFAULT_TREND_POINTS,
    current_served: Mapping[str, Sequence[str]] | None = None,
) -> Trend | None:
    """The suite's trend; None when no model of ``current`` has a usable history (no chart).

    ``histories``: model id → its history records, oldest first. ``current``: model id → the
    current run's overall score. ``points``: promoted baselines kept (the newest ones).
    ``current_served``: model id → the served model ids of the current run; a point where a
    model's served ids differ from its previous point's gets :data:`CHANGED_MARK`.
    """
    # A model whose current run scored nothing has no current point: it is not charted.
    scores = {m: s for m, s in current.items() if s is not None}
    per_model = {m: _promotions(histories.get(m, ())) for m in scores}
    per_model = {m: p for m, p in per_model.items() if p}
    if not per_model or points < 1:
        return None
    timeline: dict[str, _Promotion] = {}
    for promotions in per_model.values():
        for p in promotions:
            known = timeline.get(p.key)
            timeline[p.key] = p if known is None or p.order < known.order else known
    events = sorted(timeline.values(), key=lambda p: p.order)
    columns: dict[str, list[float | None]] = {}
    for model, promotions in per_model.items():
        score_at = {p.key: p.score for p in promotions}
        running: float | None = None
        column: list[float | None] = []
        for event in events:
            running = score_at.get(event.key, running)
            column.append(running)
        columns[model] = column
    first_full = max(next(i for i, v in enumerate(c) if v is not None) for c in columns.values())
    start = max(first_full, len(events) - points)
    changed = _served_changes(events, per_model, current_served or {})
    labels = [*_unique([e.label for e in events[start:]]), CURRENT_LABEL]
    labels = [
        label + CHANGED_MARK if c else label
        for label, c in zip(labels, changed[start:], strict=True)
    ]
    series = {m: [*(v for v in c[start:] if v is not None), scores[m]] for m, c in columns.items()}
    return Trend(suite_name, labels, series)


def prompt_trends(
    history: Sequence[Mapping[str, Any]], run: CanaryRunResult
) -> dict[str, list[float]]:
    """Prompt id → its pass rate at each promoted baseline of ``history`` that recorded it, then
    in ``run``; only prompts with at least one earlier point (a lone point is no trend)."""
    trends = {}
    for prompt_id, rate in prompt_pass_rates(run).items():
        earlier = prompt_history(history, prompt_id)
        if earlier:
            trends[prompt_id] = [*earlier, rate]
    return trends


def _served_changes(
    events: Sequence[_Promotion],
    per_model: Mapping[str, Sequence[_Promotion]],
    current: Mapping[str, Sequence[str]],
) -> list[bool]:
    """For each event and then the current run: whether a model was served by other ids than
    at its previous promotion (sides that name none are not compared)."""
    changed = [False] * (len(events) + 1)
    index = {e.key: i for i, e in enumerate(events)}
    for model, promotions in per_model.items():
        points = [(index[p.key], p.served) for p in promotions if p.key in index]
        points.append((len(events), tuple(sorted(current.get(model, ())))))
        previous: tuple[str, ...] = ()
        for at, served in sorted(points, key=lambda p: p[0]):
            if served and previous and served != previous:
                changed[at] = True
            previous = served or previous
    return changed


def _unique(labels: list[str]) -> list[str]:
    """Labels made distinct (a band axis merges equal categories): ``abc1234 (2)``."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


# ------------------------------------------------------------------------------------------------
# drawing


def mermaid_label(text: str) -> str:
    """``text`` as a quoted Mermaid string that cannot end early or inject a statement."""
    flat = _UNSAFE_LABEL.sub("_", text)
    if len(flat) > _LABEL_LIMIT:
        flat = flat[: _LABEL_LIMIT - 1] + "…"
    return f'"{flat.strip() or "_"}"'


def _axis_range(values: list[float]) -> tuple[int, int]:
    """Y range in whole percent, padded and rounded to fives so small moves stay visible."""
    low, high = min(values) * 100, max(values) * 100
    bottom = max(0, math.floor((low - 5) / 5) * 5)
    top = min(100, math.ceil((high + 5) / 5) * 5)
    return (bottom, top) if top > bottom else (max(0, top - 10), max(top, 10))


def mermaid_chart(trend: Trend) -> str:
    """A fenced ``mermaid`` block with one line per model (scores in percent)."""
    values = [v for series in trend.series.values() for v in series]
    bottom, top = _axis_range(values)
    lines = [
        "```mermaid",
        _INIT,
        "xychart-beta",
        f"    title {mermaid_label('Score trend: ' + trend.suite_name)}",
        f"    x-axis [{', '.join(mermaid_label(label) for label in trend.labels)}]",
        f'    y-axis "score (0-100)" {bottom} --> {top}',
    ]
    for model, series in trend.series.items():
        data = ", ".join(f"{v * 100:.1f}" for v in series)
        lines.append(f"    line {mermaid_label(model)} [{data}]")
    lines.append("```")
    return "\n".join(lines)


def sparkline(values: Sequence[float]) -> str:
    """``▂▅█``: each value as a bar scaled between the series' minimum and maximum."""
    if not values:
        return ""
    low, high = min(values), max(values)
    if high - low < 1e-9:
        return SPARK_BARS[len(SPARK_BARS) // 2] * len(values)
    top = len(SPARK_BARS) - 1
    return "".join(SPARK_BARS[round((v - low) / (high - low) * top)] for v in values)
