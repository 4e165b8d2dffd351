"""Tests for the comment, summary, issue and check-run renderers (hand-built outcomes)."""

from __future__ import annotations

import re

import pytest

from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryRunResult,
    ErroredResult,
    LLMResponse,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
    ResultRef,
)
from promptcanary_action.outcome import BaselineStatus, PairOutcome, StepOutcome
from promptcanary_action.render import (
    check_run_output,
    comment_marker,
    render_comment,
    render_issue,
    render_summary,
)
from tests.unit.action.outcomes import drift_of

HOSTILE = (
    "::error::pwned\n@octocat and @org/team see #1 and GH-2 and owner/repo#3\n"
    "<img src=x onerror=alert(1)> ![x](http://e) [link](javascript:alert(1))\n"
    "```\n~~~\n| a | b |\n\u202eevil\u2066 nul\x00 end"
)
LIVE_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
LIVE_REFERENCE = re.compile(r"(?<![\w`])#\d|GH-\d")


def comparison(
    prompt_id: str,
    probe_key: str = "json_validity",
    *,
    baseline: float = 1.0,
    current: float = 0.0,
    details: str = "not JSON",
    samples: int = 1,
    flaky: bool = False,
    improvement: bool = False,
) -> ProbeComparison:
    statistical = samples > 1
    return ProbeComparison(
        probe_id=probe_key.split(":")[0],
        probe_key=probe_key,
        prompt_id=prompt_id,
        baseline_score=baseline,
        current_score=current,
        score_delta=current - baseline,
        baseline_passed=baseline >= 0.5,
        current_passed=current >= 0.5,
        regression=current < baseline and not improvement,
        improvement=improvement,
        current_details=details,
        baseline_samples=samples,
        current_samples=samples,
        baseline_pass_rate=baseline if statistical else None,
        current_pass_rate=current if statistical else None,
        pass_rate_ci=(-0.9, -0.4) if statistical else None,
        p_adjusted=0.0123 if statistical else None,
        flaky=flaky,
    )


def response(prompt_id: str, content: str, *, error: str | None = None) -> LLMResponse:
    return LLMResponse(
        prompt_id=prompt_id, provider_model_id="gpt-4o", content=content, error=error
    )


def current_run(
    comparisons: list[ProbeComparison],
    provider: ProviderConfig,
    text: str,
    errors: dict[str, str],
) -> CanaryRunResult:
    """The run whose results the comparisons' current side describes; every prompt says ``text``
    except the errored ones in ``errors``."""
    prompt_ids = list(dict.fromkeys(c.prompt_id for c in comparisons))
    responses = [response(p, text) for p in prompt_ids]
    responses += [response(p, "", error=e) for p, e in errors.items()]
    results = [
        ProbeResult(
            probe_id=c.probe_id,
            probe_key=c.probe_key,
            prompt_id=c.prompt_id,
            passed=c.current_passed,
            score=c.current_score,
        )
        for c in comparisons
    ]
    return CanaryRunResult(
        suite_name="demo", provider=provider, llm_responses=responses, probe_results=results
    )


def make_pair(
    comparisons: list[ProbeComparison] | None = None,
    *,
    model: str = "gpt-4o",
    baseline_text: str = "{}",
    current_text: str = "sorry",
    errored: list[ErroredResult] | None = None,
    current_errors: dict[str, str] | None = None,
    new_prompts: list[str] | None = None,
    removed_prompts: list[str] | None = None,
    warnings: list[str] | None = None,
    notes: list[str] | None = None,
    statistical: bool = False,
    with_drift: bool = True,
) -> PairOutcome:
    comparisons = comparisons or []
    provider = ProviderConfig(model_id=model)
    prompt_ids = list(dict.fromkeys(c.prompt_id for c in comparisons))
    run = current_run(comparisons, provider, current_text, current_errors or {})
    baseline_run = CanaryRunResult(
        suite_name="demo",
        provider=provider,
        llm_responses=[response(p, baseline_text) for p in prompt_ids],
    )
    drift = drift_of(
        run,
        comparisons,
        snapshot_id="snap-1",
        new_prompts=new_prompts or [],
        removed_prompts=removed_prompts or [],
        new_probes=[ResultRef(prompt_id="p-new-probe", probe_key="refusal")] if new_prompts else [],
        errored=errored or [],
        warnings=warnings or [],
        statistical=statistical,
        alpha=0.05 if statistical else None,
    )
    return PairOutcome(
        suite_name="demo",
        suite_file="canary.yaml",
        model=model,
        run=run,
        drift=drift if with_drift else None,
        baseline_run=baseline_run if with_drift else None,
        baseline_status=BaselineStatus.FOUND if with_drift else BaselineStatus.MISSING,
        notes=notes or [],
        prompt_lines={p: 10 + i for i, p in enumerate(prompt_ids)},
    )


