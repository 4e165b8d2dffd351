"""End to end: a reviewer approves a pull request's drift with the label, and the merge makes it
the baseline; what the approval does not cover still fails; a direct push behaves as before."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.e2e.conftest import PR_NUMBER, ActionHarness, pr_event, suite_text
from tests.e2e.runner import ActionResult

pytestmark = pytest.mark.e2e

LABEL = "promptcanary: approve"
REVIEWER = "rev-iewer"
MERGE_SHA = "e5" * 20
NEW_HEAD = "f6" * 20
INPUTS = {"baseline": "path"}  # update-baseline: auto, as a user leaves it
PROMPTS = """\
  - id: refund
    text: What is the refund window?
    probes:
      - type: keyword_presence
        id: days
        required_keywords: [30 days]
  - id: hours
    text: When are you open?
    probes:
      - type: keyword_presence
        id: nine
        required_keywords: [9am]
"""
BASELINE_DIR = ".promptcanary/baselines/support/openai-fake"


def setup_drift(harness: ActionHarness) -> Any:
    """A baseline on main, then the refund answer drifts; returns the hours rule (drifts later)."""
    harness.write("canary.yaml", suite_text("support", harness.llm.url, PROMPTS))
    harness.llm.script(
        "refund window",
        content="Refunds within 30 days.",
        drifted={"content": "Refunds are store credit now."},
    )
    hours = harness.llm.script("When are you open", content="From 9am to 5pm.")
    created = harness.run_push(INPUTS)
    assert created.outputs["baseline-status"] == "created", created.log
    harness.llm.drift = True
    return hours


def pr_run(harness: ActionHarness, labels: tuple[str, ...] = (), **event: Any) -> ActionResult:
    return harness.run("pull_request", pr_event(labels=labels, **event), INPUTS)


def comment_body(harness: ActionHarness) -> str:
    [comment] = harness.github.comments(PR_NUMBER)
    return comment.body


def label(harness: ActionHarness, **event: Any) -> ActionResult:
    harness.github.label(PR_NUMBER, LABEL, REVIEWER)
    return pr_run(harness, (LABEL,), action="labeled", label=LABEL, sender=REVIEWER, **event)


def test_approved_drift_passes_and_the_merge_makes_it_the_baseline(harness: ActionHarness) -> None:
    setup_drift(harness)

    failing = pr_run(harness)
    assert failing.returncode == 1, failing.log
    assert harness.check_run().conclusion == "failure"
    body = comment_body(harness)
    assert f"adding the label `{LABEL}`" in body  # the one line on how to approve

    calls = harness.llm.request_count
    approved = label(harness)

    assert approved.returncode == 0, approved.log
    check = harness.check_run()
    assert check.conclusion == "success"
    assert "approved by @" in check.title and "rev" in check.title
    body = comment_body(harness)
    assert "approved by @\u200brev\\-iewer" in body  # escaped: no mention, no markdown
    assert "✅ approved · " in body
    assert f"adding the label `{LABEL}`" not in body  # nothing left to approve
    # The labelling changed no answer: the previous results were re-judged, no model was called.
    assert harness.llm.request_count == calls

    harness.github.merge_pull(PR_NUMBER, MERGE_SHA)
    merged = harness.run_push(INPUTS, after=MERGE_SHA)

    assert merged.returncode == 0, merged.log
    assert merged.outputs["baseline-status"] == "updated"
    folder = harness.workspace / BASELINE_DIR
    snapshot = json.loads((folder / "baseline.json").read_text(encoding="utf-8"))
    assert snapshot["approval"]["pr_number"] == PR_NUMBER
    assert snapshot["approval"]["approver"] == REVIEWER
    history = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    assert "approval" not in history[0]
    assert history[-1]["approval"]["pr"] == PR_NUMBER
    assert history[-1]["approval"]["approver"] == REVIEWER
    assert history[-1]["approval"]["fingerprint"] == snapshot["approval"]["fingerprint"]

    # The next pull request compares with the new baseline: the intended change is no drift.
    harness.github.add_pull(8, "next", "main", "a7" * 20, MERGE_SHA)
    following = pr_run(harness, number=8, head_sha="a7" * 20)
    assert following.returncode == 0, following.log
    assert following.outputs["regressions"] == "0"


def test_a_new_regression_after_the_approval_fails_and_removing_the_label_fails(
    harness: ActionHarness,
) -> None:
    hours = setup_drift(harness)
    assert pr_run(harness).returncode == 1
    assert label(harness).returncode == 0

    # A new push keeps the approval for the same regression...
    same = pr_run(harness, (LABEL,), head_sha=NEW_HEAD)
    assert same.returncode == 0, same.log

    # ...but not for another one.
    hours.drifted = {"content": "Whenever we feel like it."}
    more = pr_run(harness, (LABEL,), head_sha="b8" * 20)
    assert more.returncode == 1, more.log
    assert harness.check_run().conclusion == "failure"
    body = comment_body(harness)
    assert "✅ 1 of 2 approved by" in body
    assert re.search(r"\| \[`hours`\]\([^)]*\) \| `nine` \|", body), body

    # Without the label nothing is approved any more.
    hours.drifted = None
    harness.github.label(PR_NUMBER, LABEL, REVIEWER, add=False)
    removed = pr_run(harness, action="unlabeled", label=LABEL, sender=REVIEWER, head_sha="b8" * 20)
    assert removed.returncode == 1, removed.log
    assert "approved by" not in comment_body(harness)


def test_a_direct_push_with_drift_is_not_promoted(harness: ActionHarness) -> None:
    setup_drift(harness)
    folder = harness.workspace / BASELINE_DIR
    before = (folder / "baseline.json").read_text(encoding="utf-8")

    pushed = harness.run_push(INPUTS, after=MERGE_SHA)  # no pull request has this commit

    assert pushed.returncode == 1, pushed.log
    assert pushed.outputs["baseline-status"] == "found"
    assert (folder / "baseline.json").read_text(encoding="utf-8") == before
    assert harness.github.requests_to("GET", rf"/commits/{MERGE_SHA}/pulls$")


def test_a_token_that_cannot_read_labels_warns_and_the_gate_stands(
    harness: ActionHarness,
) -> None:
    setup_drift(harness)
    assert pr_run(harness).returncode == 1
    harness.github.label(PR_NUMBER, LABEL, REVIEWER)
    harness.github.fail("GET", rf"/pulls/{PR_NUMBER}$", 403, message="Resource not accessible")
    harness.github.fail("GET", rf"/issues/{PR_NUMBER}/events$", 403)

    # Only the payload says the label is there, and nobody can tell who added it.
    result = pr_run(harness, (LABEL,), head_sha=NEW_HEAD)

    assert result.returncode == 1, result.log
    warnings = [w.message for w in result.annotations("warning")]
    assert any("pull-requests: read" in w for w in warnings), warnings
    assert any("issues: read" in w for w in warnings), warnings
