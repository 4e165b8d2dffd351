"""Tool-use probes: native calls first, calls written in the content as the fallback."""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ToolCall
from promptcanary.core.probes.tool_use import (
    WRONG_TOOL_SCORE,
    ToolCallArgsProbe,
    ToolCallNameProbe,
    ToolCallPresenceProbe,
    ToolCallSchemaProbe,
)

PROMPT = CanaryPrompt(id="weather", text="What is the weather in Paris?")


def call(name: str, arguments: Any = None, raw: str | None = None) -> ToolCall:
    if raw is None:
        raw = json.dumps(arguments) if arguments is not None else ""
    return ToolCall(name=name, arguments=arguments, arguments_raw=raw)


def respond(content: str = "", *calls: ToolCall) -> LLMResponse:
    return LLMResponse(
        prompt_id=PROMPT.id, provider_model_id="fake/model", content=content, tool_calls=list(calls)
    )


WEATHER = call("get_weather", {"city": "Paris", "unit": "celsius"})
CONTENT_JSON = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})


# ── tool_call_presence ───────────────────────────────────────────────────────


class TestToolCallPresence:
    def test_native_call_passes(self) -> None:
        result = ToolCallPresenceProbe()(PROMPT, respond("", WEATHER))
        assert (result.passed, result.score) == (True, 1.0)
        assert result.metadata["source"] == "native"
        assert result.metadata["called_names"] == ["get_weather"]
        assert result.category is ProbeCategory.TOOL_USE
        assert result.prompt_id == "weather"

    def test_plain_text_fails(self) -> None:
        result = ToolCallPresenceProbe()(PROMPT, respond("It is sunny in Paris."))
        assert (result.passed, result.score) == (False, 0.0)
        assert result.metadata["source"] == ""
        assert "Expected a tool call" in result.details

    def test_expect_no_call(self) -> None:
        probe = ToolCallPresenceProbe(expect_tool_call=False)
        assert probe(PROMPT, respond("It is sunny.")).score == 1.0
        called = probe(PROMPT, respond("", WEATHER))
        assert (called.passed, called.score) == (False, 0.0)
        assert "Expected none" in called.details

    def test_content_json_fallback(self) -> None:
        result = ToolCallPresenceProbe()(PROMPT, respond(f"```json\n{CONTENT_JSON}\n```"))
        assert result.passed
        assert result.metadata["source"] == "content"

    def test_call_syntax_in_text_counts(self) -> None:
        result = ToolCallPresenceProbe()(
            PROMPT, respond('I will call get_weather({"city": "Paris"}).')
        )
        assert result.passed
        assert result.metadata["called_names"] == ["get_weather"]

    def test_prose_with_parentheses_is_not_a_call(self) -> None:
        result = ToolCallPresenceProbe()(PROMPT, respond("Use print(x) or f({1, 2}) in Python."))
        assert not result.passed

    @pytest.mark.parametrize(
        ("strategy", "native", "content", "expected"),
        [
            ("native", True, False, True),
            ("native", False, True, False),
            ("content", True, False, False),
            ("content", False, True, True),
            ("any", True, False, True),
            ("any", False, True, True),
            ("any", False, False, False),
        ],
    )
    def test_strategies(self, strategy: str, native: bool, content: bool, expected: bool) -> None:
        response = respond(CONTENT_JSON if content else "Sunny.", *([WEATHER] if native else []))
        assert ToolCallPresenceProbe(strategy=strategy)(PROMPT, response).passed is expected

    def test_several_calls_are_all_reported(self) -> None:
        result = ToolCallPresenceProbe()(PROMPT, respond("", WEATHER, call("get_time", {})))
        assert result.metadata["call_count"] == 2
        assert result.metadata["called_names"] == ["get_weather", "get_time"]

    def test_invalid_strategy_names_allowed_values(self) -> None:
        with pytest.raises(ValueError, match="strategy") as info:
            ToolCallPresenceProbe(strategy="regex")
        assert all(s in str(info.value) for s in ("'any'", "'native'", "'content'"))

    @pytest.mark.parametrize(
        ("old", "new"), [("auto", "any"), ("json", "content"), ("text", "content")]
    )
    def test_promptcanary_022_strategy_names_map_to_ours(self, old: str, new: str) -> None:
        assert ToolCallPresenceProbe(strategy=old).strategy == new

    def test_non_boolean_expectation_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="expect_tool_call"):
            ToolCallPresenceProbe(expect_tool_call="yes")  # type: ignore[arg-type]

    def test_params_are_public_attributes(self) -> None:
        probe = ToolCallPresenceProbe(expect_tool_call=False, strategy="native")
        assert probe.params() == {"expect_tool_call": False, "strategy": "native"}


