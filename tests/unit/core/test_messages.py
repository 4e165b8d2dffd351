"""Conversations on CanaryPrompt: shapes accepted, turns refused, identity and wire form."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from promptcanary.core.models import CanaryPrompt
from promptcanary.core.probes.format import JsonValidityProbe
from promptcanary.core.spec import SuiteSpec

WEATHER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


def _trace(**last: Any) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a travel agent."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 31}', **last},
    ]


def test_an_openai_trace_is_sent_as_it_was_pasted() -> None:
    prompt = CanaryPrompt(messages=_trace())
    assert prompt.system_prompt == "You are a travel agent."
    assert prompt.text == "What is the weather in Paris?"
    assert prompt.chat_messages(prompt.system_prompt) == [
        {"role": "system", "content": "You are a travel agent."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "content": '{"temp_c": 31}', "tool_call_id": "call_1"},
    ]


def test_a_flat_tool_call_with_mapping_arguments_goes_out_in_openai_form() -> None:
    turns = _trace()
    turns[2] = {
        "role": "assistant",
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    sent = CanaryPrompt(messages=turns).chat_messages()
    assert sent[1]["tool_calls"] == [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
    ]  # fmt: skip


def test_a_two_turn_conversation_ends_with_the_user() -> None:
    prompt = CanaryPrompt(
        messages=[
            {"role": "user", "content": "My order is late."},
            {"role": "assistant", "content": "Sorry! What is the order number?"},
            {"role": "user", "content": "A-1234"},
        ]
    )
    assert prompt.text == "A-1234"
    assert [m["role"] for m in prompt.chat_messages("S")] == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        (_trace()[:3], "the last turn is a assistant turn"),
        (_trace(tool_call_id="call_9"), "answers no call: tool_call_id 'call_9'"),
        (
            [*_trace()[:3], {"role": "user", "content": "and?"}],
            "before the call(s) 'call_1' were answered",
        ),
        ([{"role": "assistant", "content": "hi"}], "needs a user turn"),
        ([{"role": "user", "content": "a", "tool_call_id": "x"}], "only a tool turn"),
        ([{"role": "user", "content": "a", "tool_calls": [WEATHER_CALL]}], "only an assistant"),
        ([{"role": "user"}], "a user turn needs 'content'"),
        ([{"role": "robot", "content": "a"}], "role"),
        ([{"role": "user", "content": "  "}], "last user turn is empty"),
    ],
)
def test_a_conversation_no_model_can_answer_is_refused(turns: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CanaryPrompt(messages=turns)


def test_text_and_a_different_conversation_are_refused() -> None:
    with pytest.raises(ValidationError, match="give `text` or `messages`, not both"):
        CanaryPrompt(text="other", messages=[{"role": "user", "content": "hi"}])


def test_a_system_turn_and_a_system_prompt_are_refused() -> None:
    with pytest.raises(ValidationError, match="keep one of them"):
        CanaryPrompt(messages=_trace(), system_prompt="Also this")


def test_a_prompt_without_text_or_conversation_says_what_to_give() -> None:
    with pytest.raises(ValidationError, match="give the prompt's `text`"):
        CanaryPrompt()


def test_the_id_and_hash_cover_every_turn() -> None:
    base = CanaryPrompt(messages=_trace())
    other_result = CanaryPrompt(messages=_trace(content='{"temp_c": 12}'))
    assert base.id.startswith("what-is-the-weather-in-paris-")
    assert base.id != other_result.id  # same last user turn, another tool result
    suite = SuiteSpec("s", [base, other_result], [JsonValidityProbe()])
    hashes = suite.prompt_hashes
    assert hashes[base.id] != hashes[other_result.id]
    assert base.id != CanaryPrompt(text=base.text, system_prompt=base.system_prompt).id


def test_a_conversation_survives_a_round_trip_through_json() -> None:
    prompt = CanaryPrompt(messages=_trace(), tags=["agent"])
    again = CanaryPrompt.model_validate_json(prompt.model_dump_json())
    assert again == prompt
    assert again.chat_messages() == prompt.chat_messages()


def test_the_tail_of_a_conversation_names_roles_calls_and_results() -> None:
    from promptcanary.core.messages import conversation_tail

    prompt = CanaryPrompt(messages=_trace())
    assert conversation_tail(prompt.messages or [], turns=2, limit=40) == (
        'assistant: → get_weather({"city": "Paris"})\ntool call_1: {"temp_c": 31}'
    )
    assert conversation_tail(prompt.messages or [], limit=10).splitlines()[0] == "user: What is t…"
