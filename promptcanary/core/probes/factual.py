"""Factual probes: a fixed expected answer, and the sentiment (polarity) of the answer.

Both are deterministic and dependency-free on purpose: a canary must give the same score to the
same text on every machine and every version, or the drift it reports is the probe's own.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes import helpers
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.probes.user_regex import (
    RegexTimeout,
    UserRegex,
    compile_user_regex,
    timed_out_result,
)

# ---------------------------------------------------------------------------------------------
# factual_consistency

MATCH_MODES = ("contains", "exact", "startswith", "regex")


def _normalize(text: str, *, case_sensitive: bool) -> str:
    # NFC: "café" typed with a combining accent must equal the precomposed one.
    text = unicodedata.normalize("NFC", helpers.normalize_quotes(text))
    return text if case_sensitive else text.casefold()


def _trim_answer(text: str) -> str:
    """The answer without surrounding whitespace and one trailing period (for ``exact``)."""
    text = text.strip()
    return text[:-1].rstrip() if text.endswith(".") else text


class FactualConsistencyProbe(BaseProbe):
    """Checks the response against a fixed expected answer.

    Matching normalises typographic quotes and Unicode composition; ``case_sensitive=False``
    compares case-folded text (``"STRASSE"`` matches ``"straße"``).

    Args:
        expected_value: The expected answer (a non-empty string; numbers are accepted and
            compared as their text, so ``expected_value: 42`` in YAML works).
        match_mode: ``"contains"`` (the answer appears anywhere), ``"exact"`` (the whole
            response, ignoring surrounding whitespace and one trailing period), ``"startswith"``
            (the response, leading whitespace ignored, begins with it) or ``"regex"``
            (``expected_value`` is a Python regular expression searched in the response, within
            :data:`~promptcanary.core.probes.user_regex.REGEX_TIMEOUT_SECONDS`; a search that
            runs out of time makes the result *errored*, naming the pattern).
        case_sensitive: Compare case exactly (default ``False``).

    Score semantics:
        Binary: 1.0 and passed when the answer matches, else 0.0. A fixed factual answer is
        right or wrong; partial credit would hide the flip that this canary exists to catch.

    Example:
        >>> probe = FactualConsistencyProbe(expected_value="Paris", match_mode="exact")
        >>> # "Paris." → passed; "The capital is Paris." → failed (use contains for that)
    """

    probe_id = "factual_consistency"
    name = "Factual Consistency"
    category = ProbeCategory.FACTUAL
    description = "Checks the response against a fixed expected answer."

    def __init__(
        self,
        expected_value: str,
        match_mode: str = "contains",
        case_sensitive: bool = False,
    ) -> None:
        if isinstance(expected_value, int | float) and not isinstance(expected_value, bool):
            expected_value = str(expected_value)
        if not isinstance(expected_value, str) or not expected_value.strip():
            raise ValueError(
                f"expected_value={expected_value!r} is not valid; it must be a non-empty string"
            )
        helpers.require_choice("match_mode", match_mode, MATCH_MODES)
        helpers.require_bool("case_sensitive", case_sensitive)
        self.expected_value = expected_value
        self.match_mode = match_mode
        self.case_sensitive = case_sensitive
        self._regex: UserRegex | None = None
        if match_mode == "regex":
            try:
                self._regex = compile_user_regex(expected_value, ignore_case=not case_sensitive)
            except ValueError as exc:
                raise ValueError(
                    f"expected_value={expected_value!r} is not a valid regular expression for "
                    f"match_mode='regex' ({exc}); fix the pattern or use one of the other "
                    f"match modes: {', '.join(m for m in MATCH_MODES if m != 'regex')}"
                ) from None
        self._expected = _normalize(expected_value, case_sensitive=case_sensitive)

    def _match(self, content: str) -> tuple[bool, str]:
        """Whether the content matches, and the matched text (for the details)."""
        if self._regex is not None:
            found = self._regex.search(unicodedata.normalize("NFC", content))
            return (True, found.group(0)) if found else (False, "")
        text = _normalize(content, case_sensitive=self.case_sensitive)
        if self.match_mode == "exact":
            ok = _trim_answer(text) == _trim_answer(self._expected)
            return ok, content.strip() if ok else ""
        if self.match_mode == "startswith":
            ok = text.lstrip().startswith(self._expected)
            return ok, content.lstrip()[: len(self._expected)] if ok else ""
        index = text.find(self._expected)
        # Case folding can change lengths (ß → ss), so quote from the folded text.
        return (True, text[index : index + len(self._expected)]) if index >= 0 else (False, "")

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        try:
            ok, matched = self._match(response.content)
        except RegexTimeout as exc:
            return timed_out_result(self, prompt.id, exc)
        mode = self.match_mode
        if ok:
            details = f"Matched {self.expected_value!r} ({mode})."
        elif not response.content.strip():
            details = f"Empty response; expected {self.expected_value!r} ({mode})."
        else:
            details = (
                f"Expected {self.expected_value!r} ({mode}); got "
                f"{helpers.shorten(response.content.strip(), 120)!r}."
            )
        return self._make_result(
            prompt.id,
            passed=ok,
            score=1.0 if ok else 0.0,
            details=details,
            metadata={
                "expected_value": self.expected_value,
                "match_mode": mode,
                "case_sensitive": self.case_sensitive,
                "matched": ok,
                "matched_text": helpers.shorten(matched),
                "response_excerpt": helpers.shorten(response.content.strip()),
            },
        )


# ---------------------------------------------------------------------------------------------
# sentiment

# fmt: off
POSITIVE_WORDS = frozenset(
    (
        "good", "great", "excellent", "amazing", "awesome", "wonderful", "fantastic", "superb",
        "outstanding", "brilliant", "terrific", "incredible", "remarkable", "impressive",
        "lovely", "beautiful", "nice", "pleasant", "perfect", "love", "loved", "loves", "enjoy",
        "enjoyed", "enjoyable", "happy", "glad", "pleased", "delighted", "thrilled", "excited",
        "exciting", "fun", "best", "better", "success", "successful", "win", "wins", "benefit",
        "beneficial", "helpful", "useful", "valuable", "effective", "reliable", "easy",
        "recommend", "recommended", "favorite", "favourite", "satisfied", "satisfying",
        "grateful", "thank", "thanks", "thankful", "positive", "improve", "improved",
        "improvement", "strong", "fortunate", "welcome", "wonderfully", "happily", "elegant",
    )
)
"""Words that add +1 to :class:`SentimentProbe`'s evidence (lowercase)."""

