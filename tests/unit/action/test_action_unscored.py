"""A step whose every answer errored, even under ``max-error-rate: 1``: nothing was measured."""

from __future__ import annotations

from pathlib import Path

from tests.unit.action.test_action_inprocess import (
    DOWN,
    push_event,
    run_step,
    workspace_with_suite,
)


def test_a_step_with_no_scored_answer_has_no_score_and_exits_3(tmp_path: Path) -> None:
    workspace = workspace_with_suite(tmp_path)

    step = run_step(push_event(workspace) | {"INPUT_MAX-ERROR-RATE": "1"}, DOWN)

    assert step.code == 3
    assert (step.workflow.outputs["overall-score"], step.workflow.outputs["pass-rate"]) == ("", "")
    assert not (workspace / ".promptcanary").exists()  # never promoted
