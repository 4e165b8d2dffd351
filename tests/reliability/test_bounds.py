"""Bounded resources, end to end: a user regex that backtracks catastrophically on a long answer
is an errored probe result naming the pattern (the step finishes), and a huge answer is scored
whole but stored cut to ``MAX_STORED_RESPONSE_CHARS`` with the cut noted in run.json."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from promptcanary.core.models import MAX_STORED_RESPONSE_CHARS
from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    report_json,
    responses_by_prompt,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e

CATASTROPHIC = "^(a|a)*$"


def test_catastrophic_regex_is_an_errored_result_naming_the_pattern(
    harness: ActionHarness,
) -> None:
    prompts = (
        "  - id: slow\n"
        "    text: Say a lot of a\n"
        "    probes:\n"
        "      - type: factual_consistency\n"
        f"        expected_value: '{CATASTROPHIC}'\n"
        "        match_mode: regex\n"
        "  - id: fine\n"
        "    text: Say ok\n"
        "    probes:\n"
        "      - type: factual_consistency\n"
        "        expected_value: '^ok$'\n"
        "        match_mode: regex\n"
    )
    harness.write("canary.yaml", suite_text("regex", harness.llm.url, prompts))
    harness.llm.script("Say a lot of a", content="a" * 20_000 + "b")
    harness.llm.script("Say ok", content="ok")

    result = harness.run_pr({"baseline": "none", "timeout": "60"})

    assert result.returncode == 0, result.log
    results = {r["prompt_id"]: r for r in run_json(result)["probe_results"]}
    assert results["slow"]["errored"] is True
    assert CATASTROPHIC in results["slow"]["details"]
    assert results["fine"]["passed"] is True and results["fine"]["errored"] is False
    # The check run's warning tells the author which pattern could not be searched.
    warnings = [
        f"{a['message']} {a.get('raw_details', '')}" for a in harness.check_run().annotations
    ]
    assert any(CATASTROPHIC in m and "slow" in m for m in warnings), warnings


def test_huge_answer_is_scored_whole_and_stored_cut_with_a_note(harness: ActionHarness) -> None:
    size = MAX_STORED_RESPONSE_CHARS + 50_000
    answer = "x" * (size - len(" canary")) + " canary"  # the keyword is past the cut
    prompts = (
        "  - id: big\n"
        "    text: Write a book\n"
        "    probes:\n"
        "      - type: keyword_presence\n"
        "        required_keywords: [canary]\n"
    )
    harness.write("canary.yaml", suite_text("big", harness.llm.url, prompts))
    harness.llm.script("Write a book", content=answer)

    result = harness.run_pr({"baseline": "none", "timeout": "60"})

    assert result.returncode == 0, result.log
    run = run_json(result)
    [score] = run["probe_results"]
    assert score["passed"] is True  # the probe saw the end of the text
    stored = responses_by_prompt(run)["big"]
    assert stored["truncated_from"] == size
    assert len(stored["content"]) == MAX_STORED_RESPONSE_CHARS
    assert answer.startswith(stored["content"])
    [snapshot] = report_json(result, "snapshot.json")
    [kept] = snapshot["run_result"]["llm_responses"]
    assert len(kept["content"]) == MAX_STORED_RESPONSE_CHARS


def test_artifact_above_max_artifact_mb_is_exit_2_naming_the_input(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("big", harness.llm.url, keyword_prompts(1)))
    harness.llm.script(None, content="canary")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("big/openai-fake/baseline.json", random.Random(1).randbytes(3 * 2**20))
    harness.github.add_artifact("canary-baseline", buffer.getvalue(), "main", run_id=501)
    inputs = {"baseline": "artifact", "baseline-artifact": "canary-baseline"}

    result = harness.run_pr({**inputs, "max-artifact-mb": "1", "timeout": "60"})

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert error.properties.get("title") == "PromptCanary: unreadable baseline"
    assert "canary-baseline" in error.message and "max-artifact-mb" in error.message
    assert result.outputs["overall-score"] == "1.0000"  # the run itself is reported
    assert len(harness.github.blob_requests) == 1
