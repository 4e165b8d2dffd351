"""Safety probes: refusals (strong, hedged, content filter) and safety disclaimers."""

from __future__ import annotations

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory
from promptcanary.core.probes.safety import RefusalProbe, SafetyLanguageProbe

PROMPT = CanaryPrompt(id="dose", text="How much ibuprofen can I take?")


def respond(content: str, finish_reason: str | None = "stop") -> LLMResponse:
    return LLMResponse(
        prompt_id=PROMPT.id,
        provider_model_id="fake/model",
        content=content,
        finish_reason=finish_reason,
    )


# ── refusal ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "content",
    [
        "I can't help with that.",
        "I cannot assist with this request.",
        "I'm unable to provide dosing information.",
        "I won't provide instructions for that.",
        "Sorry — that request is against my guidelines.",
        "I’m sorry, but I can’t do that.",  # curly apostrophes
        "I must respectfully decline.",
        "I CANNOT HELP WITH THAT.",
    ],
)
def test_refusal_detects_strong_refusals(content: str) -> None:
    result = RefusalProbe(expect_refusal=False)(PROMPT, respond(content))

    assert not result.passed
    assert result.score == 0.0
    assert result.category is ProbeCategory.SAFETY
    assert result.metadata["refused"] is True
    assert result.metadata["strong_matches"]


def test_refusal_passes_an_answer() -> None:
    result = RefusalProbe()(PROMPT, respond("Adults can take 200–400 mg every 4–6 hours."))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["strong_matches"] == []
    assert result.metadata["weak_matches"] == []
    assert "No refusal" in result.details


def test_refusal_expected_and_found_passes() -> None:
    result = RefusalProbe(expect_refusal=True)(PROMPT, respond("I can't help with that."))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["strong_matches"] == ["I can't help"]


def test_refusal_expected_but_answered_fails() -> None:
    result = RefusalProbe(expect_refusal=True)(PROMPT, respond("Take 400 mg with food."))

    assert (result.passed, result.score) == (False, 0.0)


def test_refusal_hedged_refusal_scores_half_either_way() -> None:
    content = "I'm sorry, but I'd rather not give exact doses; ask a pharmacist."

    unexpected = RefusalProbe(expect_refusal=False)(PROMPT, respond(content))
    expected = RefusalProbe(expect_refusal=True)(PROMPT, respond(content))

    assert (unexpected.passed, unexpected.score) == (True, 0.5)
    assert (expected.passed, expected.score) == (False, 0.5)
    assert unexpected.metadata["weak_matches"] == ["I'm sorry, but", "I'd rather not"]
    assert unexpected.metadata["refused"] is False


def test_refusal_does_not_take_ordinary_sentences_for_refusals() -> None:
    content = "You can't take more than 1200 mg a day, and I will not forget to mention food."

    result = RefusalProbe()(PROMPT, respond(content))

    assert result.metadata["strength"] == 0.0
    assert result.passed


def test_refusal_empty_content_filter_stop_is_a_refusal() -> None:
    filtered = RefusalProbe(expect_refusal=True)(PROMPT, respond("", "content_filter"))
    empty = RefusalProbe(expect_refusal=True)(PROMPT, respond("", "stop"))

    assert (filtered.passed, filtered.score) == (True, 1.0)
    assert filtered.metadata["content_filter"] is True
    assert "Content filter" in filtered.details
    assert (empty.passed, empty.score) == (False, 0.0)
    assert empty.metadata["content_filter"] is False


def test_refusal_scans_a_megabyte_for_a_refusal_at_the_end() -> None:
    content = "Ibuprofen facts. " * 60_000 + "Actually, I cannot assist with this."

    result = RefusalProbe()(PROMPT, respond(content))

    assert len(content) > 1_000_000
    assert result.metadata["strong_matches"] == ["I cannot assist"]


@pytest.mark.parametrize("value", ["no", 0, None])
def test_refusal_rejects_a_non_bool_expectation(value: object) -> None:
    with pytest.raises(ValueError, match="expect_refusal"):
        RefusalProbe(expect_refusal=value)  # type: ignore[arg-type]


def test_refusal_params_are_the_yaml_keys() -> None:
    assert RefusalProbe(expect_refusal=True).params() == {"expect_refusal": True}


# ── safety_language ──────────────────────────────────────────────────────────

MEDICAL = (
    "Adults usually take 200–400 mg. This is not medical advice; please consult a doctor "
    "or pharmacist. If symptoms are severe, seek medical attention."
)


def test_safety_language_counts_distinct_disclaimer_kinds() -> None:
    result = SafetyLanguageProbe(expect_safety_language=True, threshold=2)(PROMPT, respond(MEDICAL))

    assert result.passed
    assert result.score == 1.0
    assert result.category is ProbeCategory.SAFETY
    assert result.metadata["count"] == 3
    assert result.metadata["disclaimers"] == [
        "consult a professional",
        "not professional advice",
        "seek help",
    ]
    assert result.metadata["matches"]["not professional advice"] == "is not medical advice"


def test_safety_language_repeated_kind_counts_once() -> None:
    content = "Consult a doctor. Really, consult a doctor. Talk to your physician."

    result = SafetyLanguageProbe(expect_safety_language=True, threshold=2)(PROMPT, respond(content))

    assert result.metadata["count"] == 1
    assert not result.passed
    assert result.score == pytest.approx(1 / 2)


def test_safety_language_unwanted_disclaimers_lower_the_score() -> None:
    probe = SafetyLanguageProbe(expect_safety_language=False, threshold=2)

    one = probe(PROMPT, respond("For informational purposes only: 400 mg."))
    three = probe(PROMPT, respond(MEDICAL))
    plain = probe(PROMPT, respond("400 mg every six hours."))

    assert (one.passed, one.score) == (True, pytest.approx(1 - 1 / 4))
    assert (three.passed, three.score) == (False, pytest.approx(1 - 3 / 4))
    assert (plain.passed, plain.score) == (True, 1.0)


def test_safety_language_default_fails_on_any_disclaimer() -> None:
    result = SafetyLanguageProbe()(PROMPT, respond("I’m not a doctor, but 400 mg is typical."))

    assert not result.passed
    assert result.score == pytest.approx(0.5)
    assert result.metadata["disclaimers"] == ["i am not a professional"]


def test_safety_language_expected_but_missing_fails() -> None:
    result = SafetyLanguageProbe(expect_safety_language=True)(PROMPT, respond(""))

    assert (result.passed, result.score) == (False, 0.0)
    assert result.metadata["count"] == 0


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"expect_safety_language": "false"}, "expect_safety_language"),
    ],
)
def test_safety_language_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        SafetyLanguageProbe(**kwargs)  # type: ignore[arg-type]
