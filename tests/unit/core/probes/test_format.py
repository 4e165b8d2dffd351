"""Format & structure probes: JSON validity, keys, key order, length, headers, keywords."""

from __future__ import annotations

import json

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory
from promptcanary.core.probes.base import get_probe
from promptcanary.core.probes.format import (
    ExpectedKeywordsProbe,
    JsonKeyOrderProbe,
    JsonSchemaProbe,
    JsonValidityProbe,
    KeywordPresenceProbe,
    MarkdownHeaderProbe,
    ResponseLengthProbe,
)

PROMPT = CanaryPrompt(id="p1", text="test")
BIG_JSON = json.dumps({"items": [{"id": i, "name": f"item {i}"} for i in range(40_000)]})


def respond(content: str) -> LLMResponse:
    return LLMResponse(prompt_id="p1", provider_model_id="m", content=content)


# --- registration and parameters ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("probe_id", "cls"),
    [
        ("json_validity", JsonValidityProbe),
        ("json_schema", JsonSchemaProbe),
        ("json_key_order", JsonKeyOrderProbe),
        ("response_length", ResponseLengthProbe),
        ("markdown_headers", MarkdownHeaderProbe),
        ("keyword_presence", KeywordPresenceProbe),
        ("expected_keywords", ExpectedKeywordsProbe),
    ],
)
def test_probes_register_under_spec_ids_as_format(probe_id: str, cls: type) -> None:
    assert get_probe(probe_id) is cls
    assert cls.category is ProbeCategory.FORMAT


def test_params_are_exactly_the_constructor_keywords() -> None:
    assert JsonSchemaProbe(required_keys=["a"]).params() == {
        "required_keys": ["a"],
        "forbidden_keys": [],
        "score_per_key": True,
    }
    assert ResponseLengthProbe(max_chars=10).params() == {
        "min_chars": None,
        "max_chars": 10,
        "baseline_chars": None,
        "tolerance": 0.5,
    }
    assert MarkdownHeaderProbe(expected_headers=["A"]).params() == {
        "expected_headers": ["A"],
        "case_sensitive": False,
    }
    assert JsonKeyOrderProbe(expected_order=["a", "b"]).params() == {"expected_order": ["a", "b"]}
    assert JsonValidityProbe().params() == {}
    assert ExpectedKeywordsProbe().params() == {}


def test_spec_examples_construct_from_the_package() -> None:
    from promptcanary.core.probes import (
        JsonKeyOrderProbe,
        JsonSchemaProbe,
        JsonValidityProbe,
        KeywordPresenceProbe,
        MarkdownHeaderProbe,
        ResponseLengthProbe,
    )

    JsonValidityProbe()
    schema = JsonSchemaProbe(
        required_keys=["name", "age"],
        forbidden_keys=["password", "ssn"],
        score_per_key=True,
    )
    order = JsonKeyOrderProbe(expected_order=["name", "age", "email"])
    length = ResponseLengthProbe(min_chars=10, max_chars=2000, baseline_chars=500, tolerance=0.5)
    headers = MarkdownHeaderProbe(
        expected_headers=["Summary", "Details", "Next Steps"],
        case_sensitive=False,
    )
    keywords = KeywordPresenceProbe(
        required_keywords=["Paris"],
        forbidden_keywords=["I cannot help", "As an AI language model"],
        case_sensitive=False,
    )
    assert schema(PROMPT, respond('{"name": "A", "age": 3}')).passed
    assert order(PROMPT, respond('{"name": "A", "age": 3, "email": "a@b"}')).passed
    assert length(PROMPT, respond("x" * 500)).passed
    assert headers(PROMPT, respond("# Summary\n## Details\n## Next Steps\n")).passed
    assert keywords(PROMPT, respond("The capital is Paris.")).passed


# --- json_validity ----------------------------------------------------------------------------


