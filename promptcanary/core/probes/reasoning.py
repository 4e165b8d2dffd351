"""Reasoning-style probes: step-by-step structure, verbosity, hedging language, preambles.

These probes look at *how* a model answers rather than what it says, so a provider update that
makes answers chattier, vaguer or list-shaped shows up as drift even when the facts are intact.
"""

from __future__ import annotations

import re
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes import helpers
from promptcanary.core.probes.base import BaseProbe

# ---------------------------------------------------------------------------------------------
# step_by_step

# Top-level items only: nested lists (indented further) would inflate the count of steps.
_NUMBERED_RE = re.compile(r"^[ \t]{0,3}\(?(\d{1,3})[.)][ \t]+\S", re.MULTILINE)
_STEP_WORD_RE = re.compile(r"\bstep[ \t]+(\d{1,3})\b", re.IGNORECASE)
_BULLET_LINE_RE = re.compile(r"^[ \t]?[-*•+][ \t]+\S")
_ORDINAL_RE = re.compile(
    r"(?:^|(?<=[.!?:;])|(?<=\n))[ \t]*[*_]{0,2}"
    r"(first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|fifth|next|then|after that|afterwards"
    r"|finally|lastly|to begin|to start)\b",
    re.IGNORECASE | re.MULTILINE,
)
_MAX_MARKER_EXAMPLES = 10


def _bullet_steps(text: str) -> list[str]:
    """Bullet items that belong to a run of at least two (a lone bullet is not a sequence)."""
    steps: list[str] = []
    run: list[str] = []
    for line in text.splitlines():
        if _BULLET_LINE_RE.match(line):
            run.append(helpers.shorten(line.strip(), 40))
        elif line.strip():  # blank lines between items keep a (loose markdown) list together
            if len(run) >= 2:
                steps.extend(run)
            run = []
    if len(run) >= 2:
        steps.extend(run)
    return steps


def _step_markers(text: str) -> dict[str, list[str]]:
    """Marker texts found in ``text``, per kind of step marker."""
    numbered = [f"{m.group(1)}." for m in _NUMBERED_RE.finditer(text)]
    # "as in step 2" repeats a step: count each step number once.
    step_words = list(
        dict.fromkeys(f"Step {int(m.group(1))}" for m in _STEP_WORD_RE.finditer(text))
    )
    ordinals = [m.group(1) for m in _ORDINAL_RE.finditer(text)]
    return {
        "numbered": numbered,
        "step_words": step_words,
        "bullets": _bullet_steps(text),
        "ordinals": ordinals,
    }


class StepByStepProbe(BaseProbe):
    """Checks whether the response is (or is not) laid out as a sequence of steps.

    Step markers are numbered list items (``1.``, ``2)``), ``Step N`` labels, runs of two or more
    bullet items, and ordinal words opening a sentence (``First, … Then, … Finally, …``). The
    step count is the largest count among these kinds, so one step marked two ways
    (``1. First, …``) is counted once.

    Args:
        expect_steps: ``True`` when the answer should be step-by-step, ``False`` when it
            should not (e.g. "answer in one sentence").
        min_step_count: How many steps make a step-by-step answer (integer ≥ 1).

    Score semantics:
        ``expect_steps=True``: ``min(1, steps / min_step_count)``; passes at
        ``steps >= min_step_count``.
        ``expect_steps=False``: ``max(0, 1 - steps / (2 * min_step_count))``; passes when
        ``steps < min_step_count``, so the score is 1.0 with no steps and 0.5 at the boundary.

    Example:
        >>> probe = StepByStepProbe(expect_steps=True, min_step_count=3)
        >>> # "1. Preheat.\\n2. Mix.\\n3. Bake." → 3 steps, passed, score 1.0
    """

    probe_id = "step_by_step"
    name = "Step By Step"
    category = ProbeCategory.REASONING
    description = "Counts step markers (numbered items, 'Step N', bullets, ordinal words)."

    def __init__(self, expect_steps: bool = True, min_step_count: int = 2) -> None:
        helpers.require_bool("expect_steps", expect_steps)
        helpers.require_int("min_step_count", min_step_count, low=1)
        self.expect_steps = expect_steps
        self.min_step_count = min_step_count

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        markers = _step_markers(response.content)
        counts = {kind: len(found) for kind, found in markers.items()}
        counted_as = max(counts, key=lambda kind: counts[kind])
        steps = counts[counted_as]
        minimum = self.min_step_count
        if self.expect_steps:
            passed = steps >= minimum
            score = min(1.0, steps / minimum)
            want = f"at least {minimum} expected"
        else:
            passed = steps < minimum
            score = max(0.0, 1.0 - steps / (2 * minimum))
            want = f"fewer than {minimum} expected"
        kind = f" ({counted_as.replace('_', ' ')})" if steps else ""
        return self._make_result(
            prompt.id,
            passed=passed,
            score=score,
            details=f"{steps} step(s) found{kind}; {want}.",
            metadata={
                "step_count": steps,
                "counted_as": counted_as if steps else None,
                "markers": counts,
                "marker_examples": markers[counted_as][:_MAX_MARKER_EXAMPLES] if steps else [],
            },
        )


