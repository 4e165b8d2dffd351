"""LLM server fault: answers that are not usable chat completions.

A body that is not JSON, a completion without ``choices`` and a message whose content is null are
each recorded as errored with a reason a user can act on; the step does not crash and the other
prompts are scored.
"""

from __future__ import annotations

import pytest

from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    responses_by_prompt,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e


def test_malformed_answers_are_errored_with_a_clear_reason(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("broken", harness.llm.url, keyword_prompts(4)))
    harness.llm.script("Question p0?", malformed=True)
    harness.llm.script("Question p1?", empty_choices=True)
    harness.llm.script("Question p2?", null_content=True)
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr({"baseline": "none", "max-retries": "1", "max-error-rate": "1"})

    assert result.returncode == 0, result.log
    assert "Traceback" not in result.log
    assert result.outputs["errors"] == "3"
    assert result.outputs["overall-score"] == "1.0000"  # p3, the one usable answer
    responses = responses_by_prompt(run_json(result))
    reasons = {prompt: (responses[prompt]["error"] or "") for prompt in ("p0", "p1", "p2")}
    assert "json" in reasons["p0"].lower(), reasons
    assert "choices" in reasons["p1"].lower(), reasons
    assert "content" in reasons["p2"].lower(), reasons
    assert responses["p3"]["error"] is None
    # A body that is not JSON may be a proxy's one-off: retried. The other two are well-formed
    # answers the same request would get again: not retried.
    assert len(harness.llm.requests_matching("Question p0?")) == 2
    assert len(harness.llm.requests_matching("Question p1?")) == 1
    assert len(harness.llm.requests_matching("Question p2?")) == 1
    [comment] = harness.github.comments(7)
    for prompt in ("p0", "p1", "p2"):
        assert prompt in comment.body
