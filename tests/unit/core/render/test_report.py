"""Tests for the engine's markdown and JSON report renderers."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from jinja2.sandbox import SecurityError

from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryRunResult,
    DriftReport,
    ErroredResult,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.render.report import (
    Trusted,
    render_json,
    render_markdown,
    render_run_markdown,
    template_environment,
    unified_diff,
)

PROVIDER = ProviderConfig(model_id="gpt-4o")
HOSTILE = "@octocat <img src=x> ![x](http://e) #1\x00\u202e"


def comparison(prompt_id: str, baseline: float, current: float, **extra: object) -> ProbeComparison:
    return ProbeComparison(
        probe_id="json_validity",
        prompt_id=prompt_id,
        baseline_score=baseline,
        current_score=current,
        score_delta=current - baseline,
        baseline_passed=baseline >= 0.5,
        current_passed=current >= 0.5,
        regression=current < baseline - 0.05,
        improvement=current > baseline + 0.05,
        **extra,  # type: ignore[arg-type]
    )


def report(**extra: object) -> DriftReport:
    return DriftReport(
        suite_name="demo",
        provider=PROVIDER,
        baseline_snapshot_id="snap-1",
        baseline_created_at=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        current_run_id="run-2",
        **extra,  # type: ignore[arg-type]
    )


def run(*responses: LLMResponse, results: list[ProbeResult] | None = None) -> CanaryRunResult:
    return CanaryRunResult(
        suite_name="demo",
        provider=PROVIDER,
        llm_responses=list(responses),
        probe_results=results or [],
    )


def test_drift_markdown_lists_regressions_improvements_and_changes() -> None:
    r = report(
        comparisons=[
            comparison("p1", 1.0, 0.0, current_details="not JSON"),
            comparison("p2", 0.0, 1.0),
            comparison("p3", 1.0, 1.0),
        ],
        new_prompts=["p-new"],
        removed_prompts=["p-old"],
        errored=[ErroredResult(prompt_id="p4", probe_key="k", side="current", error="timeout")],
        warnings=["model differs"],
        rescored_responses=3,
    )
    md = render_markdown(r)
    assert md.startswith("# PromptCanary drift report: demo\n")
    assert "| `p1` | `json_validity` | 1.000 | 0.000 | -1.000 | not JSON |" in md
    assert "## Improvements (1)" in md and "| `p2` |" in md
    assert "## New prompts (1)\n\n- `p-new`" in md
    assert "## Removed prompts (1)\n\n- `p-old`" in md
    assert "- `p4` / `k` (current): timeout" in md
    assert "- model differs" in md
    assert "3 baseline responses re-scored" in md
    assert "Baseline `snap-1` from 2024\\-05\\-01 12:00 UTC." in md


def test_statistical_report_explains_the_numbers() -> None:
    c = comparison(
        "p1",
        0.9,
        0.3,
        baseline_samples=5,
        current_samples=5,
        baseline_pass_rate=1.0,
        current_pass_rate=0.2,
        pass_rate_ci=(-0.95, -0.45),
        p_adjusted=0.0004,
    )
    md = render_markdown(report(comparisons=[c], statistical=True, alpha=0.05))
    assert "5 samples per prompt" in md and "α = 0.05" in md
    assert "| 100% → 20% | [-0.95, -0.45] | < 0.001 |" in md


def test_adaptive_report_shows_answers_e_values_and_inconclusive() -> None:
    stats = {"baseline_pass_rate": 0.95, "pass_rate_ci": (-0.7, -0.2)}
    regressed = comparison(
        "p1", 0.95, 0.5, baseline_samples=140, current_samples=20, current_pass_rate=0.5,
        e_value=2.5e7, p_adjusted=0.0004, verdict="regressed", **stats,
    )  # fmt: skip
    open_ = comparison(
        "p2", 0.95, 0.92, baseline_samples=130, current_samples=60, current_pass_rate=0.75,
        verdict="inconclusive", **stats,
    )  # fmt: skip
    info = AdaptiveSampling(min_samples=3, max_samples=60)
    md = render_markdown(
        report(comparisons=[regressed, open_], statistical=True, alpha=0.05, adaptive=info,
               baseline_pool_runs=20)
    )  # fmt: skip
    assert "at most 60 answers), against a baseline pool of 20 promoted runs" in md
    assert "| 95% → 50% | 140 → 20 | [-0.70, -0.20] | > 10⁶ | < 0.001 |" in md
    assert "## Inconclusive (1)" in md and "| `p2` | `json_validity` | 95% → 75% | 130 → 60 |" in md


def test_drift_markdown_with_run_shows_regressed_responses_safely() -> None:
    r = report(comparisons=[comparison("p1", 1.0, 0.0, current_details=HOSTILE)])
    md = render_markdown(
        r, run(LLMResponse(prompt_id="p1", provider_model_id="m", content=HOSTILE + "\n```"))
    )
    assert "<details><summary>p1</summary>" in md
    prose, _, block = md.partition("<details>")
    # The response's own ``` line sits inside a longer fence: opening and closing only.
    assert block.split("\n").count("````") == 2 and "\n```\n````\n" in block
    assert "@octocat" not in md and "![" not in prose and "<img" not in prose
    assert "&lt;img src\\=x&gt;" in prose
    assert "\x00" not in md and "\u202e" not in md


def test_run_markdown_lists_failed_probes_and_errors() -> None:
    r = run(
        LLMResponse(prompt_id="p1", provider_model_id="m", content="x"),
        LLMResponse(prompt_id="p2", provider_model_id="m", error="RateLimitError"),
        results=[
            ProbeResult(
                probe_id="json_validity", prompt_id="p1", passed=False, score=0.25, details="a|b"
            ),
            ProbeResult(probe_id="refusal", prompt_id="p1", passed=True, score=1.0),
        ],
    )
    md = render_run_markdown(r)
    assert "| `gpt-4o` | 0.625 | 50% | 2 | 1 |" in md
    assert "| `p1` | `json_validity` | 0.250 | a\\|b |" in md
    assert "- `p2` (sample 0): RateLimitError" in md
    assert "refusal" not in md


def test_json_has_computed_fields() -> None:
    data = json.loads(render_json(report(comparisons=[comparison("p1", 1.0, 0.0)])))
    assert data["severity"] == "critical"
    assert data["has_regressions"] is True
    assert [c["prompt_id"] for c in data["regressions"]] == ["p1"]
    assert data["score_delta"] == -1.0
    assert "1 regression" in data["summary"]


def test_unified_diff_bounds_its_inputs() -> None:
    diff = unified_diff("a\n" * 10_000, "b\n" * 10_000, limit=100)
    assert diff.count("\n-a") <= 50
    assert "more characters" in diff


def test_environment_escapes_by_default_and_trusts_only_marked_markup() -> None:
    env = template_environment("promptcanary")
    template = env.from_string("{{ text }}|{{ trusted }}|{{ text|codespan }}|{{ n }}|{{ flag }}")
    out = template.render(text="*@a*", trusted=Trusted("*b*"), n=0.5, flag=True)
    assert out == "\\*@\u200ba\\*|*b*|`*@\u200ba*`|0.5|yes"


def test_environment_is_sandboxed() -> None:
    env = template_environment("promptcanary")
    for source in ("{{ x.__class__.__mro__ }}", "{{ x.__class__ }}", "{{ x.format.__globals__ }}"):
        with pytest.raises(SecurityError):
            env.from_string(source).render(x="")


def test_url_filter_rejects_other_schemes() -> None:
    env = template_environment("promptcanary")
    render = env.from_string("{{ u|url }}").render
    assert render(u="javascript:alert(1)") == "#"
    assert render(u="https://x/a b)c") == "https://x/a%20b%29c"


def test_drift_markdown_with_a_run_that_kept_no_responses_renders() -> None:
    # A run built from probe results alone (a library user's, or an old run.json) has no
    # response text to show: the report leaves the section out instead of failing to render.
    r = report(comparisons=[comparison("p1", 1.0, 0.0, current_details="not JSON")])
    results = [ProbeResult(probe_id="json_validity", prompt_id="p1", passed=False, score=0.0)]
    md = render_markdown(r, run(results=results))
    assert "## Regressions (1)" in md
    assert "<details>" not in md


def test_terminal_drift_lists_inconclusive_comparisons() -> None:
    from promptcanary.core.render.terminal import format_drift

    open_ = comparison(
        "p2", 0.95, 0.92, baseline_pass_rate=0.95, current_pass_rate=0.75, current_samples=60,
        verdict="inconclusive",
    )  # fmt: skip
    text = format_drift(report(comparisons=[open_]))
    assert "Inconclusive (undecided at max-samples; not regressions) (1):" in text
    assert "p2 / json_validity: 60 answers, pass rate 95% → 75%" in text
