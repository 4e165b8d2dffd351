"""The score trend: alignment of histories, the Mermaid chart (escaped), the sparkline."""

from __future__ import annotations

import re
from typing import Any

from promptcanary.core.models import BaselineSnapshot
from promptcanary_action.baselines.history import history_record
from promptcanary_action.trend import (
    CHANGED_MARK,
    CURRENT_LABEL,
    DEFAULT_TREND_POINTS,
    SPARK_BARS,
    build_trend,
    mermaid_chart,
    mermaid_label,
    prompt_trends,
    sparkline,
)
from tests.unit.action.outcomes import run_result

LINE_RE = re.compile(r'^    line "([^"]*)" \[([^\]]*)\]$')
QUOTED_RE = re.compile(r'"([^"]*)"')


def records(scores: list[float], *, model: str = "m", start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "time": f"2024-05-{1 + (start + i) // 24:02d}T{(start + i) % 24:02d}:00:00+00:00",
            "sha": f"{start + i:07x}" + "0" * 33,
            "model": model,
            "overall_score": score,
        }
        for i, score in enumerate(scores)
    ]


def chart_lines(chart: str) -> dict[str, list[float]]:
    """Model label → data of each ``line`` statement (a small reader of what we write)."""
    found: dict[str, list[float]] = {}
    for line in chart.splitlines():
        match = LINE_RE.match(line)
        if match:
            found[match.group(1)] = [float(v) for v in match.group(2).split(",")]
    return found


def test_five_promotions_and_the_current_run_are_six_points_per_model() -> None:
    histories = {
        "openai/gpt-4o": records([0.9, 0.92, 0.95, 0.9, 0.85]),
        "anthropic/claude": records([0.7, 0.75, 0.8, 0.8, 0.82]),
    }

    trend = build_trend("Support bot", histories, {"openai/gpt-4o": 0.8, "anthropic/claude": 0.9})

    assert trend is not None
    assert len(trend.labels) == 6 and trend.labels[-1] == CURRENT_LABEL
    assert trend.labels[0] == "0000000"
    chart = mermaid_chart(trend)
    assert chart.startswith("```mermaid\n%%{init:") and "\nxychart-beta\n" in chart
    assert chart.endswith("\n```")
    lines = chart_lines(chart)
    assert lines == {
        "openai/gpt-4o": [90.0, 92.0, 95.0, 90.0, 85.0, 80.0],
        "anthropic/claude": [70.0, 75.0, 80.0, 80.0, 82.0, 90.0],
    }
    x_axis = next(line for line in chart.splitlines() if line.strip().startswith("x-axis"))
    assert len(QUOTED_RE.findall(x_axis)) == 6


def test_no_history_means_no_chart() -> None:
    assert build_trend("s", {}, {"m": 0.5}) is None
    assert build_trend("s", {"m": []}, {"m": 0.5}) is None
    damaged = [{"line": 1, "error": "not valid JSON"}, {"sha": "x", "overall_score": "high"}]
    assert build_trend("s", {"m": damaged}, {"m": 0.5}) is None


def test_two_hundred_entries_draw_only_the_last_n() -> None:
    scores = [round(i / 400, 4) for i in range(200)]

    trend = build_trend("s", {"m": records(scores)}, {"m": 1.0})
    short = build_trend("s", {"m": records(scores)}, {"m": 1.0}, points=5)

    assert trend is not None and short is not None
    assert trend.series["m"] == [*scores[-DEFAULT_TREND_POINTS:], 1.0]
    assert short.series["m"] == [*scores[-5:], 1.0]
    assert len(chart_lines(mermaid_chart(short))["m"]) == 6


def test_hostile_model_ids_and_suite_names_cannot_break_the_chart() -> None:
    hostile = 'evil"] \n line "x" [1;%%{init: {}}%% #quot; `md`'
    trend = build_trend(hostile, {hostile: records([0.5, 0.6])}, {hostile: 0.7})

    assert trend is not None
    chart = mermaid_chart(trend)
    init, *body = chart.splitlines()[1:-1]
    # Every statement is on its own line; quotes are balanced; the only line is ours.
    assert init.startswith("%%{init:") and init.endswith("}%%")
    assert [line.split()[0] for line in body] == [
        "xychart-beta",
        "title",
        "x-axis",
        "y-axis",
        "line",
    ]
    assert all(line.count('"') % 2 == 0 for line in body)
    assert not any(ch in "\n".join(body) for ch in (";", "%", "#", "`"))
    assert list(chart_lines(chart).values()) == [[50.0, 60.0, 70.0]]