NEGATIVE_WORDS = frozenset(
    (
        "bad", "terrible", "awful", "horrible", "dreadful", "poor", "worst", "worse", "hate",
        "hated", "hates", "dislike", "sad", "angry", "upset", "unhappy", "disappointed",
        "disappointing", "disappointment", "frustrating", "frustrated", "annoying", "annoyed",
        "fail", "failed", "fails", "failure", "broken", "useless", "worthless", "ugly", "nasty",
        "negative", "wrong", "difficult", "painful", "pain", "harmful", "dangerous", "boring",
        "waste", "wasted", "mediocre", "inferior", "regret", "unfortunately", "unfortunate",
        "sorry", "problematic", "flawed", "disaster", "fear", "afraid", "worried", "worry",
        "complaint", "unreliable", "weak", "lose", "loss", "horrendous", "miserable",
    )
)
"""Words that add −1 to :class:`SentimentProbe`'s evidence (lowercase)."""

NEGATORS = frozenset(
    (
        "not", "no", "never", "nothing", "nobody", "none", "neither", "nor", "without",
        "hardly", "barely", "cannot",
    )
)
"""Words (and any ``…n't``) that flip the polarity of the opinion words just after them."""
# fmt: on

_NEGATION_SCOPE = 3  # tokens after a negator whose polarity it flips ("not very good")
_SMOOTHING = 2.0  # one opinion word should not read as maximal sentiment
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[.,;:!?]")
_CLAUSE_BREAKS = frozenset(".,;:!?")
_MAX_LISTED_WORDS = 20


