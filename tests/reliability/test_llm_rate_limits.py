"""LLM server fault: a 429 storm with ``Retry-After`` on 30% of the prompts.

Every prompt must still complete, each retry must wait at least what the server asked for, and
the retries must be counted in the report (``run.json`` ``retry_count``) and the log.
"""

from __future__ import annotations

import itertools

import pytest

from tests.reliability.conftest import (
    ActionHarness,
    keyword_prompts,
    responses_by_prompt,
    run_json,
    suite_text,
)

pytestmark = pytest.mark.e2e

PROMPTS = 10
LIMITED = ("p0", "p3", "p6")  # 30% of the prompts
FAILURES_EACH = 2


def test_rate_limited_prompts_complete_after_honouring_retry_after(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("storm", harness.llm.url, keyword_prompts(PROMPTS)))
    for prompt in LIMITED:
        harness.llm.script(
            f"Question {prompt}?",
            content="canary ok",
            status=429,
            fail_times=FAILURES_EACH,
            retry_after=1,
        )
    harness.llm.script(None, content="canary ok")

    result = harness.run_pr({"baseline": "none", "max-retries": "3"})

    assert result.returncode == 0, result.log
    assert result.outputs["errors"] == "0"
    assert result.outputs["overall-score"] == "1.0000"
    run = run_json(result)
    expected_retries = len(LIMITED) * FAILURES_EACH
    assert run["retry_count"] == expected_retries
    assert run["error_count"] == 0
    responses = responses_by_prompt(run)
    assert sorted(responses) == [f"p{i}" for i in range(PROMPTS)]
    for prompt, response in responses.items():
        assert response["retries"] == (FAILURES_EACH if prompt in LIMITED else 0), prompt
        assert response["content"] == "canary ok"
    assert f"{expected_retries} retries" in result.stderr

    # The server saw the retries, each at least Retry-After (1 s) after the 429 it follows.
    for prompt in LIMITED:
        seen = harness.llm.requests_matching(f"Question {prompt}?")
        assert [r["status"] for r in seen] == [429] * FAILURES_EACH + [200], prompt
        gaps = [b["received_at"] - a["received_at"] for a, b in itertools.pairwise(seen)]
        assert min(gaps) >= 0.95, (prompt, gaps)
    assert harness.llm.request_count == PROMPTS + expected_retries
