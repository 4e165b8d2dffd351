"""Tests for the HTML report renderer: escaping, the CSP hashes, the size cap."""

from __future__ import annotations

import json
import re
from typing import Any

from promptcanary.core.models import LLMResponse, ProbeResult
from promptcanary.core.render.html import (
    ANSWER_LIMIT,
    MAX_GROUPS,
    OPEN_LIMIT,
    HtmlPair,
    ScoreTrend,
    csp_hash,
    render_html,
    script_json,
)
from promptcanary.core.render.html_charts import pass_rate_sparkline
from tests.unit.core.render.test_report import comparison, report, run

HOSTILE = (
    '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    '<a href="javascript:alert(1)">x</a>'
)


def answer(text: str, sample: int = 0, prompt_id: str = "p1") -> LLMResponse:
    return LLMResponse(prompt_id=prompt_id, provider_model_id="gpt-4o", content=text, sample=sample)


def page(current_text: str = HOSTILE, *, model: str = "gpt-4o", samples: int = 1) -> str:
    today = run(
        *(answer(current_text, s) for s in range(samples)),
        results=[ProbeResult(probe_id="json_validity", prompt_id="p1", passed=False, score=0.0)],
    )
    pair = HtmlPair(
        suite="demo",
        model=model,
        run=today,
        drift=report(comparisons=[comparison("p1", 1.0, 0.0)]),
        baseline=run(answer("the old answer")),
    )
    return render_html([pair], verdict="1 regression")


def page_data(html: str) -> dict[str, Any]:
    """The page's JSON data block (what its script draws the table and the views from)."""
    start = html.index('id="report-data">') + len('id="report-data">')
    data: dict[str, Any] = json.loads(html[start : html.index("</script>", start)])
    return data


def _side(side: list[Any] | None, names: list[str]) -> dict[str, Any]:
    """One side of a view as the page's script reads it (a small reader of what we write)."""
    if side is None:
        return {"known": False, "total": 0, "hidden": 0, "groups": []}
    total, hidden, groups = side
    return {
        "known": True,
        "total": total,
        "hidden": hidden,
        "groups": [
            {
                "n": n,
                "text": text,
                "cut": flag == 1,
                "same": flag == 2,
                "probes": [[names[p[i]], p[i + 1], p[i + 2]] for i in range(0, len(p), 3)],
            }
            for n, text, flag, p in groups
        ],
    }


def view(html: str, prompt_id: str, pair: int = 0) -> dict[str, Any]:
    """The side-by-side view data of ``prompt_id`` in the ``pair``-th pair."""
    data = page_data(html)["pairs"][pair]
    position = data["prompts"].index(prompt_id)
    # The prompt's element is where the script builds it.
    assert f'<details id="p{pair}-{position}"' in html
    embedded, baseline, current, diff = data["views"][position]
    return {
        "embedded": embedded == 1,
        "baseline": _side(baseline, data["probes"]),
        "current": _side(current, data["probes"]),
        "diff": diff,
    }


def texts(side: dict[str, Any]) -> list[str]:
    return [g["text"] for g in side["groups"]]


def test_hostile_answers_and_names_are_escaped_in_markup_and_json() -> None:
    html = page(model="<b>evil</b>")
    assert "<script>window.pwned" not in html
    assert "<img src=x" not in html
    assert 'href="javascript:' not in html
    assert "\\u003c/script\\u003e\\u003cscript\\u003ewindow.pwned=1" in html
    assert texts(view(html, "p1")["current"]) == [HOSTILE]  # the text itself, for textContent
    assert "&lt;b&gt;evil&lt;/b&gt;" in html
    # Exactly two script elements: the JSON data block and our own script.
    assert len(re.findall(r"<script\b", html)) == 2


def test_script_json_cannot_close_its_element_and_round_trips() -> None:
    data = {"text": HOSTILE + "<!-- & -->"}
    encoded = script_json(data)
    assert "<" not in encoded and ">" not in encoded and "&" not in encoded
    assert json.loads(encoded) == data


def test_csp_allows_exactly_the_inline_script_and_style() -> None:
    html = page()
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert script and style and csp
    policy = csp.group(1).replace("&#39;", "'")
    assert f"script-src {csp_hash(script.group(1))};" in policy
    assert f"style-src {csp_hash(style.group(1))};" in policy
    assert "default-src 'none'" in policy
    assert "unsafe-inline" not in policy


def test_answers_are_capped_and_groups_counted() -> None:
    long = page("x" * (ANSWER_LIMIT * 3))
    assert "x" * (ANSWER_LIMIT + 1) not in long
    (group,) = view(long, "p1")["current"]["groups"]
    assert group["cut"] and len(group["text"]) <= ANSWER_LIMIT
    assert page_data(long)["answerLimit"] == ANSWER_LIMIT
    today = run(*(answer(f"answer {i}", i) for i in range(MAX_GROUPS + 3)))
    many = render_html([HtmlPair("demo", "gpt-4o", today)], verdict="ok")
    current = view(many, "p1")["current"]
    assert len(current["groups"]) == MAX_GROUPS and current["hidden"] == 3
    assert current["total"] == MAX_GROUPS + 3


def test_identical_answers_are_grouped_with_their_count() -> None:
    html = page("same text", samples=4)
    (group,) = view(html, "p1")["current"]["groups"]
    assert (group["text"], group["n"]) == ("same text", 4)
    assert group["probes"] == [["json_validity", 0, 1]]  # the one result, on sample 0


