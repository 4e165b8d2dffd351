"""Native tool calls from the real server reach the tool-use probes.

The two tool prompts of the example suite go through entrypoint.py to the server's
function-calling chat format. llama-cpp-python's format answers with native ``tool_calls`` only
when the request carries ``tool_choice``, which the LiteLLM provider now sends (``"auto"``) with
every prompt that has tools. With ``"auto"`` that format lets the model choose greedily between a
call and a message; the base Gemma 3 270M, under the example's support-desk system prompt,
chooses the message (returned empty), so here the prompts carry an agent's system prompt that
asks for function calls. The test prints what the model produced for each prompt and the probes'
verdicts, and checks that the verdicts follow from what was produced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scripts.local_model import LocalServer
from tests.fakes.github_server import FakeGitHubServer
from tests.real_model.conftest import make_harness, read_pair

pytestmark = pytest.mark.real_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "canary.yaml"
INPUTS = {"max-tokens": "96", "fail-on": "never", "comment": "off", "check-run": "false"}
AGENT = "You are a function-calling agent. Answer every request with a function call."


def tool_suite() -> tuple[str, dict[str, str]]:
    """The example suite cut down to its prompts with tools; {prompt id: expected tool name}."""
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    prompts = [{**p, "system_prompt": AGENT} for p in document["prompts"] if p.get("tools")]
    expected = {p["id"]: p["tools"][0]["function"]["name"] for p in prompts}
    suite = {
        "name": "tool-canaries",
        "defaults": document["defaults"],
        "prompts": prompts,
    }
    return yaml.safe_dump(suite, sort_keys=False), expected


def verdicts(results: list[dict[str, Any]], prompt_id: str) -> dict[str, bool]:
    return {r["probe_key"]: r["passed"] for r in results if r["prompt_id"] == prompt_id}


@pytest.mark.timeout(600)
def test_native_tool_calls_reach_the_tool_probes(
    tmp_path: Path, github_server: FakeGitHubServer, function_calling_server: LocalServer
) -> None:
    harness = make_harness(tmp_path, github_server)
    text, expected = tool_suite()
    harness.write_suite(text)

    result = harness.run_push(function_calling_server, {**INPUTS, "baseline": "none"})

    assert result.returncode == 0, result.log
    run = read_pair(result, "run.json")
    responses = {r["prompt_id"]: r for r in run["llm_responses"]}
    assert set(responses) == set(expected)
    called = []
    for prompt_id, name in expected.items():
        response = responses[prompt_id]
        assert response["error"] is None, response
        calls = response["tool_calls"]
        found = verdicts(run["probe_results"], prompt_id)
        print(
            f"\n{prompt_id}: finish_reason={response['finish_reason']!r} "
            f"tool_calls={[(c['name'], c['arguments_raw']) for c in calls]} "
            f"content={response['content'][:120]!r}\n  verdicts: {found}"
        )
        # The name probe passes exactly when the first native call names the expected tool, the
        # presence probe exactly when there is a native call.
        [name_key] = [k for k in found if k.startswith("tool_call_name")]
        assert found[name_key] == (bool(calls) and calls[0]["name"] == name), found
        for key in (k for k in found if k.startswith("tool_call_presence")):
            assert found[key] == bool(calls), found
        if calls:
            called.append(prompt_id)
            # Arguments arrive parsed: the server's grammar makes them JSON of the tool's schema.
            assert isinstance(calls[0]["arguments"], dict), calls[0]
    # Without tool_choice in the request the server answers every prompt in prose.
    assert called, "the function-calling server produced no native tool call at all"