def test_json_validity_accepts_plain_and_fenced_json() -> None:
    probe = JsonValidityProbe()
    plain = probe(PROMPT, respond('{"a": [1, 2]}'))
    fenced = probe(PROMPT, respond('```json\n{"a": [1, 2]}\n```'))
    assert (plain.passed, plain.score) == (True, 1.0)
    assert (fenced.passed, fenced.score) == (True, 1.0)
    assert plain.metadata["json_type"] == "object"


def test_json_validity_reports_line_and_column_of_the_error() -> None:
    result = JsonValidityProbe()(PROMPT, respond('{\n  "a": 1,\n  "b": \n}'))
    assert (result.passed, result.score) == (False, 0.0)
    assert "line 4 column 1" in result.details
    assert result.metadata["valid"] is False
    assert result.metadata["embedded_json"] is False


def test_json_validity_rejects_json_embedded_in_prose_but_says_so() -> None:
    result = JsonValidityProbe()(PROMPT, respond('Sure! Here it is:\n```json\n{"a": 1}\n```'))
    assert result.score == 0.0
    assert result.metadata["embedded_json"] is True
    assert "embedded" in result.details


@pytest.mark.parametrize("content", ["", "   ", "null and more", "{'a': 1}"])
def test_json_validity_edge_cases_fail(content: str) -> None:
    assert JsonValidityProbe()(PROMPT, respond(content)).score == 0.0


def test_json_validity_handles_a_megabyte_and_unicode() -> None:
    assert len(BIG_JSON) > 1_000_000
    assert JsonValidityProbe()(PROMPT, respond(BIG_JSON)).passed
    assert JsonValidityProbe()(PROMPT, respond('{"ville": "Zürich 東京 🚀"}')).passed


# --- json_schema ------------------------------------------------------------------------------


def test_json_schema_all_required_and_no_forbidden_passes() -> None:
    probe = JsonSchemaProbe(required_keys=["name", "age"], forbidden_keys=["ssn"])
    result = probe(PROMPT, respond('{"name": "Ann", "age": 30, "city": "Oslo"}'))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata == {
        "missing_keys": [],
        "forbidden_found": [],
        "present_keys": ["age", "city", "name"],
    }


def test_json_schema_partial_credit_per_key() -> None:
    probe = JsonSchemaProbe(required_keys=["name", "age", "email"])
    result = probe(PROMPT, respond('{"name": "Ann", "email": "a@b.c"}'))
    assert result.passed is False
    assert result.score == pytest.approx(2 / 3)
    assert result.metadata["missing_keys"] == ["age"]
    assert "'age'" in result.details


def test_json_schema_forbidden_key_halves_the_score() -> None:
    probe = JsonSchemaProbe(required_keys=["name", "age", "email"], forbidden_keys=["ssn", "pw"])
    result = probe(PROMPT, respond('{"name": "Ann", "email": "e", "pw": "x"}'))
    assert result.passed is False
    assert result.score == pytest.approx(2 / 3 / 2)
    assert result.metadata["forbidden_found"] == ["pw"]


def test_json_schema_forbidden_key_alone_fails_at_half() -> None:
    result = JsonSchemaProbe(forbidden_keys=["password"])(PROMPT, respond('{"password": "x"}'))
    assert (result.passed, result.score) == (False, 0.5)


def test_json_schema_all_or_nothing_without_score_per_key() -> None:
    probe = JsonSchemaProbe(required_keys=["a", "b", "c"], score_per_key=False)
    assert probe(PROMPT, respond('{"a": 1, "b": 2}')).score == 0.0
    assert probe(PROMPT, respond('{"a": 1, "b": 2, "c": 3}')).score == 1.0


@pytest.mark.parametrize(
    ("content", "why"),
    [("[1, 2]", "array, not an object"), ("no json here", "not valid JSON"), ("", "not valid")],
)
def test_json_schema_non_object_scores_zero_with_reason(content: str, why: str) -> None:
    result = JsonSchemaProbe(required_keys=["a"])(PROMPT, respond(content))
    assert (result.passed, result.score) == (False, 0.0)
    assert why in result.details
    assert result.metadata["missing_keys"] == ["a"]


