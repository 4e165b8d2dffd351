"""Reasoning probes: step markers, word counts, hedging rate and preambles."""

from __future__ import annotations

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory
from promptcanary.core.probes.reasoning import (
    ConfidenceLanguageProbe,
    DirectAnswerProbe,
    StepByStepProbe,
    VerbosityProbe,
)

PROMPT = CanaryPrompt(id="recipe", text="How do I bake bread?")
MEGABYTE = 1_000_000


def respond(content: str) -> LLMResponse:
    return LLMResponse(prompt_id=PROMPT.id, provider_model_id="fake/model", content=content)


# ── step_by_step ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("content", "kind", "count"),
    [
        ("1. Mix the flour.\n2. Knead.\n3. Bake.", "numbered", 3),
        ("1) Mix.\n2) Bake.", "numbered", 2),
        ("Step 1: mix. Step 2: knead. Repeat step 1 if needed. Step 3: bake.", "step_words", 3),
        ("- flour\n- water\n\n- salt\n\nThat is all.", "bullets", 3),
        ("First, mix the flour. Then knead it. Finally, bake it.", "ordinals", 3),
    ],
)
def test_step_by_step_counts_each_kind_of_marker(content: str, kind: str, count: int) -> None:
    result = StepByStepProbe(min_step_count=2)(PROMPT, respond(content))

    assert result.passed
    assert result.score == 1.0
    assert result.category is ProbeCategory.REASONING
    assert result.metadata["step_count"] == count
    assert result.metadata["counted_as"] == kind
    assert result.metadata["markers"][kind] == count


def test_step_by_step_counts_one_step_marked_two_ways_once() -> None:
    content = "1. First, mix.\n2. Then knead.\n3. Finally, bake."

    result = StepByStepProbe(min_step_count=4)(PROMPT, respond(content))

    assert result.metadata["step_count"] == 3
    assert not result.passed


def test_step_by_step_ignores_nested_items_and_lone_bullets() -> None:
    content = "1. Prepare:\n    1. flour\n    2. water\n2. Bake.\n\n- just one note"

    result = StepByStepProbe()(PROMPT, respond(content))

    assert result.metadata["markers"]["numbered"] == 2
    assert result.metadata["markers"]["bullets"] == 0


def test_step_by_step_partial_score_is_the_share_of_required_steps() -> None:
    result = StepByStepProbe(min_step_count=4)(PROMPT, respond("1. Mix.\n2. Knead.\n3. Bake."))

    assert not result.passed
    assert result.score == pytest.approx(3 / 4)
    assert "3 step(s)" in result.details


def test_step_by_step_fails_a_prose_answer() -> None:
    result = StepByStepProbe()(PROMPT, respond("Mix flour and water, knead it and bake it."))

    assert not result.passed
    assert result.score == 0.0
    assert result.metadata["marker_examples"] == []


def test_step_by_step_expecting_no_steps_passes_prose_and_falls_as_steps_appear() -> None:
    probe = StepByStepProbe(expect_steps=False, min_step_count=2)

    prose = probe(PROMPT, respond("Bake it at 220 °C for 30 minutes."))
    one = probe(PROMPT, respond("1. Bake it at 220 °C."))
    listed = probe(PROMPT, respond("1. Mix.\n2. Knead.\n3. Bake."))

    assert (prose.passed, prose.score) == (True, 1.0)
    assert (one.passed, one.score) == (True, pytest.approx(1 - 1 / 4))
    assert (listed.passed, listed.score) == (False, pytest.approx(1 - 3 / 4))


def test_step_by_step_reads_unicode_bullets_and_empty_text() -> None:
    probe = StepByStepProbe()

    bullets = probe(PROMPT, respond("• Mehl abwiegen\n• Teig kneten — 10 Minuten\n• Backen"))
    empty = probe(PROMPT, respond(""))

    assert bullets.metadata["step_count"] == 3
    assert bullets.metadata["marker_examples"][0] == "• Mehl abwiegen"
    assert (empty.passed, empty.score, empty.metadata["step_count"]) == (False, 0.0, 0)


def test_step_by_step_handles_a_megabyte_quickly() -> None:
    content = "1. Mix.\n2. Bake.\n" + "word " * (MEGABYTE // 5)

    result = StepByStepProbe()(PROMPT, respond(content))

    assert result.metadata["step_count"] == 2


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"min_step_count": 0}, "min_step_count"),
        ({"min_step_count": 2.5}, "min_step_count"),
        ({"expect_steps": "yes"}, "expect_steps"),
        ({"expect_steps": 1}, "expect_steps"),
    ],
)
def test_step_by_step_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        StepByStepProbe(**kwargs)  # type: ignore[arg-type]


def test_step_by_step_params_are_the_yaml_keys() -> None:
    probe = StepByStepProbe(expect_steps=False, min_step_count=3)

    assert probe.params() == {"expect_steps": False, "min_step_count": 3}