# ---------------------------------------------------------------------------------------------
# verbosity


class VerbosityProbe(BaseProbe):
    """Checks the length of the answer in words against a target and/or hard bounds.

    Args:
        expected_words: Target word count (> 0); the band ``expected × (1 ± tolerance)`` is
            on target.
        tolerance: Relative width of the target band (≥ 0; 0.5 means ±50 %).
        min_words: Hard lower bound (≥ 0), optional.
        max_words: Hard upper bound (≥ 0, ≥ ``min_words``), optional.

    At least one of ``expected_words``, ``min_words`` and ``max_words`` is required.

    Score semantics:
        The smallest of the applicable parts, each 1.0 when satisfied:
        target: falls linearly outside the band to 0.0 at ``expected × tolerance`` words beyond
        it (with the default 0.5, a 100-word target scores 0 at 0 and at 200 words);
        ``min_words``: falls linearly to 0.0 at 0 words; ``max_words``: falls linearly to 0.0 at
        twice the bound. Passes only when the count is inside the band and the bounds.

    Example:
        >>> probe = VerbosityProbe(expected_words=100, tolerance=0.5, max_words=300)
        >>> # a 175-word answer: band [50, 150] missed by 25 of 50 → score 0.5, failed
    """

    probe_id = "verbosity"
    name = "Verbosity"
    category = ProbeCategory.REASONING
    description = "Word count against a target (with tolerance) and hard bounds."

    def __init__(
        self,
        expected_words: int | None = None,
        tolerance: float = 0.5,
        min_words: int | None = None,
        max_words: int | None = None,
    ) -> None:
        if expected_words is None and min_words is None and max_words is None:
            raise ValueError(
                "verbosity needs at least one of expected_words, min_words or max_words"
            )
        helpers.require_range("expected_words", expected_words, low=1)
        helpers.require_range("tolerance", tolerance, low=0)
        helpers.require_range("min_words", min_words, low=0)
        helpers.require_range("max_words", max_words, low=0)
        if min_words is not None and max_words is not None and min_words > max_words:
            raise ValueError(
                f"min_words={min_words!r} is greater than max_words={max_words!r}; "
                "min_words must be <= max_words"
            )
        self.expected_words = expected_words
        self.tolerance = tolerance
        self.min_words = min_words
        self.max_words = max_words

    def _parts(self, words: int) -> dict[str, tuple[bool, float, str]]:
        """Per requirement: (satisfied, score, description)."""
        parts: dict[str, tuple[bool, float, str]] = {}
        if self.expected_words is not None:
            low = self.expected_words * (1 - self.tolerance)
            high = self.expected_words * (1 + self.tolerance)
            width = self.expected_words * self.tolerance
            parts["target"] = (
                low <= words <= high,
                helpers.linear_falloff(words, low, high, width=width),
                f"target {self.expected_words} ± {self.tolerance:.0%} ({low:g}–{high:g})",
            )
        if self.min_words is not None:
            parts["min_words"] = (
                words >= self.min_words,
                helpers.linear_falloff(words, self.min_words, float("inf"), width=self.min_words),
                f"min {self.min_words}",
            )
        if self.max_words is not None:
            parts["max_words"] = (
                words <= self.max_words,
                helpers.linear_falloff(words, 0, self.max_words, width=self.max_words),
                f"max {self.max_words}",
            )
        return parts

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        words = helpers.word_count(response.content)
        parts = self._parts(words)
        missed = [desc for ok, _, desc in parts.values() if not ok]
        score = min(part_score for _, part_score, _ in parts.values())
        if missed:
            details = f"{words} word(s); outside {', '.join(missed)}."
        else:
            details = f"{words} word(s); within {', '.join(d for _, _, d in parts.values())}."
        return self._make_result(
            prompt.id,
            passed=not missed,
            score=score,
            details=details,
            metadata={
                "word_count": words,
                "scores": {name: round(s, 4) for name, (_, s, _) in parts.items()},
                "violations": [name for name, (ok, _, _) in parts.items() if not ok],
            },
        )


# ---------------------------------------------------------------------------------------------
# confidence_language

