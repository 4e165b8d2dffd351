"""The comment and summary show meaning comparisons: the changed prompt's two answers side by
side with the shift and its interval, every meaning comparison in the summary, embedding usage
apart from the model's, and the answers' text escaped."""

from __future__ import annotations

from promptcanary.core.models import MeaningShift, ProbeCategory, ProbeComparison, ServiceUsage
from promptcanary_action.render import render_comment, render_summary
from tests.unit.action.test_render import HOSTILE, assert_inert, make_outcome, make_pair


def meaning_row(
    prompt_id: str,
    verdict: str,
    *,
    moved: str = "We recommend the Basic plan.",
    reason: str | None = None,
) -> ProbeComparison:
    changed = verdict == "changed"
    return ProbeComparison(
        probe_id="semantic_drift",
        probe_key="semantic",
        probe_name="Meaning",
        category=ProbeCategory.SEMANTIC,
        prompt_id=prompt_id,
        baseline_score=1.0,
        current_score=0.1 if changed else 1.0,
        score_delta=-0.9 if changed else 0.0,
        baseline_passed=True,
        current_passed=not changed,
        regression=changed,
        current_details=reason or "meaning shift 0.451 (95% interval 0.412–0.490; min_shift 0.05)",
        baseline_samples=80,
        current_samples=19,
        verdict=verdict,
        e_value=5.0e4 if changed else 1.0,
        p_adjusted=0.002 if changed else 1.0,
        semantic=MeaningShift(
            embedding_model="openai/text-embedding-3-small",
            min_shift=0.05,
            shift=0.451 if changed else 0.004,
            shift_ci=(0.412, 0.490) if changed else (0.0, 0.02),
            reason=reason,
            moved_answer=moved if changed else None,
            nearest_baseline_answer="We recommend the Pro plan." if changed else None,
            similarity=0.41 if changed else None,
        ),
    )


def _outcome(moved: str = "We recommend the Basic plan.") -> object:
    rows = [
        meaning_row("support-plan", "changed", moved=moved),
        meaning_row("greeting", "same"),
        meaning_row(
            "faq", "inconclusive", reason="not compared: the pool holds 2 answer vector(s)"
        ),
    ]
    pair = make_pair(rows)
    usage = ServiceUsage(
        service="embedding",
        model_id="openai/text-embedding-3-small",
        requests=3,
        items=41,
        tokens=900,
        cost_usd=0.000018,
    )
    pair = pair.__class__(
        **{**pair.__dict__, "run": pair.run.model_copy(update={"services": [usage]})}
    )
    return make_outcome(pair)


def test_the_comment_shows_the_moved_answer_beside_the_nearest_baseline_answer() -> None:
    comment = render_comment(_outcome(), "<!-- promptcanary -->")  # type: ignore[arg-type]
    assert "#### Changes of meaning" in comment
    assert "| We recommend the Pro plan\\. | We recommend the Basic plan\\. |" in comment
    assert "shift 0.451 [0.412, 0.490] (min_shift 0.05)" in comment
    assert "answers 80 → 19" in comment
    assert (
        "embedding on `gpt-4o`: model `openai/text-embedding-3-small`, 3 requests for 41 distinct inputs, 900 tokens, cost $1\\.8e\\-05"
        in comment
    )
    # Same and inconclusive meaning rows are not changes of meaning.
    section = comment.split("#### Changes of meaning", 1)[1].split("**Inconclusive**", 1)[0]
    assert "greeting" not in section and "faq" not in section


def test_the_summary_lists_every_meaning_comparison() -> None:
    summary = render_summary(_outcome())  # type: ignore[arg-type]
    table = summary.split("#### Meaning, 3 comparisons", 1)[1]
    for prompt, verdict in (
        ("support-plan", "changed"),
        ("greeting", "same"),
        ("faq", "inconclusive"),
    ):
        assert prompt in table and f"| {verdict} |" in table
    assert "the pool holds 2 answer vector\\(s\\)" in table


def test_answer_text_in_the_meaning_section_is_inert() -> None:
    comment = render_comment(_outcome(moved=HOSTILE), "<!-- promptcanary -->")  # type: ignore[arg-type]
    assert_inert(comment)
    assert_inert(render_summary(_outcome(moved=HOSTILE)))  # type: ignore[arg-type]
