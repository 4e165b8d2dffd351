"""The json_path probe: JSONPath assertions on JSON content and on tool-call arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ToolCall
from promptcanary.core.probes.base import get_probe
from promptcanary.core.probes.json_path import JsonPathProbe

PROMPT = CanaryPrompt(id="p1", text="test")
ORDER = {
    "city": "Paris",
    "temperature": 21.5,
    "count": 3,
    "ok": True,
    "note": None,
    "items": [
        {"sku": "ABC-1", "price": 5},
        {"sku": "XYZ-22", "price": 12},
    ],
}


def respond(content: str = "", tool_calls: list[ToolCall] | None = None) -> LLMResponse:
    return LLMResponse(
        prompt_id="p1", provider_model_id="m", content=content, tool_calls=tool_calls or []
    )


def check(assertions: list[dict[str, Any]], document: Any = ORDER) -> Any:
    return JsonPathProbe(assertions=assertions)(PROMPT, respond(json.dumps(document)))


def test_registered_as_format_probe_with_yaml_params() -> None:
    assert get_probe("json_path") is JsonPathProbe
    assert JsonPathProbe.category is ProbeCategory.FORMAT
    assertions = [{"path": "$.a", "exists": True}]
    assert JsonPathProbe(assertions=assertions).params() == {
        "assertions": [{"path": "$.a", "exists": True}],
        "target": "content",
    }


def test_importable_from_the_package_and_format_module() -> None:
    from promptcanary.core.probes import JsonPathProbe as FromPackage
    from promptcanary.core.probes.format import JsonPathProbe as FromFormat

    assert FromPackage is JsonPathProbe
    assert FromFormat is JsonPathProbe


def test_all_assertions_hold() -> None:
    result = check(
        [
            {"path": "$.city", "equals": "Paris"},
            {"path": "$.temperature", "type": "number", "min": -50, "max": 60},
            {"path": "$.items[*].sku", "matches": "^[A-Z]{3}-[0-9]+$"},
            {"path": "$.missing", "exists": False},
            {"path": "$.items[?(@.price > 10)].sku", "equals": "XYZ-22"},
        ]
    )
    assert (result.passed, result.score) == (True, 1.0)
    assert [a["ok"] for a in result.metadata["assertions"]] == [True] * 5


def test_score_is_fraction_of_assertions_holding() -> None:
    result = check(
        [
            {"path": "$.city", "equals": "London"},
            {"path": "$.count", "type": "integer"},
            {"path": "$.nope", "exists": True},
        ]
    )
    assert result.passed is False
    assert result.score == pytest.approx(1 / 3)
    first, second, third = result.metadata["assertions"]
    assert first == {
        "path": "$.city",
        "ok": False,
        "reason": '"Paris" does not equal "London"',
        "found": ['"Paris"'],
        "found_count": 1,
    }
    assert second["ok"] is True
    assert third["reason"] == "path matched nothing"
    assert "$.city" in result.details and "$.nope" in result.details


def test_every_value_of_a_multi_match_must_satisfy() -> None:
    result = check([{"path": "$.items[*].price", "min": 10}])
    assert result.score == 0.0
    outcome = result.metadata["assertions"][0]
    assert outcome["reason"] == "value 1 of 2: 5 is below min 10"
    assert outcome["found"] == ["5", "12"]


def test_exists_false_fails_when_something_matches() -> None:
    result = check([{"path": "$.items[*]", "exists": False}])
    assert result.score == 0.0
    assert "found 2 value(s)" in result.metadata["assertions"][0]["reason"]


@pytest.mark.parametrize(
    ("value", "type_name", "ok"),
    [
        (True, "integer", False),
        (True, "number", False),
        (True, "boolean", True),
        (3, "integer", True),
        (3.0, "integer", True),
        (3.5, "integer", False),
        (3.5, "number", True),
        ("3", "number", False),
        (None, "null", True),
        ([], "array", True),
        ({}, "object", True),
        ("s", "string", True),
    ],
)
def test_type_uses_json_schema_names(value: Any, type_name: str, ok: bool) -> None:
    assert check([{"path": "$.v", "type": type_name}], {"v": value}).passed is ok


@pytest.mark.parametrize(
    ("value", "expected", "ok"),
    [
        (1, True, False),
        (True, 1, False),
        (1, 1.0, True),
        ({"a": [1, True]}, {"a": [1, True]}, True),
        ({"a": [1, 1]}, {"a": [1, True]}, False),
        (None, None, True),
        ("1", 1, False),
    ],
)
def test_equals_is_json_equality(value: Any, expected: Any, ok: bool) -> None:
    assert check([{"path": "$.v", "equals": expected}], {"v": value}).passed is ok


def test_matches_searches_json_text_of_non_strings() -> None:
    assert check([{"path": "$.ok", "matches": "^true$"}]).passed
    assert check([{"path": "$.count", "matches": "^3$"}]).passed
    assert not check([{"path": "$.city", "matches": "^par"}]).passed


def test_min_max_on_non_number_fails() -> None:
    result = check([{"path": "$.city", "max": 5}])
    assert result.metadata["assertions"][0]["reason"] == '"Paris" is not a number'
    assert not check([{"path": "$.ok", "min": 0}]).passed  # a boolean is not a number


def test_several_checks_on_one_path_all_apply() -> None:
    assert not check([{"path": "$.count", "type": "integer", "min": 4}]).passed
    assert check([{"path": "$.count", "type": "integer", "min": 3, "max": 3}]).passed


def test_fenced_and_unicode_content() -> None:
    probe = JsonPathProbe(assertions=[{"path": "$.ville", "equals": "Zürich 東京"}])
    result = probe(PROMPT, respond('```json\n{"ville": "Zürich 東京"}\n```'))
    assert result.passed


def test_non_json_content_scores_zero_with_reason() -> None:
    probe = JsonPathProbe(assertions=[{"path": "$.a", "exists": False}])
    result = probe(PROMPT, respond("Sorry, I can't do that."))
    assert (result.passed, result.score) == (False, 0.0)
    assert "not JSON" in result.details
    assert "line 1 column 1" in result.details


def test_empty_response_scores_zero() -> None:
    probe = JsonPathProbe(assertions=[{"path": "$", "exists": True}])
    assert probe(PROMPT, respond("")).score == 0.0


def test_megabyte_document() -> None:
    document = {"items": [{"id": i, "tag": "x" * 20} for i in range(30_000)]}
    content = json.dumps(document)
    assert len(content) > 1_000_000
    probe = JsonPathProbe(assertions=[{"path": "$.items[*].id", "type": "integer", "min": 0}])
    result = probe(PROMPT, respond(content))
    assert result.passed
    outcome = result.metadata["assertions"][0]
    assert outcome["found_count"] == 30_000
    assert len(outcome["found"]) == 5


def test_found_values_are_truncated() -> None:
    result = check([{"path": "$.v", "equals": "short"}], {"v": "y" * 10_000})
    assert len(result.metadata["assertions"][0]["found"][0]) == 200


def test_filter_error_on_odd_data_is_a_failed_assertion() -> None:
    # `=~` with a number: jsonpath-ng's own filter raises TypeError when it runs.
    probe = JsonPathProbe(assertions=[{"path": "$.items[?(@.sku =~ 3)]", "exists": True}])
    result = probe(PROMPT, respond(json.dumps(ORDER)))
    assert result.score == 0.0
    assert result.metadata["assertions"][0]["reason"].startswith("path evaluation failed")


# --- target: tool_arguments -------------------------------------------------------------------


def tool_probe(assertions: list[dict[str, Any]]) -> JsonPathProbe:
    return JsonPathProbe(assertions=assertions, target="tool_arguments")


def test_tool_arguments_of_first_native_call() -> None:
    calls = [
        ToolCall(name="get_weather", arguments={"city": "Paris", "days": 3}),
        ToolCall(name="other", arguments={"city": "Rome"}),
    ]
    probe = tool_probe([{"path": "$.city", "equals": "Paris"}, {"path": "$.days", "max": 2}])
    result = probe(PROMPT, respond("", calls))
    assert result.score == pytest.approx(1 / 2)
    assert result.metadata["tool_name"] == "get_weather"
    assert result.metadata["tool_call_source"] == "native"


def test_tool_arguments_from_content_fallback() -> None:
    content = json.dumps({"name": "search", "arguments": {"query": "drift"}})
    result = tool_probe([{"path": "$.query", "equals": "drift"}])(PROMPT, respond(content))
    assert result.passed
    assert result.metadata["tool_call_source"] == "content"


def test_tool_arguments_without_tool_call_scores_zero() -> None:
    result = tool_probe([{"path": "$.q", "exists": True}])(PROMPT, respond("plain answer"))
    assert (result.passed, result.score) == (False, 0.0)
    assert "no tool call" in result.details


def test_tool_arguments_that_are_not_json_score_zero() -> None:
    call = ToolCall(name="f", arguments=None, arguments_raw='{"q": ')
    result = tool_probe([{"path": "$.q", "exists": True}])(PROMPT, respond("", [call]))
    assert result.score == 0.0
    assert "'f'" in result.details and "not JSON" in result.details


# --- constructor validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"assertions": [{"path": "$.a", "exists": True}], "target": "xml"}, "target='xml'"),
        ({"assertions": []}, "assertions"),
        ({"assertions": {"path": "$.a"}}, "assertions"),
        ({"assertions": ["$.a"]}, r"assertions\[0\]"),
        ({"assertions": [{"path": "$..[", "exists": True}]}, r"assertions\[0\]\.path"),
        ({"assertions": [{"path": "$.a%", "exists": True}]}, "not a valid JSONPath"),
        ({"assertions": [{"exists": True}]}, r"assertions\[0\]\.path"),
        ({"assertions": [{"path": "$.a"}]}, "has no check"),
        ({"assertions": [{"path": "$.a", "equal": 1}]}, "unknown key"),
        ({"assertions": [{"path": "$.a", "exists": "yes"}]}, "exists"),
        ({"assertions": [{"path": "$.a", "exists": False, "equals": 1}]}, "exists: false"),
        ({"assertions": [{"path": "$.a", "type": "int"}]}, "type='int'"),
        ({"assertions": [{"path": "$.a", "matches": "("}]}, "not a valid regex"),
        ({"assertions": [{"path": "$.a", "matches": 5}]}, "matches"),
        ({"assertions": [{"path": "$.a", "min": "1"}]}, "min"),
        ({"assertions": [{"path": "$.a", "min": 5, "max": 1}]}, "greater than max"),
        ({"assertions": [{"path": "$.a", "equals": {1, 2}}]}, "JSON value"),
    ],
)
def test_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        JsonPathProbe(**kwargs)


def test_error_names_the_failing_assertion_index() -> None:
    good = {"path": "$.a", "exists": True}
    with pytest.raises(ValueError, match=r"assertions\[2\]\.type"):
        JsonPathProbe(assertions=[good, good, {"path": "$.b", "type": "float"}])