def make_outcome(
    *pairs: PairOutcome, verdict: str = "❌ drift", warnings: list[str] | None = None
) -> StepOutcome:
    return StepOutcome(
        pairs=list(pairs),
        fail_on="regression",
        gate_failed=any(p.regression_count for p in pairs),
        verdict=verdict,
        warnings=warnings or [],
        sha="0123456789abcdef0123",
        run_url="https://github.com/octo-org/octo-repo/actions/runs/1",
        report_files=["promptcanary-report/comment.md", "promptcanary-report/drift.json"],
    )


def assert_inert(markdown: str) -> None:
    assert not LIVE_MENTION.search(markdown), LIVE_MENTION.search(markdown)
    assert not LIVE_REFERENCE.search(markdown)
    assert not re.search(r"<(?!/?(details|summary|sub|br)>|!-- promptcanary)", markdown)
    assert "![" not in markdown
    assert "](javascript" not in markdown and "](http://e)" not in markdown
    for ch in "\x00\u202e\u2066":
        assert ch not in markdown
    assert not any(line.startswith("::") for line in markdown.splitlines())


# ------------------------------------------------------------------------------------------------


def test_no_drift_comment_leads_with_the_verdict_and_has_the_marker() -> None:
    pair = make_pair([comparison("p1", current=1.0, details="ok")])
    marker = comment_marker("default")
    body = render_comment(make_outcome(pair, verdict="✅ no drift in 1 model run"), marker)
    assert body.splitlines()[0] == "**✅ no drift in 1 model run**"
    assert body.endswith(marker)
    assert "Regressions:" not in body
    assert "| demo | `gpt-4o` | 1.000 → 1.000 (+0.000) |" in body


def test_regressions_are_listed_with_scores_details_and_a_diff() -> None:
    pair = make_pair(
        [comparison("p1", details="Expecting value at line 1"), comparison("p2", "refusal")],
        baseline_text='{"a": 1}',
        current_text="I cannot help",
    )
    body = render_comment(make_outcome(pair), comment_marker("x"))
    assert "| `p1` | `json_validity` | 1.000 → 0.000 (-1.000) | Expecting value at line 1 |" in body
    assert "| `p2` | `refusal` |" in body
    assert "<details><summary>Responses to p1 (gpt-4o)</summary>" in body
    assert '-{"a": 1}' in body and "+I cannot help" in body


def test_repeated_samples_show_pass_rates_ci_adjusted_p_and_an_explanation() -> None:
    pair = make_pair([comparison("p1", baseline=0.9, current=0.2, samples=5)], statistical=True)
    body = render_comment(make_outcome(pair), comment_marker("x"))
    assert "90% → 20%" in body
    assert "[-0.90, -0.40]" in body
    assert "0.012" in body
    assert "With 5 baseline and 5 current samples per prompt" in body


def _adaptive_pair() -> PairOutcome:
    regressed = comparison("p1", baseline=0.95, current=0.5, samples=20).model_copy(
        update={"verdict": "regressed", "e_value": 4321.0, "baseline_samples": 140}
    )
    undecided = comparison("p2", baseline=0.95, current=0.75, samples=60).model_copy(
        update={"verdict": "inconclusive", "regression": False, "baseline_samples": 130}
    )
    pair = make_pair([regressed, undecided], statistical=True)
    info = AdaptiveSampling(
        min_samples=3, max_samples=60, pool_runs=20, stages=7, prompts=2, requests=2, tokens=30
    )
    assert pair.drift is not None
    drift = pair.drift.model_copy(update={"adaptive": info, "baseline_pool_runs": 20})
    run = pair.run.model_copy(
        update={"provenance": pair.run.provenance.model_copy(update={"adaptive": info})}
    )
    return pair.model_copy(update={"drift": drift, "run": run})