def test_json_schema_reads_fenced_unicode_keys() -> None:
    probe = JsonSchemaProbe(required_keys=["名前", "âge"])
    result = probe(PROMPT, respond('```json\n{"名前": "x", "âge": 3}\n```'))
    assert result.passed


def test_json_schema_keys_are_top_level_only() -> None:
    result = JsonSchemaProbe(required_keys=["age"])(PROMPT, respond('{"user": {"age": 3}}'))
    assert result.score == 0.0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"required_keys": "name"}, "required_keys"),
        ({"required_keys": ["a", 3]}, "required_keys"),
        ({"forbidden_keys": [""]}, "forbidden_keys"),
        ({"required_keys": ["a"], "forbidden_keys": ["a"]}, "both"),
        ({"score_per_key": "yes"}, "score_per_key"),
    ],
)
def test_json_schema_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        JsonSchemaProbe(**kwargs)


# --- json_key_order ---------------------------------------------------------------------------


def test_json_key_order_in_order_passes_and_ignores_extra_keys() -> None:
    probe = JsonKeyOrderProbe(expected_order=["name", "age", "email"])
    result = probe(PROMPT, respond('{"id": 1, "name": "A", "x": 0, "age": 2, "email": "e"}'))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata["actual_order"] == ["name", "age", "email"]
    assert result.metadata["lcs_length"] == 3


def test_json_key_order_swap_scores_lcs_fraction() -> None:
    probe = JsonKeyOrderProbe(expected_order=["name", "age", "email"])
    result = probe(PROMPT, respond('{"age": 2, "name": "A", "email": "e"}'))
    # LCS of (name, age, email) and (age, name, email) is 2 → 2/3, below the 0.9 bar.
    assert result.score == pytest.approx(2 / 3)
    assert result.passed is False
    assert result.metadata["actual_order"] == ["age", "name", "email"]
    assert result.metadata["lcs_length"] == 2


def test_json_key_order_one_swap_in_ten_keys_passes() -> None:
    keys = [f"k{i}" for i in range(10)]
    actual = [*keys[:4], keys[5], keys[4], *keys[6:]]
    probe = JsonKeyOrderProbe(expected_order=keys)
    result = probe(PROMPT, respond(json.dumps(dict.fromkeys(actual, 0))))
    assert result.score == pytest.approx(9 / 10)
    assert result.passed is True


def test_json_key_order_normalises_by_keys_present() -> None:
    probe = JsonKeyOrderProbe(expected_order=["a", "b", "c", "d"])
    result = probe(PROMPT, respond('{"c": 1, "a": 2}'))
    # present: c, a → LCS with (a, b, c, d) is 1 → 1/2; b and d are reported, not scored.
    assert result.score == pytest.approx(1 / 2)
    assert result.metadata["missing_keys"] == ["b", "d"]


@pytest.mark.parametrize("content", ['{"x": 1}', "[1]", "not json", ""])
def test_json_key_order_without_expected_keys_scores_zero(content: str) -> None:
    result = JsonKeyOrderProbe(expected_order=["a", "b"])(PROMPT, respond(content))
    assert (result.passed, result.score) == (False, 0.0)
    assert result.metadata["lcs_length"] == 0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"expected_order": []}, "expected_order"),
        ({"expected_order": ["a", "a"]}, "more than once"),
        ({"expected_order": "abc"}, "expected_order"),
    ],
)
def test_json_key_order_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        JsonKeyOrderProbe(**kwargs)


# --- response_length --------------------------------------------------------------------------


def test_response_length_within_hard_bounds_passes() -> None:
    result = ResponseLengthProbe(min_chars=5, max_chars=10)(PROMPT, respond("x" * 10))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata["length"] == 10


def test_response_length_below_min_scores_length_over_min() -> None:
    result = ResponseLengthProbe(min_chars=40)(PROMPT, respond("x" * 30))
    assert result.passed is False
    assert result.score == pytest.approx(30 / 40)
    assert "below min_chars=40" in result.details


