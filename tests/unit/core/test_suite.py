"""CanarySuite identities: probe keys and the hashes that tell an edit from drift."""

from __future__ import annotations

import asyncio

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.probes import JsonValidityProbe, KeywordPresenceProbe
from promptcanary.core.run.options import RunOptionError, RunOptions
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.spec import RunDefaults
from promptcanary.core.suite import CanarySuite


def _suite(*prompts: CanaryPrompt, system: str | None = None) -> CanarySuite:
    return CanarySuite("s", list(prompts), [JsonValidityProbe()], default_system_prompt=system)


def test_prompt_hash_changes_with_what_the_model_receives_only() -> None:
    base = CanaryPrompt(id="p", text="Return JSON", description="old note")
    same = _suite(base.model_copy(update={"description": "new note", "tags": ["x"]}))
    edited = _suite(base.model_copy(update={"text": "Return JSON, please"}))
    with_tools = _suite(base.model_copy(update={"tools": [{"type": "function"}]}))
    original = _suite(base).prompt_hashes["p"]

    assert same.prompt_hashes["p"] == original  # notes and tags are not sent
    assert edited.prompt_hashes["p"] != original
    assert with_tools.prompt_hashes["p"] != original
    # The suite-wide system prompt is part of what a prompt without its own receives.
    assert _suite(base, system="Be terse.").prompt_hashes["p"] != original


def test_probe_keys_tell_two_parameter_sets_of_one_probe_apart() -> None:
    suite = CanarySuite(
        "s",
        [CanaryPrompt(id="p", text="t")],
        [
            KeywordPresenceProbe(required_keywords=["a"]),
            KeywordPresenceProbe(required_keywords=["b"]),
        ],
    )
    keys = [b.key for b in suite.bindings]
    assert len(set(keys)) == 2 and all(k.startswith("keyword_presence-") for k in keys)
    assert suite.probe_config_hash != _suite(CanaryPrompt(id="p", text="t")).probe_config_hash


class _EchoProvider(BaseLLMProvider):
    """Answers every prompt with a fixed JSON object."""

    def __init__(self) -> None:
        super().__init__(ProviderConfig(model_id="fake/echo"))

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(prompt_id=prompt.id, provider_model_id="fake/echo", content='{"a": 1}')


def test_run_works_when_called_inside_a_running_event_loop() -> None:
    # The spec's run() is synchronous: a notebook cell or an async web handler calls it with an
    # event loop already running in the thread, where asyncio.run() refuses to start.
    suite = _suite(CanaryPrompt(id="p", text="Return JSON"))

    async def caller() -> float:
        return suite.run(_EchoProvider(), show_progress=False).overall_score

    assert asyncio.run(caller()) == 1.0


# ── run options: caller < suite defaults < engine defaults ──────────────────


def test_unset_options_take_the_suite_defaults() -> None:
    defaults = RunDefaults(temperature=0.3, max_tokens=99, seed=5, samples=3)
    resolved = RunOptions(concurrency=2).over(defaults)
    assert (resolved.temperature, resolved.max_tokens, resolved.seed, resolved.samples) == (
        0.3,
        99,
        5,
        3,
    )
    assert resolved.concurrency == 2
    assert RunOptions().adaptive  # neither the caller nor the suite chose: samples: auto
    assert RunOptions(samples=4).sample_count == 4


def test_an_explicit_value_equal_to_the_engine_default_still_overrides_the_suite() -> None:
    # samples: 1 (or temperature 0.0, seed 0) is a choice, not "not set".
    defaults = RunDefaults(temperature=0.7, seed=5, samples=3)
    resolved = RunOptions(samples=1, temperature=0.0, seed=0).over(defaults)
    assert (resolved.samples, resolved.temperature, resolved.seed) == (1, 0.0, 0)
    assert resolved.sample_count == 1


@pytest.mark.parametrize(
    ("option", "value"),
    [("concurrency", 0), ("timeout", 0.0), ("timeout", float("inf")), ("max_retries", -1)],
)
def test_run_options_refuse_what_the_action_refuses(option: str, value: float) -> None:
    with pytest.raises(RunOptionError) as info:
        RunOptions(**{option: value})  # type: ignore[arg-type]
    assert info.value.field == option


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"temperature": 2.5}, "temperature", "temperature must be a number ≥ 0 and ≤ 2, got 2.5"),
        ({"temperature": float("nan")}, "temperature", "must be a number ≥ 0 and ≤ 2, got nan"),
        (
            {"max_tokens": 99999999999999999999999},
            "max_tokens",
            "max_tokens must be an integer ≥ 1 and ≤ 1000000, got 99999999999999999999999",
        ),
        ({"samples": 0}, "samples", "samples must be auto or an integer ≥ 1 and ≤ 1000, got 0"),
        ({"baseline_pool": 101}, "baseline_pool", "must be an integer ≥ 1 and ≤ 100, got 101"),
        (
            {"min_samples": 9, "max_samples": 4},
            "min_samples",
            "min_samples 9 is above max_samples 4",
        ),
    ],
)
def test_run_options_name_the_field_and_the_bound_of_every_refused_value(
    options: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(RunOptionError) as info:
        RunOptions(**options)  # type: ignore[arg-type]
    assert info.value.field == field
    assert message in str(info.value)
