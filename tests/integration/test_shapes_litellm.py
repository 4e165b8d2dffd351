"""Conversations through the runner and real LiteLLM to the local OpenAI-compatible fake: the
model receives the conversation exactly as the suite gives it (roles, tool calls, call ids)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from promptcanary.core.config.schema import load_suite
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.litellm import LiteLLMProvider
from tests.fakes.llm_server import FakeLLMServer

SUITE = """\
name: agent-turns
system_prompt: You are a travel agent.
defaults: {samples: 1}
prompts:
  - id: after-tool
    tools: [{type: function, function: {name: get_weather, parameters: {type: object}}}]
    messages:
      - {role: user, content: "Weather in Paris?"}
      - role: assistant
        content: null
        tool_calls:
          - {id: call_abc, type: function, function: {name: get_weather, arguments: '{"city": "Paris"}'}}
          - {id: call_def, name: get_weather, arguments: {city: Lyon}}
      - {role: tool, tool_call_id: call_abc, content: '{"temp_c": 31}'}
      - {role: tool, tool_call_id: call_def, content: '{"temp_c": 12}'}
    probes:
      - type: keyword_presence
        required_keywords: ["31"]
  - id: second-turn
    messages:
      - {role: system, content: You are a support agent.}
      - {role: user, content: My order is late.}
      - {role: assistant, content: "Which order number?"}
      - {role: user, content: "A-1234"}
    probes:
      - type: keyword_presence
        required_keywords: ["A-1234"]
"""

AFTER_TOOL = [
    {"role": "system", "content": "You are a travel agent."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",  # LiteLLM leaves out the null content of a tool-calling turn
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call_def",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
            },
        ],
    },
    {"role": "tool", "content": '{"temp_c": 31}', "tool_call_id": "call_abc"},
    {"role": "tool", "content": '{"temp_c": 12}', "tool_call_id": "call_def"},
]

SECOND_TURN = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "My order is late."},
    {"role": "assistant", "content": "Which order number?"},
    {"role": "user", "content": "A-1234"},
]


def test_a_conversation_with_tool_results_arrives_as_the_exact_message_list(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("Weather in Paris?", content="It is 31 °C in Paris and 12 °C in Lyon.")
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    suite = load_suite(path, suite_class=CanarySuite)
    provider = LiteLLMProvider("openai/fake", api_base=llm_server.url, api_key="sk-test")

    result = asyncio.run(
        run_suite(suite, provider, RunOptions(show_progress=False), rng=random.Random(0))
    )

    sent = {r["last_user"]: r for r in llm_server.requests}
    assert sent["Weather in Paris?"]["messages"] == AFTER_TOOL
    assert sent["Weather in Paris?"]["tools"][0]["function"]["name"] == "get_weather"
    assert sent["A-1234"]["messages"] == SECOND_TURN
    assert llm_server.request_count == 2
    scores = {r.prompt_id: r.passed for r in result.probe_results}
    assert scores == {"after-tool": True, "second-turn": True}  # echo of "A-1234" has it
