"""LLM server fault: a request that never answers.

The request times out after ``timeout``, is retried, then recorded as errored; the run finishes
within timeout × (retries + 1) plus slack, and every other prompt is answered.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    responses_by_prompt,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e

TIMEOUT = 2.0
RETRIES = 1


def test_hanging_request_times_out_is_retried_then_errored(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("hang", harness.llm.url, keyword_prompts(3)))
    harness.llm.script("Question p1?", hang=True)
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr(
        {
            "baseline": "none",
            "timeout": f"{TIMEOUT:g}",
            "max-retries": str(RETRIES),
            "max-error-rate": "0.5",
        }
    )

    assert result.returncode == 0, result.log
    assert result.outputs["errors"] == "1"
    run = run_json(result)
    responses = responses_by_prompt(run)
    assert "timed out" in responses["p1"]["error"]
    assert responses["p1"]["retries"] == RETRIES
    assert responses["p0"]["content"] == "canary ok"
    assert responses["p2"]["content"] == "canary ok"

    hung = harness.llm.requests_matching("Question p1?")
    # No hidden retries inside LiteLLM or the OpenAI SDK. (On a cold, loaded machine LiteLLM's
    # first-call set-up can use up the first attempt's timeout before the request is sent, so
    # the server may see fewer requests than attempts.)
    assert 1 <= len(hung) <= RETRIES + 1
    # Each attempt waited the whole timeout (measured from the call, which includes LiteLLM's
    # first-request set-up, so the server-side gap can be shorter). No upper bound: how long a
    # loaded machine takes is bench/'s business; pytest-timeout catches a real hang.
    started = datetime.fromisoformat(run["started_at"])
    finished = datetime.fromisoformat(run["finished_at"])
    elapsed = (finished - started).total_seconds()
    assert elapsed >= TIMEOUT * (RETRIES + 1), elapsed
    # The comment names the errored prompt and why.
    [comment] = harness.github.comments(7)
    assert "timed out" in comment.body
