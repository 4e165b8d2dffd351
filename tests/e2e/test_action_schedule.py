"""End to end on a schedule: drift opens one issue, a second drifted night updates it, a clean
night closes it; and the clean night's run becomes the new baseline."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import ActionHarness, push_event
from tests.e2e.runner import ActionResult
from tests.e2e.test_action_pr import create_baseline, write_support_suite

pytestmark = pytest.mark.e2e

NIGHTLY = {"baseline": "path", "issue-on-drift": "true"}


def nightly(harness: ActionHarness, inputs: dict[str, str] | None = None) -> ActionResult:
    # The schedule payload carries no repository: GitHub runs it on the default branch's tip.
    event = {"schedule": "17 5 * * *", "ref": push_event()["ref"]}
    return harness.run("schedule", event, {**NIGHTLY, **(inputs or {})})


def test_scheduled_drift_keeps_one_issue_open_until_a_clean_run_closes_it(
    harness: ActionHarness,
) -> None:
    write_support_suite(harness)
    create_baseline(harness)
    harness.llm.drift = True

    first = nightly(harness)
    second = nightly(harness)

    assert first.returncode == 1, first.log
    assert second.returncode == 1, second.log
    [issue] = harness.github.issues
    assert issue.state == "open"
    assert issue.title.startswith("PromptCanary: drift in support on openai/fake")
    assert "refund-policy" in (issue.body or "")
    assert "promptcanary" in issue.labels
    # A drifted night never becomes the baseline.
    assert second.outputs["baseline-status"] == "found"
    assert not harness.github.comments(issue.number)

    harness.llm.drift = False
    clean = nightly(harness)

    assert clean.returncode == 0, clean.log
    [closed] = harness.github.issues
    assert closed.number == issue.number and closed.state == "closed"
    [note] = harness.github.comments(issue.number)
    assert "no drift" in note.body.lower()
    assert clean.outputs["baseline-status"] == "updated"


def test_issue_on_drift_is_off_by_default(harness: ActionHarness) -> None:
    write_support_suite(harness)
    create_baseline(harness)
    harness.llm.drift = True

    result = nightly(harness, {"issue-on-drift": "false"})

    assert result.returncode == 1, result.log
    assert harness.github.issues == []