def test_trend_chart_is_inline_svg_with_escaped_labels() -> None:
    trend = ScoreTrend("demo", ["abc1234", "<i>"], {"gpt-4o": [0.5, 0.9]})
    today = run(answer("a"))
    html = render_html([HtmlPair("demo", "gpt-4o", today)], verdict="ok", trends=[trend])
    assert '<polyline class="line s0"' in html
    assert "&lt;i&gt;" in html and "<i>" not in html


def test_artifacts_link_only_for_https() -> None:
    today = run(answer("a"))
    pair = [HtmlPair("demo", "gpt-4o", today)]
    assert "javascript:x" not in render_html(pair, verdict="ok", artifacts_url="javascript:x")
    linked = render_html(pair, verdict="ok", artifacts_url="https://github.com/o/r/actions/runs/1")
    assert 'href="https://github.com/o/r/actions/runs/1"' in linked


def test_a_prompt_with_a_pass_rate_history_gets_its_sparkline_in_its_summary() -> None:
    today = run(answer("a"), answer("b", prompt_id="p2"))
    trends = {"p1": [1.0, 0.5, 0.0]}
    html = render_html([HtmlPair("demo", "gpt-4o", today, prompt_trends=trends)], verdict="ok")
    summary = re.search(r"<summary>p1 (.*?)</summary>", html, re.S)
    assert summary is not None
    assert '<svg class="spark"' in summary.group(1)
    assert "pass rate: 100% → 50% → 0% (this run last)" in summary.group(1)
    # The line falls from the top to the bottom of the box.
    points = re.search(r'points="([^"]+)"', summary.group(1))
    assert points is not None
    ys = [float(p.split(",")[1]) for p in points.group(1).split()]
    assert ys[0] < ys[1] < ys[2]
    # p2 has no history: no sparkline.
    assert re.search(r"<summary>p2</summary>", html)


def test_a_single_point_is_no_sparkline() -> None:
    assert pass_rate_sparkline([0.5]) is None
    assert pass_rate_sparkline([]) is None


def test_a_pairs_notes_are_shown_escaped() -> None:
    today = run(answer("a"))
    note = "The baseline's answers are not shown: <b>x</b>"
    html = render_html([HtmlPair("demo", "gpt-4o", today, notes=[note])], verdict="ok")
    assert '<p class="note muted">The baseline&#39;s answers are not shown: &lt;b&gt;x' in html


def test_todays_answers_the_baseline_gave_word_for_word_are_shown_once() -> None:
    today = run(answer("kept answer", 0), answer("new answer", 1))
    before = run(answer("kept answer", 0), answer("kept answer", 1))
    html = render_html([HtmlPair("demo", "m", today, baseline=before)], verdict="ok")
    shown = view(html, "p1")
    assert [(g["text"], g["n"]) for g in shown["baseline"]["groups"]] == [("kept answer", 2)]
    kept, new = shown["current"]["groups"]
    assert kept["same"] and kept["text"] == "" and kept["n"] == 1
    assert not new["same"] and new["text"] == "new answer"


def test_the_page_budget_keeps_regressed_prompts_answers_first() -> None:
    ids = ["calm-1", "calm-2", "fell"]
    today = run(*(answer(f"today {p} " + "x" * 400, prompt_id=p) for p in ids))
    before = run(*(answer(f"before {p} " + "x" * 400, prompt_id=p) for p in ids))
    drift = report(comparisons=[comparison("fell", 1.0, 0.0), comparison("calm-1", 1.0, 1.0)])
    pair = HtmlPair("demo", "m", today, drift=drift, baseline=before)
    # Room for one prompt's two answers and their diff, not for two prompts.
    html = render_html([pair], verdict="ok", answer_budget=2_000)
    fell = view(html, "fell")
    assert fell["embedded"] and fell["diff"]
    assert texts(fell["baseline"]) == ["before fell " + "x" * 400]
    for calm in ("calm-1", "calm-2"):
        cut = view(html, calm)
        assert not cut["embedded"] and cut["diff"] == ""
        assert texts(cut["baseline"]) == texts(cut["current"]) == [""]
        assert cut["current"]["groups"][0]["n"] == 1 and cut["current"]["total"] == 1
    assert "The answer texts of 2 prompt view(s) are not embedded" in html
    # Without the budget's pressure every text is in.
    whole = render_html([pair], verdict="ok")
    assert "prompt view(s) are not embedded" not in whole and view(whole, "calm-2")["embedded"]
    assert texts(view(whole, "calm-2")["current"]) == ["today calm-2 " + "x" * 400]


def test_only_the_first_regressed_prompts_are_open_when_the_page_loads() -> None:
    ids = [f"r{i:02d}" for i in range(OPEN_LIMIT + 2)]
    today = run(*(answer("new", prompt_id=p) for p in ids))
    drift = report(comparisons=[comparison(p, 1.0, 0.0) for p in ids])
    html = render_html([HtmlPair("demo", "m", today, drift=drift)], verdict="ok")
    opened = re.findall(r'<details id="[^"]+" class="prompt regressed" open>\n<summary>(\w+)', html)
    closed = re.findall(r'<details id="[^"]+" class="prompt regressed">\n<summary>(\w+)', html)
    assert opened == ids[:OPEN_LIMIT] and closed == ids[OPEN_LIMIT:]