def test_adaptive_regressions_show_answers_e_value_and_the_inconclusive_ones() -> None:
    pair = _adaptive_pair()
    body = render_comment(make_outcome(pair), comment_marker("x"))
    assert (
        "| `p1` | `json_validity` | 95% → 50% | 140 → 20 | [-0.90, -0.40] | 4,321 | 0.012 |" in body
    )
    assert "**Inconclusive** (`gpt-4o`, 1; not counted as regressions)" in body
    assert "| `p2` | `json_validity` | 95% → 75% | 130 → 60 |" in body
    assert "fixed `samples: 60` would have sent 120 requests (≈ 1,800 tokens)" in body
    assert "2 requests in 7 stages" in body
    assert pair.inconclusive_count == 1


def test_errors_new_removed_warnings_and_flaky_are_reported() -> None:
    pair = make_pair(
        [comparison("p1"), comparison("p3", current=0.9, baseline=0.9, flaky=True, samples=3)],
        current_errors={"p9": "RateLimitError after 3 retries"},
        errored=[ErroredResult(prompt_id="p8", probe_key="k", side="baseline")],
        new_prompts=["p-new"],
        removed_prompts=["p-old"],
        warnings=["baseline model gpt-4o-2024 differs from gpt-4o"],
        notes=["baseline is 40 days old"],
    )
    body = render_comment(make_outcome(pair, warnings=["step warning"]), comment_marker("x"))
    for expected in (
        "**New prompts** (`gpt-4o`, not compared): `p-new`",
        "**Removed prompts** (`gpt-4o`, not compared): `p-old`",
        "**New probes**",
        "`p9` (sample 0): RateLimitError after 3 retries",
        "**Errored in the baseline**",
        "- step warning",
        "baseline is 40 days old",
        "baseline model gpt\\-4o\\-2024 differs from gpt\\-4o",
        "**Flaky**",
    ):
        assert expected in body, expected


def test_model_text_is_inert_everywhere() -> None:
    pair = make_pair(
        [comparison("p1", details=HOSTILE)],
        baseline_text=HOSTILE,
        current_text=HOSTILE + " changed",
        current_errors={"p2": HOSTILE},
        warnings=[HOSTILE],
    )
    outcome = make_outcome(pair, verdict="❌ " + HOSTILE)
    check_title, check_summary, check_text = check_run_output(outcome)
    issue_title, issue_body = render_issue(outcome, pair)
    for markdown in (
        render_comment(outcome, comment_marker("x")),
        render_summary(outcome),
        issue_body,
        check_summary,
        check_text,
    ):
        assert_inert(markdown)
    # Titles are plain text on GitHub: only mentions, references and hidden characters matter.
    for title in (check_title, issue_title):
        assert not LIVE_MENTION.search(title) and not LIVE_REFERENCE.search(title)
        assert not any(ch in title for ch in "\x00\u202e\u2066\n")


def test_a_hostile_fence_cannot_close_the_diff_block() -> None:
    pair = make_pair([comparison("p1")], baseline_text="a", current_text="x\n````\n# Heading\n")
    body = render_comment(make_outcome(pair), comment_marker("x"))
    block = body[body.index("<details>") : body.index("</details>")]
    fences = re.findall(r"^(`{3,})", block, re.MULTILINE)
    opening = fences[0]
    assert len(opening) > 4
    assert fences.count(opening) == 2  # the opening and the closing fence, nothing in between


def test_an_oversized_comment_stays_within_the_limit_and_says_what_moved() -> None:
    big = "lorem ipsum " * 1700  # ~20 kB
    pair = make_pair(
        [comparison(f"p{i}", details=big) for i in range(300)],
        baseline_text=big,
        current_text=big + "!",
    )
    outcome = make_outcome(pair)
    marker = comment_marker("x")
    body = render_comment(outcome, marker)
    assert len(body) <= 65_536
    assert body.endswith(marker)
    assert "moved to the job summary and the report files" in body
    assert "`promptcanary-report/drift.json`" in body
    assert "regressions of gpt\\-4o" in body
    summary = render_summary(outcome)
    assert summary.count("| `p") > body.count("| `p")


def test_a_small_limit_is_respected_and_stops_at_a_unit_boundary() -> None:
    pair = make_pair([comparison(f"p{i}") for i in range(50)])
    body = render_comment(make_outcome(pair), comment_marker("x"), limit=2_000)
    assert len(body) <= 2_000
    rows = [line for line in body.splitlines() if line.startswith("| `p")]
    assert rows and all(line.endswith("|") for line in rows)
    assert "Not everything fits here" in body


def test_the_summary_limit_counts_utf8_bytes() -> None:
    pair = make_pair([comparison(f"p{i}", details="é" * 200) for i in range(200)])
    summary = render_summary(make_outcome(pair), limit=20_000)
    assert len(summary.encode()) <= 20_000
    assert "Not everything fits here" in summary


