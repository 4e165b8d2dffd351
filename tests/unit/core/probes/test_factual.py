"""Factual probes: fixed answers in four match modes, and lexicon sentiment."""

from __future__ import annotations

import unicodedata

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory
from promptcanary.core.probes.factual import FactualConsistencyProbe, SentimentProbe, polarity

PROMPT = CanaryPrompt(id="capital", text="What is the capital of France?")


def respond(content: str) -> LLMResponse:
    return LLMResponse(prompt_id=PROMPT.id, provider_model_id="fake/model", content=content)


# ── factual_consistency ──────────────────────────────────────────────────────


def test_factual_contains_passes_and_reports_the_match() -> None:
    probe = FactualConsistencyProbe(expected_value="Paris")

    result = probe(PROMPT, respond("The capital of France is PARIS."))

    assert result.passed
    assert result.score == 1.0
    assert result.category is ProbeCategory.FACTUAL
    assert result.metadata["matched"] is True
    assert result.metadata["matched_text"] == "paris"
    assert result.metadata["match_mode"] == "contains"


def test_factual_contains_fails_a_wrong_answer_with_a_binary_score() -> None:
    result = FactualConsistencyProbe(expected_value="Paris")(PROMPT, respond("It is Lyon."))

    assert (result.passed, result.score) == (False, 0.0)
    assert result.metadata["matched_text"] == ""
    assert "'It is Lyon.'" in result.details


@pytest.mark.parametrize(
    ("content", "passed"),
    [("Paris", True), ("  Paris.\n", True), ("paris", True), ("Paris, France", False)],
)
def test_factual_exact_ignores_whitespace_and_one_trailing_period(
    content: str, passed: bool
) -> None:
    result = FactualConsistencyProbe("Paris", match_mode="exact")(PROMPT, respond(content))

    assert result.passed is passed


def test_factual_exact_case_sensitive() -> None:
    probe = FactualConsistencyProbe("Paris", match_mode="exact", case_sensitive=True)

    assert probe(PROMPT, respond("Paris.")).passed
    assert not probe(PROMPT, respond("paris.")).passed


def test_factual_startswith_ignores_leading_whitespace_only() -> None:
    probe = FactualConsistencyProbe("Paris", match_mode="startswith")

    assert probe(PROMPT, respond("\n  Paris is the capital.")).passed
    assert not probe(PROMPT, respond("The answer is Paris.")).passed


def test_factual_regex_searches_and_reports_the_matched_text() -> None:
    probe = FactualConsistencyProbe(r"\b(19|20)\d{2}\b", match_mode="regex")

    hit = probe(PROMPT, respond("Apollo 11 landed in July 1969."))
    miss = probe(PROMPT, respond("Apollo 11 landed in July."))

    assert hit.passed
    assert hit.metadata["matched_text"] == "1969"
    assert not miss.passed


def test_factual_regex_honours_case_sensitivity() -> None:
    insensitive = FactualConsistencyProbe("^paris", match_mode="regex")
    sensitive = FactualConsistencyProbe("^paris", match_mode="regex", case_sensitive=True)

    assert insensitive(PROMPT, respond("Paris.")).passed
    assert not sensitive(PROMPT, respond("Paris.")).passed


def test_factual_unicode_composition_case_folding_and_curly_quotes() -> None:
    decomposed = unicodedata.normalize("NFD", "Café de Flore")

    composed = FactualConsistencyProbe("café")(PROMPT, respond(decomposed))
    folded = FactualConsistencyProbe("straße")(PROMPT, respond("Die STRASSE ist lang."))
    quoted = FactualConsistencyProbe("it's Paris")(PROMPT, respond("Well, it’s Paris."))

    assert composed.passed
    assert folded.passed
    assert quoted.passed


def test_factual_empty_response_fails_with_a_clear_detail() -> None:
    result = FactualConsistencyProbe("Paris")(PROMPT, respond(""))

    assert not result.passed
    assert result.details.startswith("Empty response")


def test_factual_finds_an_answer_at_the_end_of_a_megabyte() -> None:
    content = "lorem ipsum " * 90_000 + "Paris"
    probe = FactualConsistencyProbe("paris", match_mode="regex")

    result = probe(PROMPT, respond(content))

    assert len(content) > 1_000_000
    assert result.passed
    assert len(result.metadata["response_excerpt"]) <= 200


def test_factual_accepts_a_number_from_yaml_as_its_text() -> None:
    probe = FactualConsistencyProbe(expected_value=42)  # type: ignore[arg-type]

    assert probe.expected_value == "42"
    assert probe(PROMPT, respond("The answer is 42.")).passed


def test_factual_params_exclude_the_compiled_regex() -> None:
    probe = FactualConsistencyProbe("a+", match_mode="regex")

    assert probe.params() == {
        "expected_value": "a+",
        "match_mode": "regex",
        "case_sensitive": False,
    }


