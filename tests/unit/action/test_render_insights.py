"""Trend, usage, severity scale, suite links and the summary's full tables in the renderers."""

from __future__ import annotations

from typing import Any

from promptcanary.core.models import CanaryRunResult, LLMResponse, ProviderConfig
from promptcanary.core.verdict.usage import UsageLimits, compare_usage, usage_findings
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.render import (
    check_run_output,
    comment_marker,
    render_comment,
    render_issue,
    render_summary,
)
from tests.unit.action.test_render import comparison, make_outcome, make_pair

SHA = "0123456789abcdef0123456789abcdef01234567"
MARKER = comment_marker("default")


def history(*scores: float) -> list[dict[str, Any]]:
    return [
        {"sha": f"{i:x}" * 40, "time": f"2024-01-0{i + 1}T00:00:00+00:00", "overall_score": s}
        for i, s in enumerate(scores)
    ]


def linked(outcome: StepOutcome) -> StepOutcome:
    return outcome.model_copy(
        update={"repository": "acme/bot", "server_url": "https://ghe.example.com", "sha": SHA}
    )


def usage_run(completion: int, latency: float) -> CanaryRunResult:
    answers = [
        LLMResponse(
            prompt_id=p,
            provider_model_id="gpt-4o",
            content="x",
            prompt_tokens=10,
            completion_tokens=completion,
            latency_ms=latency,
        )
        for p in ("a", "b")
    ]
    return CanaryRunResult(
        suite_name="demo", provider=ProviderConfig(model_id="gpt-4o"), llm_responses=answers
    )


def with_usage(pair: PairOutcome, *, limit: float | None = None) -> PairOutcome:
    usage = compare_usage(usage_run(100, 500.0), usage_run(250, 900.0))
    findings, _ = usage_findings(usage, UsageLimits(tokens_pct=limit))
    return pair.model_copy(update={"usage": usage, "usage_findings": findings})


def test_the_comment_draws_the_trend_and_the_check_run_a_sparkline() -> None:
    pair = make_pair([comparison("p1")]).model_copy(update={"history": history(0.9, 1.0)})
    outcome = make_outcome(pair)

    comment = render_comment(outcome, MARKER)
    _, check_summary, _ = check_run_output(outcome)

    assert comment.count("```mermaid") == 1
    assert "Lines: `gpt-4o` (royalblue)" in comment
    assert "```mermaid" not in check_summary
    assert "**Score trend** of demo" in check_summary
    assert "▇█▁" in check_summary or "█▁" in check_summary


def test_no_history_no_chart() -> None:
    outcome = make_outcome(make_pair([comparison("p1")]))

    assert "mermaid" not in render_comment(outcome, MARKER)
    assert "Score trend" not in check_run_output(outcome)[1]


def test_regression_rows_link_to_the_prompt_line_at_the_commit() -> None:
    pair = make_pair([comparison("p1"), comparison("p2")])
    comment = render_comment(linked(make_outcome(pair)), MARKER)

    rows = [line for line in comment.splitlines() if line.startswith("| [`p")]
    assert rows == [
        f"| [`p1`](https://ghe.example.com/acme/bot/blob/{SHA}/canary.yaml#L10) | "
        "`json_validity` | 1.000 → 0.000 (-1.000) | not JSON |",
        f"| [`p2`](https://ghe.example.com/acme/bot/blob/{SHA}/canary.yaml#L11) | "
        "`json_validity` | 1.000 → 0.000 (-1.000) | not JSON |",
    ]


def test_without_a_repository_rows_are_not_links() -> None:
    comment = render_comment(make_outcome(make_pair([comparison("p1")])), MARKER)

    assert "| `p1` | `json_validity` |" in comment
    assert "/blob/" not in comment


def test_severity_is_explained_once_where_a_comparison_shows_it() -> None:
    compared = render_comment(make_outcome(make_pair([comparison("p1")])), MARKER)
    first_run = render_comment(make_outcome(make_pair(with_drift=False)), MARKER)

    assert compared.count("<sub>Severity: critical when ≥ 25% of comparisons regressed") == 1
    assert "Severity:" not in first_run
    pair = make_pair([comparison("p1")])
    _, issue = render_issue(make_outcome(pair), pair)
    assert issue.count("<sub>Severity: critical when") == 1


def test_usage_table_compact_in_the_comment_full_in_the_summary() -> None:
    outcome = make_outcome(with_usage(make_pair([comparison("p1")])))

    comment = render_comment(outcome, MARKER)
    summary = render_summary(outcome)

    row = next(line for line in comment.splitlines() if line.startswith("| `gpt-4o` | 900 ms"))
    assert (
        row
        == "| `gpt-4o` | 900 ms (\\+80%) | 900 ms (\\+80%) | 10\\.0 (\\+0%) | 250 (\\+150%) | — |"
    )
    assert "(was 500 ms; \\+80%)" in summary
    assert "(was 100; \\+150%)" in summary


def test_usage_findings_are_listed_apart_from_regressions() -> None:
    outcome = make_outcome(with_usage(make_pair([comparison("p1")]), limit=50))

    comment = render_comment(outcome, MARKER)

    assert "**Usage limits exceeded** (their own gate, not probe regressions):" in comment
    assert "completion tokens per answer rose \\+150\\.0%" in comment
    assert "above max\\-token\\-increase 50%" in comment


def test_the_summary_lists_every_comparison_and_the_comment_does_not() -> None:
    comparisons = [
        comparison("p1"),
        comparison("p2", baseline=1.0, current=1.0),
        comparison("p3", baseline=0.5, current=0.5, samples=5, flaky=True),
    ]
    outcome = make_outcome(make_pair(comparisons, statistical=True))

    summary = render_summary(outcome)
    comment = render_comment(outcome, MARKER)

    assert "#### All 3 comparisons: demo on `gpt-4o`" in summary
    table = summary.split("#### All 3 comparisons", 1)[1].split("\n\n")[1]
    statuses = [line.rsplit("|", 2)[-2].strip() for line in table.splitlines()[2:]]
    assert statuses == ["regression", "unchanged", "flaky"]
    assert "All 3 comparisons" not in comment