def test_summary_has_a_heading_and_no_marker() -> None:
    summary = render_summary(make_outcome(make_pair([comparison("p1")])))
    assert summary.startswith("## PromptCanary")
    assert "promptcanary-action:comment-id" not in summary


def test_issue_names_the_pair_and_links_the_run() -> None:
    pair = make_pair([comparison("p1")], model="claude-3")
    title, body = render_issue(make_outcome(pair), pair)
    assert title == "PromptCanary: drift in demo on claude-3 (critical)"
    assert "[this workflow run](https://github.com/octo-org/octo-repo/actions/runs/1)" in body
    assert "| `p1` | `json_validity` |" in body


def test_check_run_output_is_within_limits() -> None:
    big = "x" * 20_000
    pair = make_pair([comparison(f"p{i}", details=big) for i in range(300)], current_text=big)
    title, summary, text = check_run_output(make_outcome(pair, verdict="v" * 1000))
    assert len(title) <= 255
    assert len(summary) <= 65_535 and len(text) <= 65_535
    assert "<details>" not in summary and "<details>" in text


@pytest.mark.parametrize(
    ("comment_id", "expected"),
    [
        ("default", "<!-- promptcanary-action:comment-id=default -->"),
        ("my step-2", "<!-- promptcanary-action:comment-id=my-step-2 -->"),
        ("x --><script>", "<!-- promptcanary-action:comment-id=x-----script- -->"),
        ("", "<!-- promptcanary-action:comment-id=default -->"),
    ],
)
def test_comment_marker_sanitises_the_id(comment_id: str, expected: str) -> None:
    assert comment_marker(comment_id) == expected


def test_without_a_baseline_the_table_shows_the_current_score_only() -> None:
    pair = make_pair([comparison("p1", current=0.5)], with_drift=False)
    body = render_comment(make_outcome(pair), comment_marker("x"))
    assert "| demo | `gpt-4o` | – → 0.500 |" in body
    assert "| missing |" in body


def test_a_thousand_regressions_fit_the_comment_budget() -> None:
    pair = make_pair(
        [comparison(f"p{i}", details="d" * 500) for i in range(1000)],
        baseline_text="line\n" * 200,
        current_text="line\n" * 150 + "changed\n" * 50,
    )
    body = render_comment(make_outcome(pair), comment_marker("x"))
    assert len(body) <= 65_536
    assert "| `p0` |" in body  # the first regressions are shown…
    assert "[!NOTE]" in body  # …and the comment says where the rest went


def test_comment_and_summary_point_to_the_report_in_the_runs_artifacts() -> None:
    pair = make_pair([comparison("p1", current=1.0, details="ok")])
    linked = make_outcome(pair)
    line = "`report.html` in [this run's artifacts](https://github.com/octo-org/octo-repo/actions/runs/1)"
    assert line in render_comment(linked, comment_marker("default"))
    assert line in render_summary(linked)
    unknown = linked.model_copy(update={"run_url": None})
    assert "report.html" not in render_comment(unknown, comment_marker("default"))


def test_a_templated_prompt_links_its_template_and_its_dataset_row() -> None:
    pair = make_pair([comparison("classify.c-17")])
    pair.prompt_rows["classify.c-17"] = ("canaries/data/cases.csv", 17)
    outcome = make_outcome(pair).model_copy(
        update={"repository": "octo-org/octo-repo", "server_url": "https://github.com"}
    )
    body = render_comment(outcome, comment_marker("default"))
    blob = "https://github.com/octo-org/octo-repo/blob/0123456789abcdef0123"
    assert f"]({blob}/canary.yaml#L10)" in body
    assert f"[`canaries/data/cases.csv#L17`]({blob}/canaries/data/cases.csv#L17)" in body


def test_a_conversation_regression_shows_its_last_turns_before_the_diff() -> None:
    pair = make_pair([comparison("chat")])
    pair.conversations["chat"] = f"user: my order is late\ntool call_1: {HOSTILE}"
    body = render_comment(make_outcome(pair), comment_marker("default"))
    before = body.index("The conversation's last turns before the answer:")
    assert before < body.index("user: my order is late") < body.index("```diff")
    block = body[before : body.index("```diff")]
    assert not LIVE_MENTION.search(block) and not LIVE_REFERENCE.search(block)
    assert "<img" not in block.split("````")[0] and block.count("````") == 2  # one fenced block
    assert "\u202e" not in block
