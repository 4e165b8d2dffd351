"""The explorable report: one self-contained HTML page (CSS, JavaScript and SVG charts inline).

Untrusted text (answers, prompts, ids, model names) reaches the page two ways, both inert: in
markup through jinja2's sandboxed autoescape, and for the script as JSON inside
``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as ``\\u003c`` …, so no
answer can close the element. The page's Content-Security-Policy allows only its own inline
script and style (by sha256 hash) and no remote load, so even markup that slipped through could
neither run nor fetch. The size is bounded: each answer is cut to :data:`ANSWER_LIMIT`
characters and at most :data:`MAX_GROUPS` distinct answers per side of a prompt are shown.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptcanary.core.models import CanaryRunResult, DriftReport, ProbeComparison
from promptcanary.core.render.html_charts import ScoreTrend, trend_chart, usage_charts
from promptcanary.core.render.markdown import sanitize, truncate
from promptcanary.core.render.report import RESPONSE_LIMIT, unified_diff
from promptcanary.core.verdict.usage import UsageStats, compare_usage
from promptcanary.core.words import plural

__all__ = ["ANSWER_LIMIT", "MAX_GROUPS", "HtmlPair", "ScoreTrend", "render_html"]

ANSWER_LIMIT = RESPONSE_LIMIT
"""Characters of one answer embedded in the page (the full text stays in run.json)."""
MAX_GROUPS = 10
"""Distinct answers shown per side of a prompt; the rest are counted, not shown."""


@dataclass(frozen=True)
class HtmlPair:
    """One suite × model: today's run, its comparison and the baseline's run when known."""

    suite: str
    model: str
    run: CanaryRunResult
    drift: DriftReport | None = None
    baseline: CanaryRunResult | None = None
    tags: dict[str, Sequence[str]] = field(default_factory=dict)
    """prompt id → its tags (when the suite is known)."""
    usage: UsageStats | None = None
    """Latency, tokens and cost of the run; computed from ``run`` when not given."""


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


def _anchor(index: int, prompt_id: str) -> str:
    digest = hashlib.sha256(prompt_id.encode()).hexdigest()[:10]
    return f"p{index}-{digest}"


def _rows(index: int, pair: HtmlPair) -> list[dict[str, Any]]:
    if pair.drift is None:
        return []
    return [
        {
            "suite": pair.suite,
            "model": pair.model,
            "prompt": c.prompt_id,
            "probe": c.probe_name or c.probe_id,
            "type": c.probe_id,
            "tags": list(pair.tags.get(c.prompt_id, ())),
            "verdict": _verdict_of(c),
            "baseline": round(c.baseline_score, 4),
            "current": round(c.current_score, 4),
            "delta": round(c.score_delta, 4),
            "anchor": _anchor(index, c.prompt_id),
        }
        for c in pair.drift.comparisons
    ]


def _groups(run: CanaryRunResult | None, prompt_id: str) -> dict[str, Any]:
    """A prompt's answers grouped by identical text (most frequent first), with each group's
    probe results (passes out of samples per probe)."""
    if run is None:
        return {"known": False, "groups": [], "hidden": 0, "total": 0}
    responses = run.responses_for(prompt_id)
    texts = {r.sample: (r.error and f"[error] {r.error}") or r.content for r in responses}
    counts = Counter(texts.values())
    groups = []
    for text, count in counts.most_common(MAX_GROUPS):
        samples = {s for s, t in texts.items() if t == text}
        probes: dict[str, list[int]] = {}
        for result in run.probe_results:
            if result.prompt_id == prompt_id and result.sample in samples:
                tally = probes.setdefault(result.probe_name or result.probe_id, [0, 0])
                tally[0] += int(result.passed)
                tally[1] += 1
        shown = truncate(sanitize(text), ANSWER_LIMIT)
        groups.append({"text": shown, "count": count, "probes": probes, "cut": shown != text})
    return {
        "known": True,
        "groups": groups,
        "hidden": len(counts) - len(groups),
        "total": len(responses),
    }


def _prompt_views(index: int, pair: HtmlPair) -> list[dict[str, Any]]:
    ids = list(
        dict.fromkeys([*pair.run.prompt_ids, *(pair.baseline.prompt_ids if pair.baseline else [])])
    )
    regressed = {c.prompt_id for c in pair.drift.regressions} if pair.drift else set()
    views = []
    for prompt_id in ids:
        before, after = _groups(pair.baseline, prompt_id), _groups(pair.run, prompt_id)
        diff = ""
        if before["groups"] and after["groups"]:
            diff = unified_diff(before["groups"][0]["text"], after["groups"][0]["text"])
        views.append(
            {
                "id": prompt_id,
                "anchor": _anchor(index, prompt_id),
                "regressed": prompt_id in regressed,
                "baseline": before,
                "current": after,
                "diff": diff,
            }
        )
    return views


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
) -> str:
    """The whole page. ``verdict`` is the run's verdict line as the comment states it."""
    script, style = _static("report.js"), _static("report.css")
    views = [_pair_view(i, p) for i, p in enumerate(pairs)]
    rows = [row for i, p in enumerate(pairs) for row in _rows(i, p)]
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
            data=script_json({"rows": rows}),
            csp=csp,
            script=script,
            style=style,
            charts=[trend_chart(t) for t in trends] + usage_charts(views),
            artifacts_url=artifacts_url if (artifacts_url or "").startswith("https://") else None,
            answer_limit=ANSWER_LIMIT,
            max_groups=MAX_GROUPS,
        )
    )
