"""Format & structure probes: JSON validity, keys and key order, length, headers, keywords.

Every probe here reads ``response.content`` only. JSON is parsed through
:mod:`promptcanary.core.probes.helpers` (fences stripped, parsed once per content string).
``JsonPathProbe`` lives in :mod:`promptcanary.core.probes.json_path` and is re-exported here.
"""

from __future__ import annotations

import math
import re
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.probes.helpers import (
    contains,
    fraction,
    json_error,
    json_type_name,
    parse_json,
    parse_json_object,
    require_range,
)
from promptcanary.core.probes.json_path import JsonPathProbe as JsonPathProbe  # re-exported

KEY_ORDER_PASS_SCORE = 0.9
_MAX_LISTED = 50  # cap on lists copied into metadata, so a huge response cannot bloat a report


def _str_list(param: str, value: Any, *, required: bool = False) -> list[str]:
    """Validate a list-of-strings parameter (``None`` → ``[]``) and return a copy."""
    if value is None:
        value = []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(f"{param} must be a list of strings, got {value!r}")
    items = list(value)
    bad = [v for v in items if not isinstance(v, str) or not v]
    if bad:
        raise ValueError(f"{param} must contain only non-empty strings; invalid: {bad!r}")
    if required and not items:
        raise ValueError(f"{param} must list at least one value")
    return items


