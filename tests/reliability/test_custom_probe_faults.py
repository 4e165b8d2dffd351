"""Custom probe modules that fail: at import (exit 2 naming the file and line) and inside
``evaluate`` (a scored failure with the error in its details; the run goes on)."""

from __future__ import annotations

import pytest

from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e

CONFIG_ERROR = "PromptCanary: configuration error"

RAISES_AT_IMPORT = """\
from promptcanary.core.probes.base import probe

SETTINGS = {}
THRESHOLD = SETTINGS["threshold"]  # line 4: a bug in the user's module
"""

RAISES_IN_EVALUATE = """\
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult
from promptcanary.core.probes.base import BaseProbe


class ExplodingProbe(BaseProbe):
    probe_id = "exploding"
    name = "Exploding"

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        if "boom" in response.content:
            raise RuntimeError("probe bug: cannot handle " + response.content)
        return ProbeResult(
            probe_id=self.probe_id, prompt_id=prompt.id, passed=True, score=1.0, details="ok"
        )
"""


def test_probe_module_raising_at_import_is_exit_2_naming_the_file(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("custom", harness.llm.url, keyword_prompts(1)))
    harness.write("probes/broken.py", RAISES_AT_IMPORT)

    result = harness.run_pr({"baseline": "none", "probe-modules": "probes/broken.py"})

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert error.properties.get("title") == CONFIG_ERROR
    assert "probes/broken.py:4" in error.message
    assert "KeyError" in error.message
    assert "threshold" in error.message
    assert "Traceback" not in result.log
    assert harness.llm.request_count == 0


def test_probe_module_with_a_syntax_error_is_exit_2_naming_the_line(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("custom", harness.llm.url, keyword_prompts(1)))
    harness.write("probes/typo.py", "def evaluate(:\n    pass\n")

    result = harness.run_pr({"baseline": "none", "probe-modules": "probes/typo.py"})

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert "probes/typo.py:1" in error.message
    assert "SyntaxError" in error.message


def test_probe_raising_in_evaluate_is_a_scored_failure_and_the_run_continues(
    harness: ActionHarness,
) -> None:
    prompts = "".join(
        f"  - id: p{i}\n    text: Question p{i}?\n    probes:\n      - type: exploding\n"
        f"      - type: keyword_presence\n        required_keywords: [canary]\n"
        for i in range(3)
    )
    harness.write("canary.yaml", suite_text("custom", harness.llm.url, prompts))
    harness.write("probes/exploding.py", RAISES_IN_EVALUATE)
    harness.llm.script("Question p1?", content="canary boom")
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr(
        {"baseline": "none", "probe-modules": "probes/exploding.py", "fail-on": "failure"}
    )

    # The probe's crash is a failed probe (fail-on: failure trips), not an errored response.
    assert result.returncode == 1, result.log
    assert result.outputs["errors"] == "0"
    run = run_json(result)
    results = {(r["prompt_id"], r["probe_id"]): r for r in run["probe_results"]}
    assert len(results) == 6
    crashed = results[("p1", "exploding")]
    assert crashed["passed"] is False
    assert crashed["score"] == 0.0
    assert crashed["errored"] is False
    assert "RuntimeError" in crashed["details"]
    assert "probe bug" in crashed["details"]
    assert results[("p0", "exploding")]["passed"] is True
    assert results[("p2", "exploding")]["passed"] is True
    assert all(results[(f"p{i}", "keyword_presence")]["passed"] for i in range(3))
    assert "Traceback" not in result.log
