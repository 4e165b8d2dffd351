"""action.yml declares exactly the published inputs and outputs, with Settings' defaults."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptcanary_action.settings import Settings

ACTION_YML = Path(__file__).resolve().parents[3] / "action.yml"

# The action's published inputs and outputs: changing either set is a change of its interface.
PUBLISHED_INPUTS = {
    "config",
    "models",
    "github-token",
    "baseline",
    "baseline-branch",
    "baseline-path",
    "baseline-artifact",
    "baseline-max-age-days",
    "max-artifact-mb",
    "update-baseline",
    "fail-on",
    "regression-threshold",
    "improvement-threshold",
    "samples",
    "min-samples",
    "max-samples",
    "baseline-pool",
    "baseline-samples",
    "alpha",
    "concurrency",
    "timeout",
    "max-retries",
    "max-judge-requests",
    "max-error-rate",
    "max-latency-increase",
    "max-token-increase",
    "max-cost-increase",
    "fail-on-model-change",
    "trend-points",
    "temperature",
    "max-tokens",
    "seed",
    "comment",
    "comment-id",
    "check-run",
    "check-name",
    "issue-on-drift",
    "approve-label",
    "probe-modules",
    "working-directory",
    "report-dir",
    "shard",
    "mode",
}
PUBLISHED_OUTPUTS = {
    "overall-score",
    "baseline-score",
    "score-delta",
    "pass-rate",
    "regressions",
    "improvements",
    "inconclusive",
    "errors",
    "severity",
    "drift-detected",
    "baseline-status",
    "report-dir",
    "snapshot-path",
    "comment-file",
    "comment-url",
    "check-run-url",
    "latency-p95-ms",
    "prompt-tokens",
    "completion-tokens",
    "cost-usd",
    "usage-findings",
    "served-model-changed",
    "summary",
}
EXPRESSION = re.compile(r"\$\{\{.*\}\}")


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    # The runner reads action.yml as YAML; so does this test.
    document = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_inputs_are_exactly_the_published_ones(action: dict[str, Any]) -> None:
    assert set(action["inputs"]) == PUBLISHED_INPUTS


def test_outputs_are_exactly_the_published_ones(action: dict[str, Any]) -> None:
    assert set(action["outputs"]) == PUBLISHED_OUTPUTS


def test_every_input_and_output_is_described(action: dict[str, Any]) -> None:
    for kind in ("inputs", "outputs"):
        for name, spec in action[kind].items():
            assert isinstance(spec.get("description"), str) and spec["description"].strip(), name


def test_no_input_is_required(action: dict[str, Any]) -> None:
    # Each has a default (or "take the suite's"), so a bare `uses:` works.
    assert all(spec.get("required") is not True for spec in action["inputs"].values())


def test_every_default_is_a_string(action: dict[str, Any]) -> None:
    # YAML would read `default: true` or `default: 30` as bool/int; the runner passes strings.
    for name, spec in action["inputs"].items():
        assert isinstance(spec.get("default"), str), name


def test_every_input_is_a_settings_field_and_every_settings_input_is_declared(
    action: dict[str, Any],
) -> None:
    assert set(Settings.input_fields()) == set(action["inputs"])
    field_names = {f.name for f in dataclasses.fields(Settings)}
    assert set(Settings.input_fields().values()) <= field_names


def test_settings_field_names_are_the_snake_case_of_the_inputs() -> None:
    for name, attr in Settings.input_fields().items():
        assert attr == name.replace("-", "_")


def plain_defaults() -> list[tuple[str, str]]:
    document = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    return [
        (name, str(spec["default"]))
        for name, spec in document["inputs"].items()
        if not EXPRESSION.search(str(spec.get("default", "")))
    ]


@pytest.mark.parametrize(("name", "default"), plain_defaults())
def test_action_yml_default_means_the_same_as_settings_default(name: str, default: str) -> None:
    """The runner always passes action.yml's default; a local run passes nothing."""
    attr = Settings.input_fields()[name]
    given = Settings.from_environ({f"INPUT_{name.upper()}": default})
    assert getattr(given, attr) == getattr(Settings(), attr)


def test_the_token_defaults_to_the_workflow_token(action: dict[str, Any]) -> None:
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert Settings().github_token == ""


def test_defaults_documented_in_design(action: dict[str, Any]) -> None:
    defaults = {name: spec["default"] for name, spec in action["inputs"].items()}
    assert defaults["config"] == "canary.yaml"
    assert defaults["baseline"] == "branch"
    assert defaults["fail-on"] == "regression"
    assert defaults["update-baseline"] == "auto"
    assert defaults["comment"] == "update"
    assert defaults["check-run"] == "true"
    assert defaults["issue-on-drift"] == "false"
    assert defaults["approve-label"] == "promptcanary: approve"
    assert defaults["baseline-max-age-days"] == "30"
    assert defaults["max-artifact-mb"] == "50"
    assert defaults["mode"] == "run"


def test_runs_the_dockerfile_with_branding(action: dict[str, Any]) -> None:
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert action["branding"]["icon"] and action["branding"]["color"]
    assert action["name"] and action["description"]
