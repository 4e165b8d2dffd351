"""Conversations on the real model: a two-turn conversation and a turn after a tool result,
sent through entrypoint.py and LiteLLM to llama.cpp's function-calling chat format, are answered
and scored (two requests in all).

What the base Gemma 3 270M says is not asserted (it rarely follows a conversation); what is
asserted is that the server accepts both conversations (assistant turns, a native tool call in
the history, a ``tool`` turn), that each answer is scored, and that each verdict follows from
the answer. Note: llama-cpp-python's ``chatml-function-calling`` template renders a ``tool``
turn's role but not its content, so this model answers without seeing the tool's result; the
exact message list the engine sends, tool result included, is checked against the fake server
(tests/integration/test_shapes_litellm.py). The calling turn here has text: the same template
reads an assistant turn's ``content`` unguarded, and LiteLLM leaves out a ``null`` one, so a
trace whose calling turn has ``content: null`` gets an HTTP 500 from this server (not from
OpenAI's API, which takes it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.local_model import LocalServer
from tests.fakes.github_server import FakeGitHubServer
from tests.real_model.conftest import make_harness, read_pair
from tests.real_model.test_tool_calls import verdicts

pytestmark = pytest.mark.real_model

SUITE = """\
name: conversation-canaries
defaults: {temperature: 0.0, max_tokens: 48, samples: 1, seed: 7}
prompts:
  - id: two-turn
    messages:
      - {role: user, content: "I am planning a trip to France."}
      - {role: assistant, content: "Lovely! Which city would you like to visit?"}
      - {role: user, content: "The capital. What is it called?"}
    probes:
      - {type: keyword_presence, id: names-paris, required_keywords: [Paris]}
      - {type: response_length, id: short, max_chars: 400}
  - id: after-tool
    tools:
      - type: function
        function:
          name: get_weather
          parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    messages:
      - {role: system, content: "You are a weather assistant."}
      - {role: user, content: "What is the weather in Paris?"}
      - role: assistant
        content: "Let me look that up."
        tool_calls:
          - {id: call_1, type: function, function: {name: get_weather, arguments: '{"city": "Paris"}'}}
      - {role: tool, tool_call_id: call_1, content: '{"temp_c": 31, "sky": "clear"}'}
    probes:
      - {type: keyword_presence, id: says-31, required_keywords: ["31"]}
      - {type: response_length, id: short, max_chars: 400}
"""
EXPECTED = {"two-turn": {"names-paris": "paris"}, "after-tool": {"says-31": "31"}}


@pytest.mark.timeout(600)
def test_a_two_turn_conversation_and_a_tool_result_turn_are_answered_and_scored(
    tmp_path: Path, github_server: FakeGitHubServer, function_calling_server: LocalServer
) -> None:
    harness = make_harness(tmp_path, github_server)
    harness.write_suite(SUITE)

    result = harness.run_push(
        function_calling_server,
        {"baseline": "none", "fail-on": "never", "comment": "off", "check-run": "false"},
    )

    assert result.returncode == 0, result.log
    run = read_pair(result, "run.json")
    responses = {r["prompt_id"]: r for r in run["llm_responses"]}
    assert set(responses) == set(EXPECTED)
    for prompt_id, keywords in EXPECTED.items():
        response = responses[prompt_id]
        assert response["error"] is None, response
        found = verdicts(run["probe_results"], prompt_id)
        content = response["content"]
        print(
            f"\n{prompt_id}: finish_reason={response['finish_reason']!r} "
            f"tool_calls={[c['name'] for c in response['tool_calls']]} content={content[:160]!r}"
            f"\n  verdicts: {found}"
        )
        assert set(found) == {*keywords, "short"}
        for key, word in keywords.items():
            assert found[key] == (word in content.lower()), found
        assert found["short"] == (len(content) <= 400), found