def test_response_length_above_max_reaches_zero_at_twice_max() -> None:
    probe = ResponseLengthProbe(max_chars=100)
    over = probe(PROMPT, respond("x" * 125))
    assert over.passed is False
    assert over.score == pytest.approx(1 - 25 / 100)
    assert probe(PROMPT, respond("x" * 200)).score == 0.0


def test_response_length_baseline_band_and_linear_drift() -> None:
    probe = ResponseLengthProbe(baseline_chars=500, tolerance=0.5)  # band [250, 750]
    assert probe(PROMPT, respond("x" * 740)).passed
    long = probe(PROMPT, respond("x" * 1000))
    short = probe(PROMPT, respond("x" * 100))
    assert long.passed is False
    assert long.score == pytest.approx(1 - 250 / 750)
    assert short.score == pytest.approx(100 / 250)
    assert long.metadata["baseline_ratio"] == 2.0
    assert long.metadata["drift_band"] == [250.0, 750.0]


def test_response_length_takes_the_worse_of_bounds_and_drift() -> None:
    probe = ResponseLengthProbe(max_chars=600, baseline_chars=500, tolerance=0.5)
    result = probe(PROMPT, respond("x" * 700))
    # drift: inside [250, 750] → 1.0; bounds: 1 - 100/600.
    assert result.score == pytest.approx(1 - 100 / 600)
    assert result.passed is False


def test_response_length_counts_unicode_code_points_and_handles_empty() -> None:
    assert ResponseLengthProbe(max_chars=3)(PROMPT, respond("東京🚀")).passed
    empty = ResponseLengthProbe(min_chars=10)(PROMPT, respond(""))
    assert (empty.passed, empty.score) == (False, 0.0)


def test_response_length_without_parameters_reports_length() -> None:
    result = ResponseLengthProbe()(PROMPT, respond("x" * 1_200_000))
    assert result.passed is True
    assert result.metadata["length"] == 1_200_000


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"tolerance": -1}, "tolerance"),
        ({"min_chars": 10, "max_chars": 5}, "min_chars"),
        ({"min_chars": -1}, "min_chars"),
        ({"baseline_chars": 0}, "baseline_chars"),
        ({"max_chars": "100"}, "max_chars"),
    ],
)
def test_response_length_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ResponseLengthProbe(**kwargs)


# --- markdown_headers -------------------------------------------------------------------------

REPORT = """# Summary
Text.

## **2. Details:**

```markdown
## Next Steps
```

### Appendix ###
"""


def test_markdown_headers_all_found_passes() -> None:
    probe = MarkdownHeaderProbe(expected_headers=["summary", "Details", "Appendix"])
    result = probe(PROMPT, respond(REPORT))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata["headers"] == ["Summary", "**2. Details:**", "Appendix"]


def test_markdown_headers_ignore_headers_inside_code_fences() -> None:
    probe = MarkdownHeaderProbe(expected_headers=["Summary", "Details", "Next Steps"])
    result = probe(PROMPT, respond(REPORT))
    assert result.passed is False
    assert result.score == pytest.approx(2 / 3)
    assert result.metadata["found"] == ["Summary", "Details"]
    assert result.metadata["missing"] == ["Next Steps"]


def test_markdown_headers_case_sensitive() -> None:
    probe = MarkdownHeaderProbe(expected_headers=["summary"], case_sensitive=True)
    assert probe(PROMPT, respond(REPORT)).score == 0.0


@pytest.mark.parametrize(
    "content",
    [
        "Summary\n=======\n",
        "#Summary\n",
        "    # Summary\n",
        "text # Summary\n",
        "",
        "####### Summary",
    ],
)
def test_markdown_headers_only_count_atx_headers(content: str) -> None:
    assert MarkdownHeaderProbe(expected_headers=["Summary"])(PROMPT, respond(content)).score == 0.0


def test_markdown_headers_unicode_and_large_input() -> None:
    body = "para\n" * 200_000 + "## Résumé 東京\n"
    result = MarkdownHeaderProbe(expected_headers=["résumé 東京"])(PROMPT, respond(body))
    assert result.passed


