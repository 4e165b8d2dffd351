"""main: suite files found by the `config` input (each loaded once, names unique); the log."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from promptcanary.core.models import CanaryRunResult, ProviderConfig
from promptcanary_action.errors import UsageError
from promptcanary_action.main import _log_outcome, load_suites
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.settings import GitHubEnv, Settings
from promptcanary_action.workflow import Workflow
from tests.e2e.runner import parse_workflow_commands

SUITE = """\
name: {name}
probes:
  - type: json_validity
prompts:
  - text: Return JSON.
"""


def _settings(workspace: Path, *config: str) -> Settings:
    return dataclasses.replace(
        Settings(), config=list(config), github=GitHubEnv(workspace=workspace)
    )


def test_load_suites_skips_folders_a_glob_matches_and_keeps_repo_paths(tmp_path: Path) -> None:
    (tmp_path / "canaries" / "nested").mkdir(parents=True)
    (tmp_path / "canaries" / "a.yaml").write_text(SUITE.format(name="a"), encoding="utf-8")
    (tmp_path / "canaries" / "nested" / "b.yaml").write_text(
        SUITE.format(name="b"), encoding="utf-8"
    )

    suites = load_suites(_settings(tmp_path, "canaries/**"), tmp_path)

    assert [s.suite.name for s in suites] == ["a", "b"]
    assert [s.repo_path for s in suites] == ["canaries/a.yaml", "canaries/nested/b.yaml"]


def test_two_suite_files_with_one_name_are_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(SUITE.format(name="same"), encoding="utf-8")
    (tmp_path / "two.yaml").write_text(SUITE.format(name="same"), encoding="utf-8")

    with pytest.raises(UsageError) as caught:
        load_suites(_settings(tmp_path, "*.yaml"), tmp_path)

    message = str(caught.value)
    assert "two.yaml" in message and "one.yaml" in message and "'same'" in message


def test_pair_notes_reach_the_log_as_warnings() -> None:
    # On a push there is no comment: a baseline that could not be saved (no `contents: write`)
    # must show in the run's annotations, not only as a bullet deep in the job summary.
    run = CanaryRunResult(suite_name="demo", provider=ProviderConfig(model_id="openai/x"))
    note = "The baseline could not be saved: the workflow needs `permissions: contents: write`"
    pair = PairOutcome(
        suite_name="demo", suite_file="canary.yaml", model="openai/x", run=run, notes=[note]
    )
    outcome = StepOutcome(pairs=[pair], fail_on="regression", gate_failed=False, verdict="ok")
    out = io.StringIO()

    _log_outcome(outcome, Workflow(out))

    warnings = [c for c in parse_workflow_commands(out.getvalue()) if c.name == "warning"]
    assert [(w.properties["title"], w.message) for w in warnings] == [("demo on openai/x", note)]
