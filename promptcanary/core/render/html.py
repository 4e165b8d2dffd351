"""The explorable report: one self-contained HTML page (CSS, JavaScript and SVG charts inline).

Untrusted text (answers, prompts, ids, model names) reaches the page two ways, both inert: in
markup through jinja2's sandboxed autoescape, and for the script as JSON inside
``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as ``\\u003c`` …, so no
answer can close the element. The page's Content-Security-Policy allows only its own inline
script and style (by sha256 hash) and no remote load, so even markup that slipped through could
neither run nor fetch. The size is bounded: each answer is cut to :data:`ANSWER_LIMIT`
characters, at most :data:`MAX_GROUPS` distinct answers per side of a prompt are shown, today's
answers the baseline gave word for word are shown once, and the page embeds at most
:data:`PAGE_ANSWER_BUDGET` bytes of answer text (regressed, then changed prompts first).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptcanary.core.models import (
    CanaryRunResult,
    DriftReport,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
)
from promptcanary.core.render.html_charts import (
    ScoreTrend,
    pass_rate_sparkline,
    trend_chart,
    usage_charts,
)
from promptcanary.core.render.markdown import sanitize, truncate
from promptcanary.core.render.report import RESPONSE_LIMIT, unified_diff
from promptcanary.core.verdict.usage import UsageStats, compare_usage
from promptcanary.core.words import plural

__all__ = [
    "ANSWER_LIMIT",
    "MAX_GROUPS",
    "OPEN_LIMIT",
    "PAGE_ANSWER_BUDGET",
    "HtmlPair",
    "ScoreTrend",
    "render_html",
]

ANSWER_LIMIT = RESPONSE_LIMIT
"""Characters of one answer embedded in the page (the full text stays in run.json)."""
MAX_GROUPS = 10
"""Distinct answers shown per side of a prompt; the rest are counted, not shown."""
OPEN_LIMIT = 20
"""Regressed prompts shown open when the page loads (the first ones; the rest open on a click:
hundreds of views built at once would hold the page up for seconds)."""
PAGE_ANSWER_BUDGET = 6_000_000
"""UTF-8 bytes of answer text (escaped) and diffs one page embeds in all: past it, a prompt's
answers are counted and scored on the page but their texts are left to run.json."""


@dataclass(frozen=True)
class HtmlPair:
    """One suite × model: today's run, its comparison and the baseline's run when known."""

    suite: str
    model: str
    run: CanaryRunResult
    drift: DriftReport | None = None
    baseline: CanaryRunResult | None = None
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """prompt id → its tags (when the suite is known)."""
    usage: UsageStats | None = None
    """Latency, tokens and cost of the run; computed from ``run`` when not given."""
    prompt_trends: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """prompt id → its pass rate (0–1) at earlier promoted baselines, then in ``run``."""
    notes: Sequence[str] = ()
    """What the page says about this pair (e.g. why the baseline's answers are missing)."""


def _verdict_of(c: ProbeComparison) -> str:
    if c.regression:
        return "regression"
    if c.improvement:
        return "improvement"
    if c.flaky:
        return "flaky"
    if c.inconclusive:
        return "inconclusive"
    return "unchanged"


def _anchor(index: int, position: int) -> str:
    """The element id of the ``position``-th prompt view of the ``index``-th pair."""
    return f"p{index}-{position}"


def _rows(index: int, pair: HtmlPair, positions: Mapping[str, int]) -> list[list[Any]]:
    """The pair's comparisons, compactly: [pair, prompt position, probe, probe type, verdict,
    baseline, current, delta] (the script names the fields; a 2,000-prompt page has 18,000)."""
    if pair.drift is None:
        return []
    return [
        [
            index,
            positions[c.prompt_id],
            c.probe_name or c.probe_id,
            c.probe_id,
            _verdict_of(c),
            round(c.baseline_score, 4),
            round(c.current_score, 4),
            round(c.score_delta, 4),
        ]
        for c in pair.drift.comparisons
    ]


@dataclass(frozen=True)
class _RunIndex:
    """A run's answers and probe results by prompt, read once (a page of 2,000 prompts would
    otherwise scan every result of the run for each answer group)."""

    responses: dict[str, list[LLMResponse]]
    results: dict[str, list[ProbeResult]]

    @classmethod
    def of(cls, run: CanaryRunResult | None) -> _RunIndex | None:
        if run is None:
            return None
        responses: dict[str, list[LLMResponse]] = defaultdict(list)
        results: dict[str, list[ProbeResult]] = defaultdict(list)
        for response in run.llm_responses:
            responses[response.prompt_id].append(response)
        for result in run.probe_results:
            results[result.prompt_id].append(result)
        return cls(responses, results)


def _groups(run: _RunIndex | None, prompt_id: str) -> dict[str, Any]:
    """A prompt's answers grouped by identical text (most frequent first), with each group's
    probe results (passes out of samples per probe)."""
    if run is None:
        return {"known": False, "groups": [], "hidden": 0, "total": 0}
    responses = run.responses.get(prompt_id, [])
    texts = {r.sample: (r.error and f"[error] {r.error}") or r.content for r in responses}
    counts = Counter(texts.values())
    groups = []
    for text, count in counts.most_common(MAX_GROUPS):
        samples = {s for s, t in texts.items() if t == text}
        probes: dict[str, list[int]] = {}
        for result in run.results.get(prompt_id, []):
            if result.sample in samples:
                tally = probes.setdefault(result.probe_name or result.probe_id, [0, 0])
                tally[0] += int(result.passed)
                tally[1] += 1
        shown = truncate(sanitize(text), ANSWER_LIMIT)
        groups.append(
            {"text": shown, "count": count, "probes": probes, "cut": shown != text, "same": False}
        )
    return {
        "known": True,
        "groups": groups,
        "hidden": len(counts) - len(groups),
        "total": len(responses),
    }


def _prompt_views(index: int, pair: HtmlPair) -> list[dict[str, Any]]:
    drift = pair.drift
    ids = list(
        dict.fromkeys(
            [
                *pair.run.prompt_ids,
                *(pair.baseline.prompt_ids if pair.baseline else []),
                *(c.prompt_id for c in (drift.comparisons if drift else ())),
            ]
        )
    )
    regressed = {c.prompt_id for c in drift.regressions} if drift else set()
    moved = (
        {c.prompt_id for c in drift.comparisons if _verdict_of(c) != "unchanged"}
        if drift
        else set()
    )
    baseline, current = _RunIndex.of(pair.baseline), _RunIndex.of(pair.run)
    views = []
    for position, prompt_id in enumerate(ids):
        before, after = _groups(baseline, prompt_id), _groups(current, prompt_id)
        diff = ""
        if before["groups"] and after["groups"]:
            diff = unified_diff(before["groups"][0]["text"], after["groups"][0]["text"])
        # Today's answers the baseline gave word for word are shown once, on its side.
        known = {g["text"] for g in before["groups"]}
        for group in after["groups"]:
            group["same"] = group["text"] in known
        views.append(
            {
                "id": prompt_id,
                "anchor": _anchor(index, position),
                "regressed": prompt_id in regressed,
                "open": prompt_id in regressed,
                "rank": 0 if prompt_id in regressed else 1 if prompt_id in moved or diff else 2,
                "trend": pass_rate_sparkline(pair.prompt_trends.get(prompt_id, ())),
                "baseline": before,
                "current": after,
                "diff": diff,
                "embedded": True,
            }
        )
    return views


def _embedded_bytes(view: dict[str, Any]) -> int:
    """UTF-8 bytes the view's answer texts and diff take in the page's data, encoded."""
    texts = [
        g["text"]
        for side in (view["baseline"], view["current"])
        for g in side["groups"]
        if not g["same"]
    ]
    return len(script_json([*texts, view["diff"]]).encode("utf-8"))


SAME, CUT = 2, 1
"""An answer group's flag in the page's data: today's text is the baseline's; cut to the limit."""


def _side_data(side: dict[str, Any], probe_names: dict[str, int]) -> list[Any] | None:
    """One side of a view, compactly (the page has thousands): None when no answers are
    stored, else [answers, distinct ones not shown, groups]; a group is [count, text, flag,
    probe results as name index, passes, results, …]."""
    if not side["known"]:
        return None
    groups = []
    for g in side["groups"]:
        probes: list[int] = []
        for name, (passes, total) in g["probes"].items():
            probes += [probe_names.setdefault(name, len(probe_names)), passes, total]
        flag = SAME if g["same"] else CUT if g["cut"] else 0
        groups.append([g["count"], "" if g["same"] else g["text"], flag, probes])
    return [side["total"], side["hidden"], groups]


def _pairs_data(pairs: Sequence[HtmlPair], views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per pair: its names, its prompts (in view order) with their tags, and each prompt's
    side-by-side view as data, [embedded, baseline side, today's side, diff]: the page's
    script builds a view when its prompt is opened (thousands of prompts as markup would take
    Chromium seconds to parse and lay out)."""
    data = []
    for pair, view in zip(pairs, views, strict=True):
        names: dict[str, int] = {}
        data.append(
            {
                "suite": pair.suite,
                "model": pair.model,
                "prompts": [v["id"] for v in view["prompts"]],
                "tags": [list(pair.tags.get(v["id"], ())) for v in view["prompts"]],
                "views": [
                    [
                        int(v["embedded"]),
                        _side_data(v["baseline"], names),
                        _side_data(v["current"], names),
                        v["diff"],
                    ]
                    for v in view["prompts"]
                ],
                "probes": list(names),
            }
        )
    return data


def _fit_budget(views: list[dict[str, Any]], budget: int) -> int:
    """Keep the page's answer texts within ``budget`` bytes: regressed prompts first, then
    prompts whose verdict or answers changed, then the rest, each in page order; a view past
    the budget keeps its counts and probe results, not its texts. Returns the views cut."""
    spent, cut = 0, 0
    for view in sorted(views, key=lambda v: v["rank"]):  # stable: page order within a rank
        cost = _embedded_bytes(view)
        if spent + cost <= budget:
            spent += cost
            continue
        view["embedded"], view["diff"], cut = False, "", cut + 1
        for side in (view["baseline"], view["current"]):
            for group in side["groups"]:
                group["text"] = ""
    return cut


def _pair_view(index: int, pair: HtmlPair) -> dict[str, Any]:
    drift = pair.drift
    usage = pair.usage or compare_usage(None, pair.run).current
    return {
        "suite": pair.suite,
        "model": pair.model,
        "current": pair.run.overall_score,
        "baseline": drift.baseline_score if drift else None,
        "delta": drift.score_delta if drift else None,
        "regressions": len(drift.regressions) if drift else 0,
        "improvements": len(drift.improvements) if drift else 0,
        "errors": pair.run.error_count,
        "notes": list(pair.notes),
        "usage": usage,
        "prompts": _prompt_views(index, pair),
    }


def script_json(data: Any) -> str:
    """``data`` as JSON that cannot end its ``<script>`` element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def csp_hash(source: str) -> str:
    """The CSP source expression allowing exactly this inline script or style."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


@cache
def _static(name: str) -> str:
    return (files("promptcanary") / "templates" / name).read_text(encoding="utf-8")


@cache
def _environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=PackageLoader("promptcanary", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["score"] = lambda v: "–" if v is None else f"{v:.3f}"
    env.filters["delta"] = lambda v: "–" if v is None else f"{v:+.3f}"
    env.filters["num"] = lambda v, unit="": "–" if v is None else f"{v:,.0f}{unit}"
    env.filters["plural"] = plural
    return env


def render_html(
    pairs: Sequence[HtmlPair],
    *,
    verdict: str,
    title: str = "PromptCanary report",
    trends: Sequence[ScoreTrend] = (),
    artifacts_url: str | None = None,
    answer_budget: int = PAGE_ANSWER_BUDGET,
) -> str:
    """The whole page. ``verdict`` is the run's verdict line as the comment states it;
    ``answer_budget``: bytes of answer text it embeds at most (:data:`PAGE_ANSWER_BUDGET`)."""
    script, style = _static("report.js"), _static("report.css")
    views = [_pair_view(i, p) for i, p in enumerate(pairs)]
    unembedded = _fit_budget([v for view in views for v in view["prompts"]], answer_budget)
    regressed = [v for view in views for v in view["prompts"] if v["regressed"]]
    for v in regressed[OPEN_LIMIT:]:
        v["open"] = False
    positions = [{v["id"]: n for n, v in enumerate(view["prompts"])} for view in views]
    rows = [row for i, p in enumerate(pairs) for row in _rows(i, p, positions[i])]
    csp = (
        f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            verdict=verdict,
            pairs=views,
            data=script_json(
                {
                    "pairs": _pairs_data(pairs, views),
                    "rows": rows,
                    "answerLimit": ANSWER_LIMIT,
                    "maxGroups": MAX_GROUPS,
                }
            ),
            csp=csp,
            script=script,
            style=style,
            charts=[trend_chart(t) for t in trends] + usage_charts(views),
            artifacts_url=artifacts_url if (artifacts_url or "").startswith("https://") else None,
            answer_budget=answer_budget,
            unembedded=unembedded,
        )
    )
