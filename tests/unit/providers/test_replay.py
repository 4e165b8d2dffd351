"""ReplayProvider: answers from a JSONL recording."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ToolCall
from promptcanary.core.run.provider import ProviderError
from promptcanary.core.run.recording import write_recording
from promptcanary.providers.replay import ReplayFileError, ReplayProvider


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def answer(provider: ReplayProvider, prompt_id: str, sample: int = 0) -> LLMResponse:
    prompt = CanaryPrompt(id=prompt_id, text="ignored")
    return asyncio.run(provider.acomplete(prompt, sample=sample))


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "rec.jsonl",
        [
            {"prompt_id": "a", "sample": 1, "content": "a-one", "model": "openai/gpt-x"},
            {
                "prompt_id": "a",
                "sample": 0,
                "content": "a-zero",
                "model": "openai/gpt-x",
                "prompt_tokens": 3,
                "completion_tokens": 4,
                "total_tokens": 7,
            },
            {
                "prompt_id": "t",
                "sample": 0,
                "content": "",
                "finish_reason": "tool_calls",
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                "model": "openai/gpt-x",
                "error": None,
            },
            {
                "prompt_id": "e",
                "sample": 0,
                "content": None,
                "model": "openai/gpt-x",
                "error": "HTTP 500 InternalServerError: boom",
            },
        ],
    )


def test_answers_the_recorded_sample(recording: Path) -> None:
    provider = ReplayProvider(recording)
    zero, one = answer(provider, "a", 0), answer(provider, "a", 1)
    assert (zero.content, zero.sample, zero.total_tokens) == ("a-zero", 0, 7)
    assert (one.content, one.sample) == ("a-one", 1)
    assert zero.provider_model_id == "openai/gpt-x"


def test_samples_beyond_the_recording_wrap_around(recording: Path) -> None:
    provider = ReplayProvider(recording)
    assert answer(provider, "a", 2).content == "a-zero"
    assert answer(provider, "a", 3).content == "a-one"
    assert answer(provider, "a", 3).sample == 3


def test_tool_calls_are_replayed(recording: Path) -> None:
    response = answer(ReplayProvider(recording), "t")
    assert response.tool_calls == [
        ToolCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
    ]
    assert response.finish_reason == "tool_calls"


def test_recorded_error_replays_as_non_transient_error(recording: Path) -> None:
    with pytest.raises(ProviderError, match="boom") as info:
        answer(ReplayProvider(recording), "e")
    assert info.value.transient is False


def test_missing_prompt_names_the_prompt_and_the_file(recording: Path) -> None:
    with pytest.raises(ProviderError) as info:
        answer(ReplayProvider(recording), "nope")
    assert "no recorded response for prompt 'nope'" in str(info.value)
    assert str(recording) in str(info.value)
    assert info.value.transient is False


def test_model_id_defaults_to_the_recorded_model_and_can_be_set(recording: Path) -> None:
    assert ReplayProvider(recording).config.model_id == "openai/gpt-x"
    assert ReplayProvider(recording, model_id="mine").config.model_id == "mine"


def test_bad_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt_id": "a", "content": "x"}\n\n{not json\n', encoding="utf-8")
    with pytest.raises(ReplayFileError, match=r"bad\.jsonl:3: not valid JSON"):
        ReplayProvider(path)


def test_line_without_prompt_id_is_reported(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [{"content": "x"}])
    with pytest.raises(ReplayFileError, match=r"bad\.jsonl:1: missing or empty 'prompt_id'"):
        ReplayProvider(path)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayFileError, match="cannot read replay file"):
        ReplayProvider(tmp_path / "absent.jsonl")


def test_write_recording_round_trips(tmp_path: Path) -> None:
    responses = [
        LLMResponse(
            prompt_id="x",
            provider_model_id="m",
            content="héllo",
            sample=0,
            prompt_tokens=1,
            completion_tokens=2,
            total_tokens=3,
            finish_reason="stop",
        ),
        LLMResponse(
            prompt_id="x",
            provider_model_id="m",
            content="",
            sample=1,
            tool_calls=[ToolCall(name="f", arguments=None, arguments_raw="{bad", id="c1")],
        ),
        LLMResponse(prompt_id="y", provider_model_id="m", error="HTTP 429 rate limited"),
    ]
    path = write_recording(tmp_path / "out.jsonl", responses)
    provider = ReplayProvider(path)

    first = answer(provider, "x", 0)
    assert (first.content, first.total_tokens, first.finish_reason) == ("héllo", 3, "stop")
    assert answer(provider, "x", 1).tool_calls == responses[1].tool_calls
    with pytest.raises(ProviderError, match="429 rate limited"):
        answer(provider, "y")


def test_sync_complete_answers_sample_zero(recording: Path) -> None:
    response = ReplayProvider(recording).complete(CanaryPrompt(id="a", text="q"))
    assert response.content == "a-zero"
