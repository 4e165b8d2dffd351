"""Tests for check-run annotations built from a step outcome."""

from __future__ import annotations

import re

from promptcanary.core.models import ErroredResult, ProbeResult
from promptcanary_action.annotations import Annotation, build_annotations
from tests.unit.action.test_render import HOSTILE, comparison, make_outcome, make_pair

LIVE_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")


def by_level(annotations: list[Annotation], level: str) -> list[Annotation]:
    return [a for a in annotations if a.annotation_level == level]


def test_regressions_are_failures_on_the_prompt_line() -> None:
    pair = make_pair([comparison("p1", details="not JSON"), comparison("p2", "refusal")])
    annotations = build_annotations(make_outcome(pair))
    failures = by_level(annotations, "failure")
    assert [(a.path, a.start_line, a.end_line) for a in failures] == [
        ("canary.yaml", 10, 10),
        ("canary.yaml", 11, 11),
    ]
    assert failures[0].title == "Regression: p1 / json_validity (gpt-4o)"
    assert "score 1.000 → 0.000 (-1.000)" in failures[0].message
    assert "Now: not JSON" in failures[0].message


def test_a_probe_entry_line_wins_over_the_prompt_line() -> None:
    pair = make_pair([comparison("p1")])
    pair.probe_lines["p1/json_validity"] = 42
    (annotation,) = build_annotations(make_outcome(pair))
    assert annotation.start_line == 42


def test_unknown_prompts_point_at_line_one() -> None:
    pair = make_pair([comparison("p1")])
    pair.prompt_lines.clear()
    assert build_annotations(make_outcome(pair))[0].start_line == 1


def test_levels_for_improvements_errors_and_flaky_results() -> None:
    pair = make_pair(
        [
            comparison("p1"),
            comparison("p2", baseline=0.0, current=1.0, improvement=True),
            comparison("p3", baseline=0.6, current=0.6, flaky=True, samples=3),
        ],
        errored=[ErroredResult(prompt_id="p4", probe_key="k", side="current", error="timeout")],
    )
    annotations = build_annotations(make_outcome(pair))
    assert [a.annotation_level for a in annotations] == ["failure", "warning", "warning", "notice"]
    errored = annotations[1]
    assert errored.title == "Errored: p4 / k (gpt-4o)" and errored.raw_details == "timeout"
    assert "pass rate 60% → 60%" in annotations[2].message
    assert annotations[3].title.startswith("Improvement: p2")


def test_failures_come_first_across_pairs() -> None:
    first = make_pair([comparison("a", baseline=0.0, current=1.0, improvement=True)], model="m1")
    second = make_pair([comparison("b")], model="m2")
    levels = [a.annotation_level for a in build_annotations(make_outcome(first, second))]
    assert levels == ["failure", "notice"]


def test_repeated_samples_carry_ci_and_adjusted_p() -> None:
    pair = make_pair([comparison("p1", baseline=0.9, current=0.1, samples=5)], statistical=True)
    (annotation,) = build_annotations(make_outcome(pair))
    assert "pass rate 90% → 10% (CI of change [-0.90, -0.40]), adjusted p = 0.0123" in (
        annotation.message
    )


def test_without_a_baseline_only_errored_results_are_annotated() -> None:
    pair = make_pair([comparison("p1")], with_drift=False)
    assert build_annotations(make_outcome(pair)) == []
    pair.run.probe_results.append(
        ProbeResult(
            probe_id="refusal",
            prompt_id="p1",
            passed=False,
            score=0.0,
            errored=True,
            details="APITimeoutError",
        )
    )
    (annotation,) = build_annotations(make_outcome(pair))
    assert annotation.annotation_level == "warning"
    assert annotation.title == "Errored: p1 / refusal (gpt-4o)"
    assert annotation.raw_details == "APITimeoutError"


def test_text_is_inert_and_within_github_limits() -> None:
    huge = HOSTILE + "x" * 200_000
    pair = make_pair(
        [comparison("p1", details=huge)],
        model="@octocat\u202e" + "m" * 400,
        errored=[ErroredResult(prompt_id="p2", probe_key="k", side="current", error=huge)],
    )
    annotations = build_annotations(make_outcome(pair))
    # One failure for the regression and one for the errored response, at least: the checks
    # below must read real annotations.
    assert len(annotations) >= 2
    for a in annotations:
        assert len(a.title) <= 255
        assert len(a.message.encode()) <= 65_535 and len(a.raw_details.encode()) <= 65_535
        for text in (a.title, a.message, a.raw_details):
            assert not LIVE_MENTION.search(text)
            assert "\x00" not in text and "\u202e" not in text and "\u2066" not in text
            assert "#1" not in text


def test_a_templated_prompt_is_annotated_at_its_dataset_row() -> None:
    pair = make_pair([comparison("classify.c-17"), comparison("p2")])
    pair.prompt_rows["classify.c-17"] = ("canaries/data/cases.csv", 17)
    failures = by_level(build_annotations(make_outcome(pair)), "failure")
    assert [(a.path, a.start_line) for a in failures] == [
        ("canaries/data/cases.csv", 17),
        ("canary.yaml", 11),
    ]
    assert (
        "Row canaries/data/cases.csv:17 of the template at canary.yaml:10." in failures[0].message
    )


def test_a_conversation_regression_quotes_its_last_turns_escaped() -> None:
    pair = make_pair([comparison("chat")])
    pair.conversations["chat"] = f"user: hi\ntool call_1: {HOSTILE}"
    (annotation,) = build_annotations(make_outcome(pair))
    assert "Conversation before the answer:\nuser: hi\ntool call_1:" in annotation.message
    assert not LIVE_MENTION.search(annotation.message)
    assert "\u202e" not in annotation.message