# ── tool_call_name ───────────────────────────────────────────────────────────


class TestToolCallName:
    def test_expected_name_passes(self) -> None:
        result = ToolCallNameProbe(expected_name="get_weather")(PROMPT, respond("", WEATHER))
        assert (result.passed, result.score) == (True, 1.0)
        assert result.metadata["matched_name"] == "get_weather"

    def test_wrong_tool_gets_partial_credit(self) -> None:
        result = ToolCallNameProbe("get_weather")(PROMPT, respond("", call("search_web", {})))
        assert (result.passed, result.score) == (False, 0.25)
        assert WRONG_TOOL_SCORE == 0.25
        assert result.metadata["called_names"] == ["search_web"]
        assert "search_web" in result.details and "get_weather" in result.details

    def test_no_call_scores_zero(self) -> None:
        result = ToolCallNameProbe("get_weather")(PROMPT, respond("Sunny."))
        assert (result.passed, result.score) == (False, 0.0)
        assert result.metadata["called_names"] == []

    def test_case_sensitivity(self) -> None:
        response = respond("", call("Get_Weather", {}))
        assert ToolCallNameProbe("get_weather")(PROMPT, response).score == WRONG_TOOL_SCORE
        assert ToolCallNameProbe("get_weather", case_sensitive=False)(PROMPT, response).passed

    def test_alias_matches(self) -> None:
        probe = ToolCallNameProbe("get_weather", allow_aliases=["weather_lookup"])
        result = probe(PROMPT, respond("", call("weather_lookup", {})))
        assert result.passed
        assert result.metadata["matched_name"] == "weather_lookup"

    def test_any_of_several_calls_may_match(self) -> None:
        result = ToolCallNameProbe("get_weather")(
            PROMPT, respond("", call("search_web", {}), WEATHER)
        )
        assert result.passed
        assert result.metadata["called_names"] == ["search_web", "get_weather"]

    def test_content_fallback_and_source(self) -> None:
        result = ToolCallNameProbe("get_weather")(PROMPT, respond(CONTENT_JSON))
        assert result.passed
        assert result.metadata["source"] == "content"

    def test_native_calls_win_over_content(self) -> None:
        result = ToolCallNameProbe("get_weather")(PROMPT, respond(CONTENT_JSON, call("other", {})))
        assert result.score == WRONG_TOOL_SCORE
        assert result.metadata["source"] == "native"

    @pytest.mark.parametrize("bad", ["", None, 3])
    def test_expected_name_is_required(self, bad: Any) -> None:
        with pytest.raises(ValueError, match="expected_name"):
            ToolCallNameProbe(expected_name=bad)

    def test_aliases_must_be_a_list_of_strings(self) -> None:
        with pytest.raises(ValueError, match="allow_aliases"):
            ToolCallNameProbe("x", allow_aliases="y")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="allow_aliases"):
            ToolCallNameProbe("x", allow_aliases=["y", 2])  # type: ignore[list-item]


# ── tool_call_args ───────────────────────────────────────────────────────────