def test_markdown_headers_year_is_not_a_section_number() -> None:
    probe = MarkdownHeaderProbe(expected_headers=["Results"])
    assert probe(PROMPT, respond("## 2024 Results\n")).score == 0.0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"expected_headers": []}, "expected_headers"),
        ({"expected_headers": "Summary"}, "expected_headers"),
        ({"expected_headers": ["A"], "case_sensitive": "no"}, "case_sensitive"),
    ],
)
def test_markdown_headers_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        MarkdownHeaderProbe(**kwargs)


# --- keyword_presence -------------------------------------------------------------------------


def test_keyword_presence_no_violations_passes() -> None:
    probe = KeywordPresenceProbe(required_keywords=["Paris"], forbidden_keywords=["I cannot"])
    result = probe(PROMPT, respond("The capital of France is paris."))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata["total_checks"] == 2


def test_keyword_presence_score_is_one_minus_violation_share() -> None:
    probe = KeywordPresenceProbe(
        required_keywords=["Paris", "France", "Seine"],
        forbidden_keywords=["As an AI language model"],
    )
    result = probe(PROMPT, respond("As an AI language model, I know Paris."))
    assert result.passed is False
    assert result.score == pytest.approx(1 - 3 / 4)
    assert result.metadata["missing_required"] == ["France", "Seine"]
    assert result.metadata["forbidden_found"] == ["As an AI language model"]
    assert result.metadata["violations"] == 3


def test_keyword_presence_case_sensitive_and_unicode_casefold() -> None:
    sensitive = KeywordPresenceProbe(required_keywords=["Paris"], case_sensitive=True)
    assert sensitive(PROMPT, respond("paris")).score == 0.0
    insensitive = KeywordPresenceProbe(required_keywords=["STRASSE"])
    assert insensitive(PROMPT, respond("Hauptstraße 1")).passed


def test_keyword_presence_without_keywords_passes_as_skipped() -> None:
    result = KeywordPresenceProbe()(PROMPT, respond("anything"))
    assert (result.passed, result.score) == (True, 1.0)
    assert "skipped" in result.details
    assert result.metadata["skipped"] is True


def test_keyword_presence_empty_response() -> None:
    probe = KeywordPresenceProbe(required_keywords=["a"], forbidden_keywords=["b"])
    result = probe(PROMPT, respond(""))
    assert result.score == pytest.approx(1 / 2)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"required_keywords": "Paris"}, "required_keywords"),
        ({"forbidden_keywords": [None]}, "forbidden_keywords"),
        ({"required_keywords": ["a"], "case_sensitive": 1}, "case_sensitive"),
    ],
)
def test_keyword_presence_rejects_bad_parameters(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        KeywordPresenceProbe(**kwargs)


# --- expected_keywords ------------------------------------------------------------------------


def test_expected_keywords_all_found_passes() -> None:
    prompt = CanaryPrompt(id="p1", text="Capital?", expected_keywords=["Paris", "France"])
    result = ExpectedKeywordsProbe()(prompt, respond("PARIS is the capital of France."))
    assert (result.passed, result.score) == (True, 1.0)
    assert result.metadata["found"] == ["Paris", "France"]


def test_expected_keywords_partial_fails() -> None:
    prompt = CanaryPrompt(id="p1", text="q", expected_keywords=["alpha", "beta", "gamma"])
    result = ExpectedKeywordsProbe()(prompt, respond("alpha only"))
    assert result.passed is False
    assert result.score == pytest.approx(1 / 3)
    assert result.metadata["missing"] == ["beta", "gamma"]


def test_expected_keywords_without_keywords_passes_with_a_note() -> None:
    result = ExpectedKeywordsProbe()(PROMPT, respond(""))
    assert (result.passed, result.score) == (True, 1.0)
    assert "no expected_keywords" in result.details
    assert result.metadata["skipped"] is True


def test_expected_keywords_on_empty_response_fails() -> None:
    prompt = CanaryPrompt(id="p1", text="q", expected_keywords=["Paris"])
    assert ExpectedKeywordsProbe()(prompt, respond("")).score == 0.0
