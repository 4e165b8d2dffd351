"""What a step imports: the slow libraries load only when the step needs them.

A fresh interpreter (not the warm fork of the other whole-step tests) runs with
``PYTHONPROFILEIMPORTTIME``, which lists every module imported on stderr."""

from __future__ import annotations

import functools
import json

import pytest

from tests.e2e.conftest import ActionHarness
from tests.e2e.runner import run_action
from tests.suite_texts import PING_RECORDING, ping_suite

pytestmark = pytest.mark.e2e

SCHEDULE = {"schedule": "0 6 * * *", "repository": {"full_name": "octo-org/octo-repo"}}


def _imported(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def test_a_replay_step_that_posts_nothing_imports_neither_litellm_nor_pygithub(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", ping_suite("imports"))
    harness.write("recording.jsonl", json.dumps(PING_RECORDING) + "\n")
    harness.runner = functools.partial(run_action, fresh=True)

    # A token and a repository are set (as always on a runner), but a scheduled run with no
    # check run, comment or issue has nothing to ask GitHub: the client is never built.
    inputs = {"baseline": "none", "comment": "off", "check-run": "false"}
    result = harness.run("schedule", SCHEDULE, inputs)
    harness.env["PYTHONPROFILEIMPORTTIME"] = "1"
    profiled = harness.run("schedule", SCHEDULE, inputs)

    assert result.returncode == profiled.returncode == 0, profiled.log
    imported = _imported(profiled.stderr)
    assert "promptcanary_action.main" in imported  # the listing works
    assert "litellm" not in imported
    assert "github" not in imported
    assert "requests" not in imported
