"""User regexes: searched with a time limit; a pattern that runs out of time is an *errored*
result naming the pattern, never a hang (factual_consistency regex, json_path matches and =~)."""

from __future__ import annotations

import json

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse
from promptcanary.core.probes.factual import FactualConsistencyProbe
from promptcanary.core.probes.json_path import JsonPathProbe
from promptcanary.core.probes.user_regex import RegexTimeout, compile_user_regex

PROMPT = CanaryPrompt(id="p1", text="test")
#: Exponential backtracking for the standard `re` (2**n paths before failing at the "b").
CATASTROPHIC = "^(a|a)*$"
LONG_ANSWER = "a" * 5_000 + "b"


def respond(content: str) -> LLMResponse:
    return LLMResponse(prompt_id="p1", provider_model_id="m", content=content)


def test_search_out_of_time_raises_naming_the_pattern() -> None:
    pattern = compile_user_regex(CATASTROPHIC, timeout=0.05)
    with pytest.raises(RegexTimeout) as caught:
        pattern.search(LONG_ANSWER)
    assert caught.value.pattern == CATASTROPHIC
    assert repr(CATASTROPHIC) in str(caught.value)
    assert f"on {len(LONG_ANSWER)} characters" in str(caught.value)


def test_search_in_time_answers_like_re() -> None:
    pattern = compile_user_regex(r"(?P<n>\d+) apples", ignore_case=True)
    found = pattern.search("I have 12 APPLES")
    assert found is not None and found.group("n") == "12"
    assert pattern.search("no fruit") is None


def test_invalid_pattern_is_a_value_error_with_the_reason() -> None:
    with pytest.raises(ValueError, match="missing \\)"):
        compile_user_regex("(")


def test_factual_regex_out_of_time_is_errored_naming_the_pattern() -> None:
    probe = FactualConsistencyProbe(expected_value=CATASTROPHIC, match_mode="regex")
    result = probe(PROMPT, respond(LONG_ANSWER))
    assert result.errored
    assert not result.passed
    assert CATASTROPHIC in result.details
    assert result.metadata["regex_timeout"] == CATASTROPHIC


def test_json_path_matches_out_of_time_is_errored_naming_the_pattern() -> None:
    probe = JsonPathProbe(assertions=[{"path": "$.v", "matches": CATASTROPHIC}])
    result = probe(PROMPT, respond(json.dumps({"v": LONG_ANSWER})))
    assert result.errored
    assert result.metadata["regex_timeout"] == CATASTROPHIC


def test_json_path_filter_regex_out_of_time_is_errored_naming_the_pattern() -> None:
    path = f"$.items[?(@.sku =~ '{CATASTROPHIC}')]"
    probe = JsonPathProbe(assertions=[{"path": path, "exists": True}])
    result = probe(PROMPT, respond(json.dumps({"items": [{"sku": LONG_ANSWER}]})))
    assert result.errored
    assert result.metadata["regex_timeout"] == CATASTROPHIC


def test_json_path_filter_regex_still_filters() -> None:
    probe = JsonPathProbe(assertions=[{"path": "$.items[?(@.sku =~ '^A')].price", "equals": 5}])
    items = [{"sku": "ABC-1", "price": 5}, {"sku": "XYZ-2", "price": 12}, {"sku": 3, "price": 1}]
    assert probe(PROMPT, respond(json.dumps({"items": items}))).passed


def test_json_path_invalid_filter_regex_fails_at_load_naming_the_assertion() -> None:
    with pytest.raises(ValueError, match=r"assertions\[0\]\.path: =~ '\(' is not a valid regex"):
        JsonPathProbe(assertions=[{"path": "$.items[?(@.sku =~ '(')]", "exists": True}])