def _require_flag(param: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{param} must be true or false, got {value!r}")


def _listed(items: list[str]) -> str:
    return ", ".join(repr(i) for i in items)


class JsonValidityProbe(BaseProbe):
    """Checks that the whole response is valid JSON.

    One markdown code fence around the response (```json … ```) is stripped first. A JSON block
    embedded in prose ("Here you go: ```json {…}```") does *not* count: a downstream parser of the
    raw answer would fail on it; ``metadata["embedded_json"]`` says when that is what happened.

    Args:
        (none)

    Score:
        1.0 when the response is JSON, 0.0 otherwise (binary). Passes at 1.0.

    Example:
        >>> from promptcanary.core.probes import JsonValidityProbe
        >>> probe = JsonValidityProbe()
    """

    probe_id = "json_validity"
    name = "JSON Validity"
    category = ProbeCategory.FORMAT
    description = "The response parses as JSON (code fences stripped)."

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        error = json_error(response.content)
        if not error:
            _, value = parse_json(response.content)
            return self._make_result(
                prompt.id,
                passed=True,
                score=1.0,
                details=f"Valid JSON ({json_type_name(value)}).",
                metadata={"valid": True, "json_type": json_type_name(value)},
            )
        embedded, _ = parse_json(response.content)
        details = f"Not valid JSON (parse error): {error}."
        if embedded:
            details += " A JSON block is embedded in surrounding prose."
        return self._make_result(
            prompt.id,
            passed=False,
            score=0.0,
            details=details,
            metadata={
                "valid": False,
                "error": error,
                "embedded_json": embedded,
                "raw_content_preview": response.content[:200],
            },
        )


class JsonSchemaProbe(BaseProbe):
    """Checks required and forbidden top-level keys of a JSON object response.

    Args:
        required_keys: Keys that must be present in the top-level object.
        forbidden_keys: Keys that must not be present.
        score_per_key: ``True`` gives partial credit per required key; ``False`` scores the
            required keys all-or-nothing.

    Score:
        The fraction of ``required_keys`` present (1.0 when none are required; with
        ``score_per_key=False`` 1.0 only when all are present, else 0.0), halved when any
        forbidden key is present. A response that is not a JSON object scores 0.0. Passes only
        when every required key is present and no forbidden key is.

    Example:
        >>> from promptcanary.core.probes import JsonSchemaProbe
        >>> probe = JsonSchemaProbe(
        ...     required_keys=["name", "age"], forbidden_keys=["password", "ssn"],
        ...     score_per_key=True,
        ... )
    """

    probe_id = "json_schema"
    name = "JSON Schema"
    category = ProbeCategory.FORMAT
    description = "Required keys present and forbidden keys absent in the JSON object."

    def __init__(
        self,
        required_keys: list[str] | None = None,
        forbidden_keys: list[str] | None = None,
        score_per_key: bool = True,
    ) -> None:
        self.required_keys = _str_list("required_keys", required_keys)
        self.forbidden_keys = _str_list("forbidden_keys", forbidden_keys)
        _require_flag("score_per_key", score_per_key)
        self.score_per_key = score_per_key
        clash = sorted(set(self.required_keys) & set(self.forbidden_keys))
        if clash:
            raise ValueError(f"keys cannot be both required_keys and forbidden_keys: {clash!r}")

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        obj = parse_json_object(response.content)
        if obj is None:
            ok, value = parse_json(response.content)
            why = (
                f"the JSON is {json_type_name(value)}, not an object"
                if ok
                else f"not valid JSON: {json_error(response.content)}"
            )
            return self._make_result(
                prompt.id,
                passed=False,
                score=0.0,
                details=f"Cannot check keys: {why}.",
                metadata={"missing_keys": list(self.required_keys), "forbidden_found": []},
            )
        missing = [k for k in self.required_keys if k not in obj]
        forbidden_found = [k for k in self.forbidden_keys if k in obj]
        present = len(self.required_keys) - len(missing)
        if self.score_per_key:
            score = fraction(present, len(self.required_keys))
        else:
            score = 0.0 if missing else 1.0
        if forbidden_found:
            score /= 2
        parts = [f"{present}/{len(self.required_keys)} required keys present"]
        if missing:
            parts.append(f"missing: {_listed(missing)}")
        if forbidden_found:
            parts.append(f"forbidden keys present: {_listed(forbidden_found)}")
        return self._make_result(
            prompt.id,
            passed=not missing and not forbidden_found,
            score=score,
            details="; ".join(parts) + ".",
            metadata={
                "missing_keys": missing,
                "forbidden_found": forbidden_found,
                "present_keys": sorted(obj)[:_MAX_LISTED],
            },
        )


def _lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (O(len(a)·len(b)), one row of memory)."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b, start=1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


class JsonKeyOrderProbe(BaseProbe):
    """Detects reordering of top-level JSON keys with a longest-common-subsequence comparison.

    Only the *order* is scored: the actual order is the order in which the keys of
    ``expected_order`` appear in the response's top-level object (other keys are ignored), and
    the LCS is normalised by how many of them appear. Missing keys are reported in metadata but
    are the business of ``json_schema``; a response containing none of them scores 0.0.

    Args:
        expected_order: The keys in the order the downstream consumer expects.

    Score:
        ``lcs_length / number of expected keys present`` (0.0 when the response is not a JSON
        object or has none of the keys). Passes at ≥ 0.9, which tolerates one swap among ten
        keys but not among three.

    Example:
        >>> from promptcanary.core.probes import JsonKeyOrderProbe
        >>> probe = JsonKeyOrderProbe(expected_order=["name", "age", "email"])
    """

    probe_id = "json_key_order"
    name = "JSON Key Order"
    category = ProbeCategory.FORMAT
    description = "Top-level JSON keys appear in the expected order."

    def __init__(self, expected_order: list[str]) -> None:
        self.expected_order = _str_list("expected_order", expected_order, required=True)
        duplicates = sorted({k for k in self.expected_order if self.expected_order.count(k) > 1})
        if duplicates:
            raise ValueError(f"expected_order lists keys more than once: {duplicates!r}")
        self._expected_set = frozenset(self.expected_order)

    def _order_meta(self, actual: list[str], lcs: int) -> dict[str, Any]:
        return {"expected_order": self.expected_order, "actual_order": actual, "lcs_length": lcs}

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        obj = parse_json_object(response.content)
        if obj is None:
            return self._make_result(
                prompt.id,
                passed=False,
                score=0.0,
                details="Cannot check key order: the response is not a JSON object.",
                metadata={**self._order_meta([], 0), "missing_keys": []},
            )
        actual = [k for k in obj if k in self._expected_set]  # json.loads keeps document order
        missing = [k for k in self.expected_order if k not in obj]
        if not actual:
            return self._make_result(
                prompt.id,
                passed=False,
                score=0.0,
                details="None of the expected keys is present.",
                metadata={**self._order_meta([], 0), "missing_keys": missing},
            )
        lcs = _lcs_length(self.expected_order, actual)
        score = lcs / len(actual)
        details = f"{lcs}/{len(actual)} keys in expected order; actual order: {_listed(actual)}."
        if missing:
            details += f" Not present (ignored): {_listed(missing)}."
        return self._make_result(
            prompt.id,
            passed=score >= KEY_ORDER_PASS_SCORE,
            score=score,
            details=details,
            metadata={**self._order_meta(actual, lcs), "missing_keys": missing},
        )


def _band_score(length: int, low: float, high: float) -> float:
    """1.0 inside ``[low, high]``; below, ``length / low``; above, 0.0 at twice ``high``."""
    if length < low:
        return length / low
    if length > high:
        return max(0.0, 1.0 - (length - high) / high) if high > 0 else 0.0
    return 1.0


class ResponseLengthProbe(BaseProbe):
    """Catches verbosity explosions and sudden brevity, by hard bounds or against a baseline.

    The length is ``len(response.content)`` in characters (Unicode code points).

    Args:
        min_chars: Hard lower bound (inclusive), or ``None``.
        max_chars: Hard upper bound (inclusive), or ``None``.
        baseline_chars: A typical length; enables drift scoring against it.
        tolerance: Allowed relative deviation from ``baseline_chars`` (0.5 = ±50%).

    Score:
        The minimum of two band scores, each 1.0 inside its band ``[low, high]``, falling
        linearly below it to 0.0 at an empty response (``length / low``) and above it to 0.0 at
        twice the upper edge (``1 - (length - high) / high``). The hard band is
        ``[min_chars, max_chars]``; the drift band is
        ``[baseline_chars·(1 − tolerance), baseline_chars·(1 + tolerance)]``. Passes only inside
        both bands. Without any parameter it always passes and reports the length.

    Example:
        >>> from promptcanary.core.probes import ResponseLengthProbe
        >>> probe = ResponseLengthProbe(
        ...     min_chars=10, max_chars=2000, baseline_chars=500, tolerance=0.5
        ... )
        >>> # 1000 chars: drift band [250, 750] → 1 - 250/750 ≈ 0.67, failed
    """

    probe_id = "response_length"
    name = "Response Length"
    category = ProbeCategory.FORMAT
    description = "Response length within bounds and near the baseline length."

    def __init__(
        self,
        min_chars: int | None = None,
        max_chars: int | None = None,
        baseline_chars: int | None = None,
        tolerance: float = 0.5,
    ) -> None:
        require_range("min_chars", min_chars, low=0)
        require_range("max_chars", max_chars, low=0)
        require_range("baseline_chars", baseline_chars, low=1)
        require_range("tolerance", tolerance, low=0)
        if min_chars is not None and max_chars is not None and min_chars > max_chars:
            raise ValueError(
                f"min_chars={min_chars!r} is greater than max_chars={max_chars!r}; "
                "min_chars must be <= max_chars"
            )
        self.min_chars = min_chars
        self.max_chars = max_chars
        self.baseline_chars = baseline_chars
        self.tolerance = tolerance

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        length = len(response.content)
        low = self.min_chars if self.min_chars is not None else 0
        high = self.max_chars if self.max_chars is not None else math.inf
        bound_score = _band_score(length, low, high)
        # "char_count" is the name PromptCanary 0.2.2 used for "length".
        metadata: dict[str, Any] = {
            "length": length,
            "char_count": length,
            "bound_score": bound_score,
        }
        problems: list[str] = []
        if length < low:
            problems.append(f"below min_chars={self.min_chars}")
        elif length > high:
            problems.append(f"above max_chars={self.max_chars}")

        drift_score = 1.0
        if self.baseline_chars is not None:
            drift_low = self.baseline_chars * (1 - self.tolerance)
            drift_high = self.baseline_chars * (1 + self.tolerance)
            drift_score = _band_score(length, drift_low, drift_high)
            ratio = length / self.baseline_chars
            metadata.update(
                baseline_chars=self.baseline_chars,
                baseline_ratio=round(ratio, 4),
                ratio_to_baseline=round(ratio, 4),  # the 0.2.2 name
                drift_band=[round(drift_low, 2), round(drift_high, 2)],
                drift_score=drift_score,
            )
            if not drift_low <= length <= drift_high:
                problems.append(
                    f"{ratio:.0%} of baseline_chars={self.baseline_chars}, outside "
                    f"±{self.tolerance:.0%}"
                )
        details = f"{length} chars"
        details += ": " + "; ".join(problems) + "." if problems else " (within bounds)."
        return self._make_result(
            prompt.id,
            passed=not problems,
            score=min(bound_score, drift_score),
            details=details,
            metadata=metadata,
        )


_ATX_HEADER_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Leading "#"s and a section number ("1.", "2)", "2.3"; not "2024"), trailing colon and spaces.
_HEADER_DECORATION_RE = re.compile(r"^[#\s]*(?:(?:\d+(?:\.\d+)*[.)]|\d+(?:\.\d+)+)\s+)?|[\s:]+$")
_EMPHASIS_CHARS = "*_`"
_SPACES_RE = re.compile(r"\s+")


def _normalise_header(text: str) -> str:
    """``"**2. Next  Steps:**"`` → ``"Next Steps"``: emphasis, numbering, colon, spacing."""
    text = text.strip().strip(_EMPHASIS_CHARS).strip()
    text = _HEADER_DECORATION_RE.sub("", text)
    return _SPACES_RE.sub(" ", text).strip(_EMPHASIS_CHARS).strip()


def _atx_headers(markdown: str) -> list[str]:
    """Text of every ATX header (``#``–``######``) outside fenced code blocks, in order."""
    headers: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines():
        opener = _FENCE_OPEN_RE.match(line)
        if fence is None:
            if opener:
                fence = opener.group(1)
                continue
            match = _ATX_HEADER_RE.match(line)
            if match:
                headers.append(match.group(2) or "")
        elif (
            opener
            and opener.group(1)[0] == fence[0]
            and len(opener.group(1)) >= len(fence)
            and not line.strip().lstrip(fence[0])  # a closing fence carries no info string
        ):
            fence = None
    return headers


class MarkdownHeaderProbe(BaseProbe):
    """Verifies that expected markdown section headers (``#``–``######``) are present.

    Headers inside fenced code blocks are ignored. A header matches an expected one when their
    texts are equal after normalisation: surrounding emphasis (``**``), leading section numbers
    (``1.``, ``2.3``), a trailing colon and repeated whitespace are dropped; the header level
    does not matter.

    Args:
        expected_headers: Header texts that must appear (e.g. ``"Summary"``).
        case_sensitive: Compare header texts case-sensitively.

    Score:
        The fraction of ``expected_headers`` found. Passes when all are found.

    Example:
        >>> from promptcanary.core.probes import MarkdownHeaderProbe
        >>> probe = MarkdownHeaderProbe(
        ...     expected_headers=["Summary", "Details", "Next Steps"], case_sensitive=False
        ... )
    """

    probe_id = "markdown_headers"
    name = "Markdown Headers"
    category = ProbeCategory.FORMAT
    description = "Expected markdown section headers are present."

    def __init__(self, expected_headers: list[str], case_sensitive: bool = False) -> None:
        self.expected_headers = _str_list("expected_headers", expected_headers, required=True)
        _require_flag("case_sensitive", case_sensitive)
        self.case_sensitive = case_sensitive
        self._expected_keys = [self._key(h) for h in self.expected_headers]

    def _key(self, header: str) -> str:
        text = _normalise_header(header)
        return text if self.case_sensitive else text.casefold()

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        headers = _atx_headers(response.content)
        present = {self._key(h) for h in headers}
        pairs = list(zip(self.expected_headers, self._expected_keys, strict=True))
        found = [header for header, key in pairs if key in present]
        missing = [header for header, key in pairs if key not in present]
        details = f"{len(found)}/{len(self.expected_headers)} expected headers found"
        details += f"; missing: {_listed(missing)}." if missing else "."
        return self._make_result(
            prompt.id,
            passed=not missing,
            score=fraction(len(found), len(self.expected_headers)),
            details=details,
            metadata={
                "found": found,
                "missing": missing,
                "headers": headers[:_MAX_LISTED],
                "found_headers": headers[:_MAX_LISTED],  # 0.2.2 names: every header found,
                "missing_headers": missing,  # and the expected ones missing
                "header_count": len(headers),
            },
        )


class KeywordPresenceProbe(BaseProbe):
    """Required and forbidden keywords (plain substrings, not whole words, not regexes).

    Args:
        required_keywords: Substrings that must appear in the response.
        forbidden_keywords: Substrings that must not appear (e.g. ``"As an AI language model"``).
        case_sensitive: Match case-sensitively (default: case-insensitive, Unicode casefold).

    Score:
        ``1 − violations / total_checks``, where every required keyword missing and every
        forbidden keyword present is one violation. Passes with zero violations.

    Example:
        >>> from promptcanary.core.probes import KeywordPresenceProbe
        >>> probe = KeywordPresenceProbe(
        ...     required_keywords=["Paris"],
        ...     forbidden_keywords=["I cannot help", "As an AI language model"],
        ...     case_sensitive=False,
        ... )
    """

    probe_id = "keyword_presence"
    name = "Keyword Presence"
    category = ProbeCategory.FORMAT
    description = "Required keywords present and forbidden keywords absent."

    def __init__(
        self,
        required_keywords: list[str] | None = None,
        forbidden_keywords: list[str] | None = None,
        case_sensitive: bool = False,
    ) -> None:
        self.required_keywords = _str_list("required_keywords", required_keywords)
        self.forbidden_keywords = _str_list("forbidden_keywords", forbidden_keywords)
        _require_flag("case_sensitive", case_sensitive)
        self.case_sensitive = case_sensitive

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        if not self.required_keywords and not self.forbidden_keywords:
            return self._make_result(
                prompt.id,
                passed=True,
                score=1.0,
                details="No required_keywords or forbidden_keywords given; skipped.",
                metadata={"missing_required": [], "forbidden_found": [], "skipped": True},
            )
        text = response.content
        cs = self.case_sensitive
        missing = [k for k in self.required_keywords if not contains(text, k, case_sensitive=cs)]
        forbidden = [k for k in self.forbidden_keywords if contains(text, k, case_sensitive=cs)]
        total = len(self.required_keywords) + len(self.forbidden_keywords)
        violations = len(missing) + len(forbidden)
        parts = [f"{violations} violation(s) in {total} check(s)"]
        if missing:
            parts.append(f"missing: {_listed(missing)}")
        if forbidden:
            parts.append(f"forbidden present: {_listed(forbidden)}")
        return self._make_result(
            prompt.id,
            passed=violations == 0,
            score=1.0 - violations / total,
            details="; ".join(parts) + ".",
            metadata={
                "missing_required": missing,
                "forbidden_found": forbidden,
                "found_forbidden": forbidden,  # the 0.2.2 name
                "violations": violations,
                "total_checks": total,
            },
        )


class ExpectedKeywordsProbe(BaseProbe):
    """Zero-configuration keyword check against the prompt's own ``expected_keywords``.

    Keywords are matched as case-insensitive substrings.

    Args:
        (none; reads ``prompt.expected_keywords``)

    Score:
        The fraction of ``prompt.expected_keywords`` found. Passes when all are found. A prompt
        without expected keywords scores 1.0 and passes, with a note in ``details``.

    Example:
        >>> from promptcanary.core.probes import ExpectedKeywordsProbe
        >>> probe = ExpectedKeywordsProbe()   # YAML: ``- type: expected_keywords``
    """

    probe_id = "expected_keywords"
    name = "Expected Keywords"
    category = ProbeCategory.FORMAT
    description = "The prompt's expected_keywords appear in the response."

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        expected = [k for k in prompt.expected_keywords if k]
        if not expected:
            return self._make_result(
                prompt.id,
                passed=True,
                score=1.0,
                details="Prompt has no expected_keywords; nothing to check (skipped).",
                metadata={"found": [], "missing": [], "skipped": True},
            )
        found = [k for k in expected if contains(response.content, k, case_sensitive=False)]
        missing = [k for k in expected if k not in found]
        details = f"{len(found)}/{len(expected)} expected keywords found"
        details += f"; missing: {_listed(missing)}." if missing else "."
        return self._make_result(
            prompt.id,
            passed=not missing,
            score=fraction(len(found), len(expected)),
            details=details,
            metadata={"found": found, "missing": missing, "skipped": False},
        )