# ── verbosity ────────────────────────────────────────────────────────────────


def words(n: int) -> str:
    return " ".join(["word"] * n)


def test_verbosity_passes_inside_the_tolerance_band() -> None:
    result = VerbosityProbe(expected_words=100, tolerance=0.5)(PROMPT, respond(words(140)))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["word_count"] == 140
    assert result.metadata["violations"] == []


def test_verbosity_falls_linearly_outside_the_band() -> None:
    probe = VerbosityProbe(expected_words=100, tolerance=0.5)  # band 50–150, falloff 50 words

    long = probe(PROMPT, respond(words(175)))
    short = probe(PROMPT, respond(words(40)))
    empty = probe(PROMPT, respond(""))

    assert not long.passed
    assert long.score == pytest.approx(1 - 25 / 50)
    assert short.score == pytest.approx(1 - 10 / 50)
    assert empty.score == 0.0
    assert long.metadata["violations"] == ["target"]


def test_verbosity_hard_bounds_fall_off_relative_to_the_bound() -> None:
    probe = VerbosityProbe(min_words=20, max_words=40)

    over = probe(PROMPT, respond(words(50)))
    under = probe(PROMPT, respond(words(5)))

    assert (over.passed, over.score) == (False, pytest.approx(1 - 10 / 40))
    assert (under.passed, under.score) == (False, pytest.approx(1 - 15 / 20))
    assert over.metadata["violations"] == ["max_words"]
    assert under.metadata["violations"] == ["min_words"]
    assert "max 40" in over.details


def test_verbosity_takes_the_worst_of_target_and_bounds() -> None:
    probe = VerbosityProbe(expected_words=100, tolerance=0.5, max_words=120)

    result = probe(PROMPT, respond(words(140)))  # on target, 20 over the 120 bound

    assert not result.passed
    assert result.score == pytest.approx(1 - 20 / 120)
    assert result.metadata["scores"] == {"target": 1.0, "max_words": round(1 - 20 / 120, 4)}


def test_verbosity_counts_unicode_words_and_contractions() -> None:
    probe = VerbosityProbe(min_words=6, max_words=6)

    result = probe(PROMPT, respond("Größe: naïve café — it’s 東京, ok"))

    assert result.metadata["word_count"] == 6
    assert result.passed


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({}, "expected_words"),
        ({"expected_words": 0}, "expected_words"),
        ({"expected_words": 100, "tolerance": -1}, "tolerance"),
        ({"min_words": -5}, "min_words"),
        ({"min_words": 50, "max_words": 10}, "min_words"),
        ({"max_words": "many"}, "max_words"),
    ],
)
def test_verbosity_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        VerbosityProbe(**kwargs)  # type: ignore[arg-type]


# ── confidence_language ──────────────────────────────────────────────────────


def test_confidence_language_passes_a_confident_answer() -> None:
    result = ConfidenceLanguageProbe()(PROMPT, respond("Bake the loaf at 220 °C for 30 minutes."))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["hedge_count"] == 0


def test_confidence_language_partial_score_above_the_threshold() -> None:
    # 3 hedges in 100 words: rate 0.03, 0.01 over 0.02 with a falloff of 0.02 → 0.5.
    content = "I think it might work, perhaps. " + words(94)  # 6 + 94 words

    result = ConfidenceLanguageProbe(threshold=0.02)(PROMPT, respond(content))

    assert result.metadata["word_count"] == 100
    assert result.metadata["rate"] == pytest.approx(0.03)
    assert not result.passed
    assert result.score == pytest.approx(0.5)
    assert result.metadata["hedges"] == ["i think", "might", "perhaps"]


def test_confidence_language_fails_a_vague_answer() -> None:
    content = "It may be possible, I'm not sure; it seems likely but could be wrong."

    result = ConfidenceLanguageProbe()(PROMPT, respond(content))

    assert not result.passed
    assert result.score == 0.0
    assert "i'm not sure" in result.metadata["hedges"]


def test_confidence_language_matches_curly_apostrophes_and_whole_words_only() -> None:
    probe = ConfidenceLanguageProbe(expect_hedging=True, threshold=0.01)

    curly = probe(PROMPT, respond("I’m not sure this is right."))
    words_only = probe(PROMPT, respond("The mayor mightily approved the unlikelihood."))

    assert curly.metadata["hedges"] == ["i'm not sure"]
    assert words_only.metadata["hedge_count"] == 0
    assert not words_only.passed


def test_confidence_language_expecting_hedging_scores_the_share_of_the_threshold() -> None:
    content = "Rain is likely tomorrow. " + words(96)  # 1 hedge in 100 words

    result = ConfidenceLanguageProbe(expect_hedging=True, threshold=0.02)(PROMPT, respond(content))

    assert not result.passed
    assert result.score == pytest.approx(0.01 / 0.02)