def test_factual_rejects_an_unknown_match_mode_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="match_mode") as info:
        FactualConsistencyProbe("Paris", match_mode="fuzzy")

    for mode in ("contains", "exact", "startswith", "regex"):
        assert mode in str(info.value)


def test_factual_rejects_an_invalid_regex_at_construction() -> None:
    with pytest.raises(ValueError, match="expected_value") as info:
        FactualConsistencyProbe("(unclosed", match_mode="regex")

    assert "regular expression" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"expected_value": ""}, "expected_value"),
        ({"expected_value": "   "}, "expected_value"),
        ({"expected_value": None}, "expected_value"),
        ({"expected_value": "Paris", "case_sensitive": "no"}, "case_sensitive"),
    ],
)
def test_factual_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        FactualConsistencyProbe(**kwargs)  # type: ignore[arg-type]


# ── sentiment ────────────────────────────────────────────────────────────────


def test_polarity_formula_with_smoothing() -> None:
    # 3 positive, 1 negative: (3 - 1) / (3 + 1 + 2) = 1/3
    value, words = polarity("Great, helpful and fast support, but a bad wait. I love it.")

    assert words["positive"] == ["great", "helpful", "love"]
    assert words["negative"] == ["bad"]
    assert value == pytest.approx(1 / 3)


def test_polarity_negation_flips_within_its_clause_only() -> None:
    flipped, words = polarity("This is not very good.")
    reset, _ = polarity("Not bad. Good.")  # "Good" follows the clause break: not negated
    contraction, _ = polarity("It isn’t helpful")  # curly apostrophe

    assert words["negated"] == ["good"]
    assert flipped == pytest.approx(-1 / 3)
    assert reset == pytest.approx(2 / 4)
    assert contraction == pytest.approx(-1 / 3)


def test_sentiment_positive_expected_and_found() -> None:
    result = SentimentProbe(expect_positive=True)(PROMPT, respond("Great product, I love it."))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["polarity"] == 0.5
    assert result.metadata["positive_words"] == ["great", "love"]


def test_sentiment_positive_expected_partial_score_for_neutral_text() -> None:
    result = SentimentProbe(expect_positive=True, threshold=0.2)(PROMPT, respond("It is Paris."))

    assert not result.passed
    assert result.score == pytest.approx(1 - 0.2)


def test_sentiment_positive_expected_fails_negative_text() -> None:
    content = "Terrible, awful, broken and useless."  # -4 / 6

    result = SentimentProbe(expect_positive=True, threshold=0.2)(PROMPT, respond(content))

    assert not result.passed
    assert result.score == pytest.approx(max(0.0, 1 - (0.2 + 4 / 6)))
    assert result.metadata["negative_count"] == 4


def test_sentiment_negative_expected() -> None:
    probe = SentimentProbe(expect_positive=False, threshold=0.2)

    negative = probe(PROMPT, respond("I hate this, it is awful."))  # -2/4
    neutral = probe(PROMPT, respond("It is Paris."))

    assert (negative.passed, negative.score) == (True, 1.0)
    assert (neutral.passed, neutral.score) == (False, pytest.approx(0.8))


def test_sentiment_neutral_expected() -> None:
    probe = SentimentProbe(expect_positive=None, threshold=0.2)

    neutral = probe(PROMPT, respond("Paris is the capital of France."))
    glowing = probe(PROMPT, respond("Paris is wonderful!"))  # 1/3 → 0.133 beyond the band

    assert (neutral.passed, neutral.score) == (True, 1.0)
    assert not glowing.passed
    assert glowing.score == pytest.approx(1 - (1 / 3 - 0.2))


def test_sentiment_empty_and_unicode_text_are_neutral() -> None:
    probe = SentimentProbe(expect_positive=None)

    empty = probe(PROMPT, respond(""))
    foreign = probe(PROMPT, respond("東京は日本の首都です。"))

    assert empty.passed and empty.metadata["polarity"] == 0.0
    assert foreign.passed


def test_sentiment_reads_a_megabyte_quickly() -> None:
    content = "good " * 200_000 + "bad"

    result = SentimentProbe(expect_positive=True)(PROMPT, respond(content))

    assert result.metadata["positive_count"] == 200_000
    assert len(result.metadata["positive_words"]) == 20
    assert result.passed


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"expect_positive": "yes"}, "expect_positive"),
        ({"expect_positive": 1}, "expect_positive"),
        ({"expect_positive": True, "threshold": 1.5}, "threshold"),
        ({"expect_positive": True, "threshold": -0.1}, "threshold"),
        ({"expect_positive": None, "threshold": 0}, "threshold"),
    ],
)
def test_sentiment_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        SentimentProbe(**kwargs)  # type: ignore[arg-type]