def test_label_escaping_keeps_ordinary_model_ids() -> None:
    assert mermaid_label("openai/gpt-4o-mini") == '"openai/gpt-4o-mini"'
    assert mermaid_label('a"b;c') == '"a_b_c"'
    assert mermaid_label("") == '"_"'
    assert len(mermaid_label("x" * 300)) <= 42


def test_models_promoted_on_different_commits_share_one_axis() -> None:
    # m1 promoted on commits 0..3; m2 only on 2 and 3: the axis starts where both have a value,
    # and a model not promoted on a commit keeps its previous baseline score there.
    m1 = records([0.1, 0.2, 0.3, 0.4])
    m2 = [m1[2] | {"overall_score": 0.9}]
    trend = build_trend("s", {"m1": m1, "m2": m2}, {"m1": 0.5, "m2": 0.95})

    assert trend is not None
    assert trend.series == {"m1": [0.3, 0.4, 0.5], "m2": [0.9, 0.9, 0.95]}
    assert len(trend.labels) == 3


def test_a_model_without_history_is_left_out_of_the_chart() -> None:
    trend = build_trend("s", {"m1": records([0.5])}, {"m1": 0.6, "new/model": 0.7})

    assert trend is not None and set(trend.series) == {"m1"}


def test_repeated_commits_get_distinct_axis_labels() -> None:
    rerun = records([0.5, 0.6])
    rerun[1] = rerun[1] | {"sha": rerun[0]["sha"], "snapshot_id": "b"}
    rerun[0] = rerun[0] | {"sha": "", "snapshot_id": "a", "time": "2024-05-01T00:00:00+00:00"}
    trend = build_trend("s", {"m": [*rerun, rerun[1] | {"sha": "", "snapshot_id": "c"}]}, {"m": 1})

    assert trend is not None
    assert len(set(trend.labels)) == len(trend.labels)


def test_sparkline_scales_between_the_minimum_and_maximum() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == SPARK_BARS[0] + SPARK_BARS[4] + SPARK_BARS[-1]
    assert sparkline([0.2, 0.2]) == SPARK_BARS[4] * 2
    assert sparkline([]) == ""
    assert len(sparkline([0.1] * 21)) == 21


def test_prompt_trends_follow_each_prompt_over_promotions_then_this_run() -> None:
    # p0 passes throughout; p1 passed at the first promotion and fails at the second and now.
    first = history_record(BaselineSnapshot.of_run(run_result(passed=2)), sha="a", ref="main")
    second = history_record(
        BaselineSnapshot.of_run(run_result(passed=1, failed=1)), sha="b", ref="main"
    )
    now = run_result(passed=1, failed=2)

    trends = prompt_trends([first, second], now)

    assert trends == {"p0": [1.0, 1.0, 1.0], "p1": [1.0, 0.0, 0.0]}  # p2 is new: no trend


def test_prompt_trends_of_a_history_from_before_prompt_pass_are_empty() -> None:
    older = [{k: v for k, v in r.items() if k != "prompt_pass"} for r in records([0.5, 0.7])]

    assert prompt_trends(older, run_result(passed=2)) == {}
    assert build_trend("s", {"m": older}, {"m": 0.9}) is not None  # the suite trend still draws


def test_a_point_where_the_served_model_changed_is_marked() -> None:
    history = records([0.9, 0.9, 0.8])
    for record, served in zip(history, (["gpt-a"], ["gpt-a"], ["gpt-b"]), strict=True):
        record["served"] = served

    trend = build_trend("s", {"m": history}, {"m": 0.8}, current_served={"m": ["gpt-c"]})

    assert trend is not None
    marked = [label.endswith(CHANGED_MARK) for label in trend.labels]
    assert marked == [False, False, True, True]  # gpt-a, gpt-a, gpt-b, then gpt-c
    assert trend.labels[-1] == CURRENT_LABEL + CHANGED_MARK
    assert "(model changed)" in mermaid_chart(trend)


def test_no_mark_for_the_same_ids_or_where_none_were_recorded() -> None:
    history = records([0.9, 0.9])
    history[1]["served"] = ["gpt-a"]  # the first promotion predates served ids

    same = build_trend("s", {"m": history}, {"m": 0.9}, current_served={"m": ["gpt-a"]})
    unknown = build_trend("s", {"m": history}, {"m": 0.9}, current_served={"m": []})

    assert same is not None and unknown is not None
    assert not any(label.endswith(CHANGED_MARK) for label in [*same.labels, *unknown.labels])