def polarity(text: str) -> tuple[float, dict[str, list[str]]]:
    """Lexicon polarity of ``text`` in [-1, 1] and the opinion words behind it.

    ``(pos - neg) / (pos + neg + 2)``, where an opinion word within three words after a negator
    (and in the same clause) counts for the other side.
    """
    tokens = _TOKEN_RE.findall(helpers.normalize_quotes(text).casefold())
    found: dict[str, list[str]] = {"positive": [], "negative": [], "negated": []}
    negation_left = 0
    for token in tokens:
        if token in _CLAUSE_BREAKS:
            negation_left = 0
            continue
        if token in NEGATORS or token.endswith("n't"):
            negation_left = _NEGATION_SCOPE
            continue
        sign = 1 if token in POSITIVE_WORDS else -1 if token in NEGATIVE_WORDS else 0
        if sign and negation_left:
            sign = -sign
            found["negated"].append(token)
        if sign:
            found["positive" if sign > 0 else "negative"].append(token)
        negation_left = max(0, negation_left - 1)
    pos, neg = len(found["positive"]), len(found["negative"])
    return (pos - neg) / (pos + neg + _SMOOTHING), found


class SentimentProbe(BaseProbe):
    """Checks the sentiment of the response with a small, fixed word lexicon.

    Polarity is ``(pos − neg) / (pos + neg + 2)`` in [-1, 1]: ``pos``/``neg`` count the words of
    ``POSITIVE_WORDS``/``NEGATIVE_WORDS``; a word within three words after a negator in the
    same clause ("not good", "isn't very helpful", "no problem") counts for the other side.
    The ``+ 2`` keeps a single opinion word at ±0.33 rather than ±1.

    Args:
        expect_positive: ``True`` for a positive answer, ``False`` for a negative one, ``None``
            (YAML ``null``) for a neutral one.
        threshold: Polarity that counts as positive/negative, in [0, 1] (> 0 when neutral is
            expected).

    Score semantics:
        1.0 inside the expected region, falling linearly by the distance from it (score
        ``1 − distance``, 0.0 at distance 1). Regions: ``True`` → ``polarity ≥ threshold``;
        ``False`` → ``polarity ≤ −threshold``; ``None`` → ``|polarity| < threshold``. Passes
        inside the region.

    Example:
        >>> probe = SentimentProbe(expect_positive=True, threshold=0.2)
        >>> # "Great product, I love it." → polarity 2/4 = 0.5, passed, score 1.0
        >>> # "It is fine." → polarity 0, score 1 − 0.2 = 0.8, failed
    """

    probe_id = "sentiment"
    name = "Sentiment"
    category = ProbeCategory.FACTUAL
    description = "Lexicon-based polarity of the response against an expected sentiment."

    def __init__(self, expect_positive: bool | None = None, threshold: float = 0.2) -> None:
        helpers.require_choice("expect_positive", expect_positive, (True, False, None))
        if expect_positive is not None:
            helpers.require_bool("expect_positive", expect_positive)  # reject 1 / 0 posing as bools
        helpers.require_range("threshold", threshold, low=0, high=1)
        if expect_positive is None and threshold == 0:
            raise ValueError(
                "threshold=0 is not valid with expect_positive=None: no polarity is below 0; "
                "use a threshold within (0, 1]"
            )
        self.expect_positive = expect_positive
        self.threshold = threshold

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        value, words = polarity(response.content)
        t = self.threshold
        if self.expect_positive is True:
            want, low, high = "positive", t, 1.0
            passed = value >= t
        elif self.expect_positive is False:
            want, low, high = "negative", -1.0, -t
            passed = value <= -t
        else:
            want, low, high = "neutral", -t, t
            passed = abs(value) < t
        score = helpers.linear_falloff(value, low, high, width=1.0)
        metadata: dict[str, Any] = {
            "polarity": round(value, 4),
            "positive_words": words["positive"][:_MAX_LISTED_WORDS],
            "negative_words": words["negative"][:_MAX_LISTED_WORDS],
            "negated_words": words["negated"][:_MAX_LISTED_WORDS],
            "positive_count": len(words["positive"]),
            "negative_count": len(words["negative"]),
        }
        return self._make_result(
            prompt.id,
            passed=passed,
            score=score,
            details=f"Polarity {value:+.2f} ({want} expected, threshold {t:g}).",
            metadata=metadata,
        )