def test_confidence_language_empty_response_has_no_hedging() -> None:
    result = ConfidenceLanguageProbe()(PROMPT, respond(""))

    assert result.passed
    assert result.metadata["rate"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"threshold": -0.1}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"expect_hedging": None}, "expect_hedging"),
    ],
)
def test_confidence_language_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        ConfidenceLanguageProbe(**kwargs)  # type: ignore[arg-type]


# ── direct_answer ────────────────────────────────────────────────────────────


def test_direct_answer_passes_an_answer_that_starts_with_substance() -> None:
    result = DirectAnswerProbe()(PROMPT, respond("Bake it at 220 °C for 30 minutes."))

    assert result.passed
    assert result.score == 1.0
    assert result.metadata["preamble_chars"] == 0
    assert result.metadata["fillers"] == []


def test_direct_answer_fails_a_long_chain_of_fillers() -> None:
    content = (
        "**Sure!** Great question! I'd be happy to help with that. "
        "Here's what you need: bake it at 220 °C."
    )

    result = DirectAnswerProbe()(PROMPT, respond(content))

    assert not result.passed
    assert result.metadata["fillers"] == [
        "Sure!",
        "Great question!",
        "I'd be happy to help with that.",
        "Here's what you need:",
    ]
    assert result.metadata["opening"] == "bake it at 220 °C."
    preamble = len(
        "**Sure!** Great question! I'd be happy to help with that. Here's what you need:"
    )
    assert result.metadata["preamble_chars"] == preamble
    assert result.score == pytest.approx(max(0.0, 1 - (preamble - 40) / 40))


def test_direct_answer_partial_score_for_a_short_preamble_over_a_zero_budget() -> None:
    result = DirectAnswerProbe(max_preamble_chars=0)(PROMPT, respond("Certainly! 220 °C."))

    assert not result.passed
    assert result.metadata["preamble"] == "Certainly!"
    assert result.score == pytest.approx(1 - len("Certainly!") / 40)


def test_direct_answer_tolerates_a_short_filler_within_the_budget() -> None:
    result = DirectAnswerProbe(max_preamble_chars=40)(PROMPT, respond("Of course. 220 °C."))

    assert result.passed
    assert result.metadata["preamble_chars"] == len("Of course.")


@pytest.mark.parametrize(
    "content",
    [
        "As an AI language model, I must say the oven should be at 220 °C for a loaf like that.",
        "Thanks for asking! The oven should be at 220 °C for a loaf like that.",
        "I’d be happy to help. The oven should be at 220 °C.",
    ],
)
def test_direct_answer_recognises_self_descriptions_thanks_and_curly_quotes(content: str) -> None:
    result = DirectAnswerProbe(max_preamble_chars=0)(PROMPT, respond(content))

    assert not result.passed
    assert result.metadata["fillers"]


@pytest.mark.parametrize(
    "content",
    ["Well-known bakers use 220 °C.", "Sure-footed bakers use 220 °C.", "Herein lies the answer."],
)
def test_direct_answer_does_not_take_words_that_merely_start_like_fillers(content: str) -> None:
    result = DirectAnswerProbe(max_preamble_chars=0)(PROMPT, respond(content))

    assert result.passed
    assert result.metadata["fillers"] == []


def test_direct_answer_all_filler_is_not_direct() -> None:
    result = DirectAnswerProbe()(PROMPT, respond("Sure! I'd be happy to help."))

    assert not result.passed
    assert result.score == 0.0
    assert "all preamble" in result.details


def test_direct_answer_expecting_a_preamble_inverts_the_score() -> None:
    probe = DirectAnswerProbe(expect_direct=False, max_preamble_chars=0)

    greeted = probe(PROMPT, respond("Certainly! 220 °C."))
    blunt = probe(PROMPT, respond("220 °C."))

    assert greeted.passed
    assert greeted.score == pytest.approx(len("Certainly!") / 40)
    assert (blunt.passed, blunt.score) == (False, 0.0)


@pytest.mark.parametrize("expect_direct", [True, False])
def test_direct_answer_empty_response_fails_either_way(expect_direct: bool) -> None:
    result = DirectAnswerProbe(expect_direct=expect_direct)(PROMPT, respond("  \n"))

    assert (result.passed, result.score) == (False, 0.0)
    assert result.details == "Empty response."


def test_direct_answer_only_reads_the_opening_of_a_megabyte() -> None:
    content = "Sure! " + "Bake it. " * (MEGABYTE // 9)

    result = DirectAnswerProbe()(PROMPT, respond(content))

    assert result.passed
    assert result.metadata["fillers"] == ["Sure!"]
    assert len(result.metadata["opening"]) <= 80


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"max_preamble_chars": -1}, "max_preamble_chars"),
        ({"max_preamble_chars": 4.5}, "max_preamble_chars"),
        ({"expect_direct": "true"}, "expect_direct"),
    ],
)
def test_direct_answer_rejects_bad_parameters(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        DirectAnswerProbe(**kwargs)  # type: ignore[arg-type]
