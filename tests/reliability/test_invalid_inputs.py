"""Every enumerated (and every bounded) input with an invalid value, through the entrypoint.

Each is exit 2 with one error naming the input and what it accepts, before any request is made.
The cleaning rules themselves are unit-tested in tests/unit/action/test_settings.py.
"""

from __future__ import annotations

import pytest

from tests.reliability.conftest import ActionHarness, keyword_prompts, suite_text

pytestmark = pytest.mark.e2e

CONFIG_ERROR = "PromptCanary: configuration error"

ENUMERATED = {
    "baseline": ("s3", "branch, artifact, path, none"),
    "update-baseline": ("sometimes", "auto, always, never"),
    "fail-on": (
        "sometimes",
        "regression, inconclusive, failure, never, low, medium, high, critical",
    ),
    "comment": ("sticky", "update, new, off"),
    "mode": ("replay", "run, merge, post-comment"),
    "check-run": ("yes", "true, false"),
    "issue-on-drift": ("1", "true, false"),
}
BOUNDED = {
    "samples": ("0", "must be auto or an integer ≥ 1 and ≤ 1000"),
    "max-samples": ("10000", "must be an integer ≥ 1 and ≤ 1000"),
    "concurrency": ("many", "must be an integer ≥ 1"),
    "max-retries": ("-1", "must be an integer ≥ 0"),
    "timeout": ("0", "> 0"),
    "max-error-rate": ("1.5", "≤ 1"),
    "alpha": ("1", "< 1"),
    "regression-threshold": ("-0.1", "≥ 0"),
    "max-tokens": ("0", "must be an integer ≥ 1"),
    "baseline-max-age-days": ("a month", "must be an integer ≥ 0"),
}


def _setup(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("inputs", harness.llm.url, keyword_prompts(1)))


def _only_config_error(harness: ActionHarness, name: str, value: str) -> str:
    result = harness.run_pr({"baseline": "none", name: value})
    assert result.returncode == 2, result.log
    errors = result.annotations("error")
    assert len(errors) == 1, result.log
    assert errors[0].properties.get("title") == CONFIG_ERROR
    assert harness.llm.request_count == 0
    assert harness.github.requests == []
    return errors[0].message


@pytest.mark.parametrize("name", list(ENUMERATED))
def test_enumerated_input_names_itself_and_the_valid_values(
    harness: ActionHarness, name: str
) -> None:
    _setup(harness)
    value, valid = ENUMERATED[name]

    message = _only_config_error(harness, name, value)

    assert message == f"input '{name}': '{value}' is not one of {valid}"


@pytest.mark.parametrize("name", list(BOUNDED))
def test_bounded_input_names_itself_and_the_bound(harness: ActionHarness, name: str) -> None:
    _setup(harness)
    value, rule = BOUNDED[name]

    message = _only_config_error(harness, name, value)

    assert message.startswith(f"input '{name}': '{value}' "), message
    assert rule in message


def test_an_input_value_cannot_inject_workflow_commands(harness: ActionHarness) -> None:
    _setup(harness)
    hostile = "never\n::set-output name=severity::none\n::add-mask::sk-test"

    message = _only_config_error(harness, "fail-on", hostile)

    # The value is shown on one line: its "commands" are text inside the one error.
    assert "::set-output name=severity::none" in message
    result_commands = [c.name for c in harness.run_pr({"fail-on": hostile}).commands]
    assert "set-output" not in result_commands
    assert "add-mask" not in result_commands
