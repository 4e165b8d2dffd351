"""End to end: drift in meaning through the entrypoint, the fake LLM server (chat and
/v1/embeddings) and the fake GitHub API. Eight pushes build the pool; a pull request whose answers
say the same things in new wordings passes; one whose answers now recommend another plan fails
with the two answers side by side in the comment; the approval label covers the `semantic` key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import PR_NUMBER, ActionHarness, pr_event, suite_text
from tests.fakes.meaning_model import cluster_vector

pytestmark = pytest.mark.e2e

LABEL = "promptcanary: approve"
INPUTS = {"baseline": "path", "concurrency": "4", "timeout": "60", "max-retries": "2"}
PROMPTS = """\
  - id: plan
    text: Which plan do you recommend for a team of five?
    probes:
      - type: response_length
        min_chars: 2
"""


def _suite(api_base: str) -> str:
    meaning = f"semantic_drift:\n  embedding_model: openai/fake-embed\n  api_base: {api_base}\n"
    return meaning + suite_text("plans", api_base, PROMPTS)


def _answers(harness: ActionHarness, seed: int, meaning: str, plan: str) -> None:
    harness.llm.reset(script=True)
    options = [
        (1 / 6, f"plan says {meaning} in wording {n}: we recommend the {plan} plan for you.")
        for n in range(6)
    ]
    harness.llm.script("Which plan", choices_random=(seed, options))


def _semantic_rows(result_dir: Path) -> list[dict[str, Any]]:
    [drift_file] = Path(result_dir).glob("*/*/drift.json")
    drift = json.loads(drift_file.read_text(encoding="utf-8"))
    return [row for row in drift["comparisons"] if row["probe_key"] == "semantic"]


# Eleven steps of the action, each a process of its own: more than the default per-test limit.
@pytest.mark.timeout(480)
def test_a_change_of_meaning_is_shown_gated_and_approvable(harness: ActionHarness) -> None:
    harness.llm.embedding_of = cluster_vector
    harness.write("canary.yaml", _suite(harness.llm.url))
    for night in range(8):
        _answers(harness, 100 + night, "pro", "Pro")
        pushed = harness.run_push(INPUTS)
        assert pushed.returncode == 0, pushed.log
    assert harness.llm.embedding_requests, "the answers were embedded"

    _answers(harness, 7, "pro", "Pro")
    same = harness.run_pr(INPUTS)
    assert same.returncode == 0, same.log
    [row] = _semantic_rows(same.output_path("report-dir"))
    assert row["verdict"] == "same" and not row["regression"]
    assert row["semantic"]["embedding_model"] == "openai/fake-embed"

    _answers(harness, 11, "basic", "Basic")
    changed = harness.run_pr(INPUTS)
    assert changed.returncode == 1, changed.log
    [row] = _semantic_rows(changed.output_path("report-dir"))
    assert row["verdict"] == "changed" and row["regression"]
    assert row["semantic"]["shift_ci"][0] > row["semantic"]["min_shift"]
    comment = harness.github.comments(PR_NUMBER)[-1].body
    assert "#### Changes of meaning" in comment
    assert "Basic plan for you" in comment and "Pro plan for you" in comment
    assert "embedding on `openai/fake`: model `openai/fake-embed`" in comment
    assert "#### Meaning, 1 comparisons" in changed.summary

    harness.github.label(PR_NUMBER, LABEL, "rev-iewer")
    approved = harness.run(
        "pull_request",
        pr_event(labels=(LABEL,), action="labeled", label=LABEL, sender="rev-iewer"),
        INPUTS,
    )
    assert approved.returncode == 0, approved.log
    assert "✅ approved" in harness.github.comments(PR_NUMBER)[-1].body