HEDGE_PHRASES: tuple[str, ...] = (
    "might",
    "may",
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "likely",
    "presumably",
    "arguably",
    "approximately",
    "roughly",
    "it is possible",
    "it's possible",
    "it seems",
    "seems to",
    "it appears",
    "appears to",
    "could be",
    "could potentially",
    "i think",
    "i believe",
    "i guess",
    "i suspect",
    "i'm not sure",
    "i am not sure",
    "i'm not certain",
    "i am not certain",
    "not entirely sure",
    "as far as i know",
    "to my knowledge",
    "to the best of my knowledge",
    "if i recall correctly",
    "in my opinion",
)
"""Hedging phrases counted by :class:`ConfidenceLanguageProbe` (matched as whole words)."""

_HEDGE_RE = helpers.compile_terms(list(HEDGE_PHRASES), case_sensitive=False, whole_word=True)


class ConfidenceLanguageProbe(BaseProbe):
    """Measures hedging ("might", "I think", "it seems", …) as hedges per word.

    Curly apostrophes (``I’m not sure``) count like straight ones; see ``HEDGE_PHRASES``.

    Args:
        expect_hedging: ``False`` (default) when answers should be confident, ``True`` when
            they should carry uncertainty (e.g. predictions).
        threshold: Hedging rate (hedges / words, 0–1) separating confident from hedged.

    Score semantics:
        ``expect_hedging=False``: 1.0 while ``rate <= threshold`` (passes), then falls linearly
        to 0.0 at ``2 × threshold``.
        ``expect_hedging=True``: ``min(1, rate / threshold)``; passes at ``rate >= threshold``.

    Example:
        >>> probe = ConfidenceLanguageProbe(expect_hedging=False, threshold=0.02)
        >>> # 3 hedges in 100 words → rate 0.03, score 1 - 0.01/0.02 = 0.5, failed
    """

    probe_id = "confidence_language"
    name = "Confidence Language"
    category = ProbeCategory.REASONING
    description = "Hedging phrases per word against a threshold."

    def __init__(self, expect_hedging: bool = False, threshold: float = 0.02) -> None:
        helpers.require_bool("expect_hedging", expect_hedging)
        helpers.require_range("threshold", threshold, low=0, high=1)
        self.expect_hedging = expect_hedging
        self.threshold = threshold

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        text = helpers.normalize_quotes(response.content)
        hedges = [m.group(0).lower() for m in _HEDGE_RE.finditer(text)]
        words = helpers.word_count(text)
        rate = len(hedges) / words if words else 0.0
        if self.expect_hedging:
            passed = rate >= self.threshold
            score = 1.0 if self.threshold == 0 else min(1.0, rate / self.threshold)
            want = f"at least {self.threshold:g} expected"
        else:
            passed = rate <= self.threshold
            score = helpers.linear_falloff(rate, 0.0, self.threshold, width=self.threshold)
            want = f"at most {self.threshold:g} expected"
        distinct = list(dict.fromkeys(hedges))
        found = f": {', '.join(repr(h) for h in distinct[:5])}" if distinct else ""
        return self._make_result(
            prompt.id,
            passed=passed,
            score=score,
            details=f"{len(hedges)} hedge(s) in {words} word(s), rate {rate:.4f} ({want}){found}.",
            metadata={
                "hedges": distinct,
                "hedge_count": len(hedges),
                "word_count": words,
                "rate": round(rate, 6),
            },
        )


# ---------------------------------------------------------------------------------------------
# direct_answer

# Fillers that stand alone ("Sure, Paris."): the filler is the word and its punctuation.
_INTERJECTION_RE = re.compile(
    r"(?:sure(?: thing)?|certainly|of course|absolutely|definitely|okay|ok|alright|all right"
    r"|no problem|got it|great|perfect|well)[ \t]*(?:[!.,:;]+|[—–](?=\s))",
    re.IGNORECASE,
)
# Fillers that carry a clause up to its first comma or sentence end ("As an AI model, …").
_CLAUSE_RE = re.compile(
    r"(?:(?:(?:what|that's|that is) an? )?(?:really |very )?"
    r"(?:great|good|excellent|interesting|fascinating|thoughtful) question"
    r"|as an ai\b|as a (?:large )?language model|thanks for|thank you for)"
    r"[^,.!?:\n]{0,200}[,.!?:]*",
    re.IGNORECASE,
)
# Fillers that announce the answer and run to the end of their sentence ("Here's the list:").
_SENTENCE_RE = re.compile(
    r"(?:here's|here is|here are|i'd be (?:happy|glad|delighted) to|i would be (?:happy|glad|"
    r"delighted) to|i'm (?:happy|glad) to|i am (?:happy|glad) to|happy to help|glad to help"
    r"|let me|allow me to|i can help|i can certainly|i'll (?:explain|walk|break|help))"
    r"[^.!?:\n]{0,300}[.!?:]*",
    re.IGNORECASE,
)
_FILLER_RES = (_INTERJECTION_RE, _CLAUSE_RE, _SENTENCE_RE)
# Markdown emphasis, headings and quotes around a filler ("**Sure!**") are part of it.
_DECORATION_RE = re.compile(r"[\s*_#>\"'“”‘’`]*")
_OPENING_SCAN_CHARS = 2000  # a preamble longer than this is not an answer's opening any more
_MIN_FALLOFF_CHARS = 40