class TestToolCallArgs:
    def test_all_required_present_and_no_forbidden(self) -> None:
        probe = ToolCallArgsProbe(required_args=["city"], forbidden_args=["api_key"])
        result = probe(PROMPT, respond("", WEATHER))
        assert (result.passed, result.score) == (True, 1.0)
        assert result.metadata["arguments"] == ["city", "unit"]

    def test_partial_score(self) -> None:
        # 4 checks: city ✓, country ✗ (missing), unit ✗ (forbidden, present), api_key ✓ → 2/4.
        probe = ToolCallArgsProbe(
            required_args=["city", "country"], forbidden_args=["unit", "api_key"]
        )
        result = probe(PROMPT, respond("", WEATHER))
        assert result.passed is False
        assert result.score == pytest.approx(0.5)
        assert result.metadata["missing_args"] == ["country"]
        assert result.metadata["forbidden_present"] == ["unit"]

    def test_one_violation_of_three(self) -> None:
        probe = ToolCallArgsProbe(required_args=["city", "unit", "days"])
        assert probe(PROMPT, respond("", WEATHER)).score == pytest.approx(2 / 3)

    def test_no_call_scores_zero(self) -> None:
        result = ToolCallArgsProbe(required_args=["city"])(PROMPT, respond("Sunny."))
        assert (result.passed, result.score) == (False, 0.0)

    def test_no_checks_passes_any_call(self) -> None:
        result = ToolCallArgsProbe()(PROMPT, respond("", call("get_time")))
        assert (result.passed, result.score) == (True, 1.0)

    def test_malformed_arguments_score_zero_and_quote_raw_text(self) -> None:
        broken = ToolCall(name="get_weather", arguments=None, arguments_raw='{"city": "Par')
        result = ToolCallArgsProbe(required_args=["city"])(PROMPT, respond("", broken))
        assert (result.passed, result.score) == (False, 0.0)
        assert '{"city": "Par' in result.details
        assert "not valid JSON" in result.details

    def test_huge_malformed_arguments_are_truncated_in_details(self) -> None:
        broken = ToolCall(name="f", arguments=None, arguments_raw="{" + "x" * 10_000)
        result = ToolCallArgsProbe(required_args=["a"])(PROMPT, respond("", broken))
        assert result.score == 0.0
        assert len(result.details) < 500

    def test_non_object_arguments_score_zero(self) -> None:
        result = ToolCallArgsProbe(required_args=["city"])(
            PROMPT, respond("", call("f", ["Paris"]))
        )
        assert result.score == 0.0
        assert "not a JSON object" in result.details

    def test_raw_arguments_are_parsed_when_provider_left_them_unparsed(self) -> None:
        unparsed = ToolCall(name="get_weather", arguments=None, arguments_raw='{"city": "Paris"}')
        assert ToolCallArgsProbe(required_args=["city"])(PROMPT, respond("", unparsed)).passed

    def test_best_of_several_calls_is_scored(self) -> None:
        calls = (call("get_time", {"tz": "UTC"}), WEATHER)
        result = ToolCallArgsProbe(required_args=["city", "unit"])(PROMPT, respond("", *calls))
        assert result.passed
        assert result.metadata["call_index"] == 1

    def test_malformed_call_does_not_hide_a_good_one(self) -> None:
        broken = ToolCall(name="get_weather", arguments=None, arguments_raw="{oops")
        result = ToolCallArgsProbe(required_args=["city"])(PROMPT, respond("", broken, WEATHER))
        assert result.passed

    def test_content_json_fallback(self) -> None:
        result = ToolCallArgsProbe(required_args=["city", "unit"])(PROMPT, respond(CONTENT_JSON))
        assert result.score == pytest.approx(0.5)
        assert result.metadata["source"] == "content"

    def test_content_tool_calls_list_form(self) -> None:
        content = json.dumps(
            {"tool_calls": [{"function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]}
        )
        assert ToolCallArgsProbe(required_args=["city"])(PROMPT, respond(content)).passed

    def test_argument_in_both_lists_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="city"):
            ToolCallArgsProbe(required_args=["city"], forbidden_args=["city"])

    def test_arguments_must_be_lists_of_strings(self) -> None:
        with pytest.raises(ValueError, match="required_args"):
            ToolCallArgsProbe(required_args="city")  # type: ignore[arg-type]


# ── tool_call_schema ─────────────────────────────────────────────────────────

SCHEMA: dict[str, Any] = {
    "name": "get_weather",
    "required_args": ["city"],
    "optional_args": ["unit"],
    "forbidden_args": ["api_key"],
    "arg_types": {"city": "string", "unit": ["string", "null"]},
}


class TestToolCallSchema:
    def test_conforming_call_passes(self) -> None:
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond("", WEATHER))
        assert (result.passed, result.score) == (True, 1.0)
        # name, required city, forbidden api_key, no-unexpected, type city, type unit.
        assert result.metadata["checks"] == 6

    def test_partial_score(self) -> None:
        # name ✗, city ✓, api_key ✗, unexpected (api_key) ✗, city type ✗ (number), unit absent
        # (type skipped) → 1 of 5 checks hold.
        bad = call("weather", {"city": 75000, "api_key": "k"})
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond("", bad))
        assert result.score == pytest.approx(1 / 5)
        assert result.passed is False
        failed = " ".join(result.metadata["failed_checks"])
        assert "'api_key'" in failed and "integer" in failed and "'weather'" in failed

    def test_unexpected_arguments_only_checked_with_optional_args(self) -> None:
        extra = call("get_weather", {"city": "Paris", "extra": 1})
        strict = ToolCallSchemaProbe(schema={"required_args": ["city"], "optional_args": []})
        loose = ToolCallSchemaProbe(schema={"required_args": ["city"]})
        assert strict(PROMPT, respond("", extra)).score == pytest.approx(1 / 2)
        assert loose(PROMPT, respond("", extra)).score == 1.0

    @pytest.mark.parametrize(
        ("value", "type_name", "ok"),
        [
            (True, "boolean", True),
            (True, "integer", False),
            (True, "number", False),
            (3, "integer", True),
            (3, "number", True),
            (2.0, "integer", True),
            (2.5, "integer", False),
            (2.5, "number", True),
            ("3", "number", False),
            (None, "null", True),
            (None, "string", False),
            ([], "array", True),
            ({}, "object", True),
            ({}, "array", False),
        ],
    )
    def test_types(self, value: Any, type_name: str, ok: bool) -> None:
        probe = ToolCallSchemaProbe(schema={"arg_types": {"v": type_name}})
        assert probe(PROMPT, respond("", call("f", {"v": value}))).passed is ok

    def test_type_list_accepts_any_of_them(self) -> None:
        probe = ToolCallSchemaProbe(schema={"arg_types": {"unit": ["string", "null"]}})
        assert probe(PROMPT, respond("", call("f", {"unit": None}))).passed
        assert not probe(PROMPT, respond("", call("f", {"unit": 1}))).passed

    def test_no_call_scores_zero(self) -> None:
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond("Sunny."))
        assert (result.passed, result.score) == (False, 0.0)

    def test_malformed_arguments_score_zero(self) -> None:
        broken = ToolCall(name="get_weather", arguments=None, arguments_raw="{'city': 'Paris'}")
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond("", broken))
        assert result.score == 0.0
        assert "{'city': 'Paris'}" in result.details

    def test_best_call_is_scored(self) -> None:
        calls = (call("search_web", {"q": "paris"}), WEATHER)
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond("", *calls))
        assert result.passed
        assert result.metadata["call_index"] == 1

    def test_content_fallback(self) -> None:
        result = ToolCallSchemaProbe(schema=SCHEMA)(PROMPT, respond(CONTENT_JSON))
        assert result.passed
        assert result.metadata["source"] == "content"

    def test_unknown_schema_key_names_it_and_the_allowed_keys(self) -> None:
        with pytest.raises(ValueError) as info:
            ToolCallSchemaProbe(schema={"name": "f", "requried_args": ["a"]})
        message = str(info.value)
        assert "requried_args" in message and "required_args" in message and "arg_types" in message

    def test_unknown_type_name_names_it_and_the_allowed_names(self) -> None:
        with pytest.raises(ValueError) as info:
            ToolCallSchemaProbe(schema={"arg_types": {"n": ["int", "string"]}})
        message = str(info.value)
        assert "int" in message and "integer" in message and "boolean" in message

    @pytest.mark.parametrize(
        "schema",
        [
            "get_weather",
            {"name": ""},
            {"required_args": "city"},
            {"arg_types": ["city"]},
            {"arg_types": {"city": []}},
            {"required_args": ["a"], "forbidden_args": ["a"]},
        ],
    )
    def test_invalid_schemas(self, schema: Any) -> None:
        with pytest.raises(ValueError):
            ToolCallSchemaProbe(schema=schema)

    def test_schema_is_a_public_attribute(self) -> None:
        assert ToolCallSchemaProbe(schema=SCHEMA).params() == {"schema": SCHEMA}
