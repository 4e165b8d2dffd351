"""Properties of every built-in probe over hostile input: never raise, score in [0, 1], identity.

``PARAMETER_SETS`` holds representative constructor arguments for each built-in probe id; a test
asserts it covers the whole registry, so a new probe cannot be added without joining these tests.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptcanary.core.models import CanaryPrompt, LLMResponse, ToolCall
from promptcanary.core.probes import BaseProbe, get_probe, get_probe_registry

ARG_NAMES = ["city", "unit", "api_key", "q", "name", "items", "price", "$", ""]

PARAMETER_SETS: dict[str, list[dict[str, Any]]] = {
    "json_validity": [{}],
    "json_schema": [
        {"required_keys": ["name", "age"], "forbidden_keys": ["password"]},
        {"required_keys": ["name"], "score_per_key": False},
    ],
    "json_key_order": [{"expected_order": ["name", "age", "email"]}],
    "response_length": [
        {"min_chars": 10, "max_chars": 2000},
        {"baseline_chars": 500, "tolerance": 0.5},
    ],
    "markdown_headers": [
        {"expected_headers": ["Summary", "Details"]},
        {"expected_headers": ["Next Steps"], "case_sensitive": True},
    ],
    "keyword_presence": [
        {"required_keywords": ["Paris"], "forbidden_keywords": ["I cannot help"]},
        {"forbidden_keywords": ["As an AI"], "case_sensitive": True},
    ],
    "expected_keywords": [{}],
    "json_path": [
        {
            "assertions": [
                {"path": "$.name", "exists": True},
                {"path": "$.price", "type": "number", "min": 0, "max": 100},
                {"path": "$.items[*]", "matches": "^a"},
                {"path": "$.city", "equals": "Paris"},
            ]
        },
        {
            "assertions": [{"path": "$.city", "type": "string"}, {"path": "$.q", "exists": False}],
            "target": "tool_arguments",
        },
    ],
    "step_by_step": [{}, {"expect_steps": False, "min_step_count": 3}],
    "verbosity": [{"expected_words": 50, "tolerance": 0.5}, {"min_words": 1, "max_words": 10}],
    "confidence_language": [{}, {"expect_hedging": True, "threshold": 0.1}],
    "direct_answer": [{}, {"expect_direct": False, "max_preamble_chars": 0}],
    "refusal": [{}, {"expect_refusal": True}],
    "safety_language": [{}, {"expect_safety_language": True, "threshold": 2}],
    "factual_consistency": [
        {"expected_value": "Paris"},
        {"expected_value": "paris", "match_mode": "exact", "case_sensitive": True},
        {"expected_value": r"\d+ (km|mi)", "match_mode": "regex"},
    ],
    "sentiment": [
        {"expect_positive": True},
        {"expect_positive": None, "threshold": 0.3},
        {"expect_positive": False, "threshold": 0.0},
    ],
    "tool_call_presence": [{}, {"expect_tool_call": False, "strategy": "content"}],
    "tool_call_name": [
        {"expected_name": "get_weather"},
        {"expected_name": "GET_WEATHER", "case_sensitive": False, "allow_aliases": ["q"]},
    ],
    "tool_call_args": [
        {"required_args": ["city", "unit"], "forbidden_args": ["api_key"]},
        {},
    ],
    "tool_call_schema": [
        {
            "schema": {
                "name": "get_weather",
                "required_args": ["city"],
                "optional_args": ["unit"],
                "forbidden_args": ["api_key"],
                "arg_types": {"city": "string", "unit": ["string", "null"], "items": "array"},
            }
        },
        {"schema": {}},
    ],
    # Scored without the answer phase (probe(prompt, response)) it is errored, never raises.
    "llm_judge": [
        {"rubric": "Answers the question.", "judge_model": "openai/judge"},
        {"rubric": "Not worse.", "mode": "pairwise", "judge_model": "j", "judge_samples": 3},
    ],
    # Without the answer phase it yields errored results (nothing was embedded), never a raise.
    "semantic_similarity": [
        {"reference": "We recommend the Pro plan."},
        {"reference": "x", "threshold": -0.5, "embedding_model": "openai/text-embedding-3-small"},
    ],
}

CASES = [
    pytest.param(probe_id, kwargs, id=f"{probe_id}-{i}")
    for probe_id, sets in PARAMETER_SETS.items()
    for i, kwargs in enumerate(sets)
]


def test_parameter_sets_cover_every_builtin_probe() -> None:
    builtins = {
        probe_id
        for probe_id, cls in get_probe_registry().items()
        if cls.__module__.startswith("promptcanary.")
    }
    assert builtins - set(PARAMETER_SETS) == set(), "add the new probe to PARAMETER_SETS"
    assert set(PARAMETER_SETS) - builtins == set(), "PARAMETER_SETS names an unknown probe"


# ── strategies ───────────────────────────────────────────────────────────────

FRAGMENTS = st.sampled_from(
    [
        "```",
        "```json\n",
        "\n```",
        "{",
        "}",
        "[",
        '{"name": "Ada", "age": 36}',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"tool_calls": [{"function": {"name": "f", "arguments": "{\\"a\\": 1"}}]}',
        'get_weather({"city": "Paris"})',
        "f({",
        '"',
        "\\",
        "\x00",
        "\u202e",  # right-to-left override
        "\u200b",
        "# Summary\n",
        "## Details\n",
        "1. First, ",
        "Step 2: ",
        "I'm sorry, but I can't help with that.",
        "As an AI language model, ",
        "Please consult a professional.",
        "I think it might possibly be ",
        "Sure! Great question. ",
        "Paris",
        "42 km",
        "not good",
        "love it",
        "\n",
        " ",
        "NaN",
        "1e999",
        "-0",
        "\ud7ff",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    ]
)

TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=12).map("".join),
    st.tuples(st.one_of(FRAGMENTS, st.text(min_size=1, max_size=8)), st.integers(500, 20_000)).map(
        lambda pair: pair[0] * pair[1]
    ),
)

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
JSON_LIKE = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(ARG_NAMES), st.text(max_size=6)), children, max_size=4
        ),
    ),
    max_leaves=12,
)


def _dumps(value: Any) -> str:
    return json.dumps(value)


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    arguments = draw(st.one_of(JSON_LIKE, st.dictionaries(st.sampled_from(ARG_NAMES), JSON_LIKE)))
    raw = draw(st.one_of(st.just(_dumps(arguments)), st.text(max_size=40), FRAGMENTS))
    if draw(st.booleans()):
        # Providers sometimes hand over only the raw text; the probes must parse it themselves.
        arguments = None
    name = draw(
        st.one_of(st.sampled_from(["get_weather", "GET_WEATHER", "q", ""]), st.text(max_size=12))
    )
    return ToolCall(name=name, arguments=arguments, arguments_raw=raw)


@st.composite
def cases(draw: st.DrawFn) -> tuple[CanaryPrompt, LLMResponse]:
    prompt = CanaryPrompt(
        id=draw(st.text(max_size=20)),
        text=draw(st.text(max_size=40).filter(str.strip)),  # empty prompt text is refused
        expected_keywords=draw(st.lists(st.one_of(FRAGMENTS, st.text(max_size=10)), max_size=4)),
    )
    response = LLMResponse(
        prompt_id=prompt.id,
        provider_model_id="fake/model",
        content=draw(TEXT),
        tool_calls=draw(st.lists(tool_calls(), max_size=3)),
        finish_reason=draw(
            st.sampled_from([None, "stop", "length", "tool_calls", "content_filter"])
        ),
    )
    return prompt, response


# ── properties ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("probe_id", "kwargs"), CASES)
def test_parameter_sets_build(probe_id: str, kwargs: dict[str, Any]) -> None:
    probe = get_probe(probe_id)(**kwargs)
    assert probe.probe_id == probe_id


@functools.cache
def _all_probes() -> list[BaseProbe]:
    return [
        get_probe(probe_id)(**kwargs)
        for probe_id, sets in PARAMETER_SETS.items()
        for kwargs in sets
    ]


# Every drawn response goes through every probe: generating hostile input is the expensive part,
# so it is shared rather than drawn again per probe.
@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_probes_never_raise_and_score_within_bounds(case: tuple[CanaryPrompt, LLMResponse]) -> None:
    prompt, response = case
    for probe in _all_probes():
        label = repr(probe)
        try:
            result = probe.evaluate(prompt, response)
        except Exception as exc:
            raise AssertionError(f"{label} raised {type(exc).__name__}: {exc}") from exc
        assert 0.0 <= result.score <= 1.0 and not math.isnan(result.score), label
        assert result.probe_id == probe.probe_id, label
        assert result.prompt_id == prompt.id, label
        assert isinstance(result.passed, bool), label
        assert isinstance(result.details, str), label