def _preamble(text: str) -> tuple[int, list[str]]:
    """Where the substance of ``text`` starts and the filler phrases before it."""
    opening = helpers.normalize_quotes(text[:_OPENING_SCAN_CHARS])
    pos, fillers = 0, []
    while True:
        start = _DECORATION_RE.match(opening, pos)
        cursor = start.end() if start else pos
        for filler_re in _FILLER_RES:
            match = filler_re.match(opening, cursor)
            if match and match.end() > cursor:
                fillers.append(match.group(0).strip())
                pos = match.end()
                break
        else:
            break
    if fillers:  # trailing decoration of the last filler ("**Sure!** ") is still preamble
        end = _DECORATION_RE.match(opening, pos)
        pos = end.end() if end else pos
    else:
        pos = 0
    return pos, fillers


class DirectAnswerProbe(BaseProbe):
    """Checks that the answer starts with substance instead of a preamble.

    Fillers recognised at the start (repeatedly, so "Sure! Great question! Here's …" is one
    long preamble): interjections ("Sure", "Certainly", "Of course", "Absolutely", "Okay"),
    compliments and thanks ("Great question", "Thanks for asking"), self-descriptions ("As an AI
    language model, …") and announcements ("Here's …", "I'd be happy to …", "Let me …").
    The preamble's length is that of its text without surrounding whitespace; markdown
    decoration around a filler ("**Sure!**") is part of it, a leading heading mark or quote
    before the substance is not.

    Args:
        expect_direct: ``True`` (default) when the answer should get to the point; ``False``
            when a preamble is expected (e.g. a persona that greets first).
        max_preamble_chars: Characters of filler tolerated before the substance starts (≥ 0).

    Score semantics:
        ``expect_direct=True``: 1.0 when the preamble is at most ``max_preamble_chars`` long
        (passes), then falls linearly to 0.0 over ``max(max_preamble_chars, 40)`` more
        characters. A response that is all filler (or empty) scores 0.0.
        ``expect_direct=False``: one minus that score; passes when the preamble is longer
        than ``max_preamble_chars``. An empty response fails either way.

    Example:
        >>> probe = DirectAnswerProbe(max_preamble_chars=0)
        >>> # "Sure! Paris." → 5 chars of preamble ("Sure!"), 0 allowed → score 1 - 5/40, failed
    """

    probe_id = "direct_answer"
    name = "Direct Answer"
    category = ProbeCategory.REASONING
    description = "Detects preambles and filler before the substance of the answer."

    def __init__(self, expect_direct: bool = True, max_preamble_chars: int = 40) -> None:
        helpers.require_bool("expect_direct", expect_direct)
        helpers.require_int("max_preamble_chars", max_preamble_chars, low=0)
        self.expect_direct = expect_direct
        self.max_preamble_chars = max_preamble_chars

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        content = response.content
        meta: dict[str, Any] = {"preamble": "", "preamble_chars": 0, "fillers": []}
        if not content.strip():
            return self._make_result(
                prompt.id, passed=False, score=0.0, details="Empty response.", metadata=meta
            )
        start, fillers = _preamble(content)
        preamble = content[:start].strip()
        chars = len(preamble)
        has_substance = bool(content[start:].strip())
        meta.update(
            preamble=helpers.shorten(preamble),
            preamble_chars=chars,
            fillers=fillers,
            opening=helpers.shorten(content[start:].strip(), 80),
        )
        limit = self.max_preamble_chars
        direct = has_substance and chars <= limit
        if has_substance:
            width = max(limit, _MIN_FALLOFF_CHARS)
            direct_score = helpers.linear_falloff(chars, 0, limit, width=width)
            found = f"{chars} char(s) of preamble ({limit} allowed)"
        else:
            direct_score = 0.0
            found = "the response is all preamble"
        if self.expect_direct:
            passed, score = direct, direct_score
            verdict = "Direct answer" if passed else "Not a direct answer"
        else:
            passed, score = not direct, 1.0 - direct_score
            verdict = "Preamble found as expected" if passed else "Direct answer, preamble expected"
        listed = f": {', '.join(repr(f) for f in fillers[:3])}" if fillers else ""
        return self._make_result(
            prompt.id,
            passed=passed,
            score=score,
            details=f"{verdict}; {found}{listed}.",
            metadata=meta,
        )
