"""Small shared pieces for probes: fence stripping, JSON extraction and types, tool calls, scores.

Parsing is cached per content string, so several probes reading one response parse it once.
Cached values are shared: probes must not mutate what these functions return.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from promptcanary.core.models import LLMResponse, ToolCall

_FENCE_RE = re.compile(r"^\s*```[\w+-]*[ \t]*\r?\n(.*?)\r?\n?[ \t]*```\s*$", re.DOTALL)
_INNER_FENCE_RE = re.compile(r"```(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.DOTALL)

_NOT_JSON = object()


def strip_fences(text: str) -> str:
    """The body of a response wrapped in one markdown code fence, else the stripped text."""
    match = _FENCE_RE.match(text)
    return match.group(1).strip() if match else text.strip()


@lru_cache(maxsize=512)
def _parse_cached(content: str) -> Any:
    body = strip_fences(content)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        pass
    # A JSON block embedded in prose ("Here is the data: ```json {...} ```").
    for block in _INNER_FENCE_RE.findall(content):
        try:
            return json.loads(block)
        except (ValueError, RecursionError):
            continue
    return _NOT_JSON


def parse_json(content: str) -> tuple[bool, Any]:
    """``(True, value)`` when the content (fences stripped) is JSON, else ``(False, None)``."""
    value = _parse_cached(content)
    if value is _NOT_JSON:
        return False, None
    return True, value


def json_error(content: str) -> str:
    """Why the content is not JSON, for a probe's details (``""`` when it is)."""
    body = strip_fences(content)
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return ""


JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
"""The JSON-schema type names a suite may use (``json_path``'s ``type``, ``arg_types``)."""


def json_type_is(value: Any, type_name: str) -> bool:
    """JSON-schema type test: a bool is neither an integer nor a number; ``2.0`` is an integer."""
    if isinstance(value, bool):
        return type_name == "boolean"
    if type_name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if type_name == "number":
        return isinstance(value, int | float)
    kinds: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "object": dict,
        "array": (list, tuple),
        "null": type(None),
    }
    return type_name in kinds and isinstance(value, kinds[type_name])


def json_type_name(value: Any) -> str:
    """The JSON-schema type name of a value (``"integer"`` for ``2.0``); else its Python type."""
    for type_name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if json_type_is(value, type_name):
            return type_name
    return type(value).__name__


def parse_json_object(content: str) -> dict[str, Any] | None:
    """The response parsed as a JSON object, or ``None`` when it is not one."""
    ok, value = parse_json(content)
    return value if ok and isinstance(value, dict) else None


def _tool_call_from_mapping(data: Any) -> ToolCall | None:
    if not isinstance(data, dict):
        return None
    fn = data.get("function")
    if not isinstance(fn, dict):
        fn = data
    name = fn.get("name") or fn.get("tool") or fn.get("tool_name")
    if not isinstance(name, str) or not name:
        return None
    args = fn.get("arguments", fn.get("args", fn.get("parameters", fn.get("input"))))
    if isinstance(args, str):
        raw = args
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            args = None
    else:
        try:
            raw = json.dumps(args, sort_keys=False)
        except (TypeError, ValueError):
            raw = ""
    return ToolCall(name=name, arguments=args, arguments_raw=raw)


@lru_cache(maxsize=512)
def _tool_calls_from_text(content: str) -> tuple[ToolCall, ...]:
    ok, value = parse_json(content)
    if not ok:
        return ()
    candidates: list[Any]
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        candidates = value["tool_calls"]
    elif isinstance(value, list):
        candidates = value
    else:
        candidates = [value]
    calls = (_tool_call_from_mapping(c) for c in candidates)
    return tuple(c for c in calls if c is not None)


# ``get_weather({"city": "Paris"})`` written as text. Only the opening is matched by the regex;
# the object itself is read with raw_decode, so the scan stays linear on hostile input.
_CALL_SYNTAX_RE = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)[ \t]*\([ \t]*(?=\{)")
_CALL_SYNTAX_MAX_CANDIDATES = 50
_DECODER = json.JSONDecoder()


@lru_cache(maxsize=512)
def _tool_calls_from_call_syntax(content: str) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for n, match in enumerate(_CALL_SYNTAX_RE.finditer(content)):
        if n >= _CALL_SYNTAX_MAX_CANDIDATES:
            break
        start = match.end()
        try:
            args, end = _DECODER.raw_decode(content, start)
        except (ValueError, RecursionError):
            continue
        if not isinstance(args, dict) or not content[end:].lstrip(" \t").startswith(")"):
            continue
        raw = content[start:end]
        calls.append(ToolCall(name=match.group(1), arguments=args, arguments_raw=raw))
    return tuple(calls)


def extract_tool_calls(
    response: LLMResponse, *, call_syntax: bool = False
) -> tuple[list[ToolCall], str]:
    """Tool calls of a response and where they came from: ``"native"``, ``"content"`` or ``""``.

    Native ``tool_calls`` win; JSON in the content (``{"name":…, "arguments":…}``, a list of
    those, or ``{"tool_calls": [...]}``) is the fallback for models without native tool use.
    With ``call_syntax=True`` a call written as text, ``get_weather({"city": "Paris"})``, is a
    last resort (loose: good enough to tell that and which tool was called).
    """
    if response.tool_calls:
        return list(response.tool_calls), "native"
    return content_tool_calls(response.content, call_syntax=call_syntax)


def content_tool_calls(content: str, *, call_syntax: bool = False) -> tuple[list[ToolCall], str]:
    """Tool calls written in the text of a response (see :func:`extract_tool_calls`)."""
    calls = _tool_calls_from_text(content)
    if not calls and call_syntax:
        calls = _tool_calls_from_call_syntax(content)
    return (list(calls), "content") if calls else ([], "")


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (to quote model output in details)."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def fraction(hits: int, total: int, *, empty: float = 1.0) -> float:
    """``hits / total`` in [0, 1]; ``empty`` when there is nothing to check."""
    if total <= 0:
        return empty
    return min(1.0, max(0.0, hits / total))


def linear_falloff(value: float, low: float, high: float, *, width: float) -> float:
    """1.0 inside ``[low, high]``, falling linearly to 0.0 at ``width`` beyond either bound."""
    if low <= value <= high:
        return 1.0
    distance = low - value if value < low else value - high
    if width <= 0:
        return 0.0
    return max(0.0, 1.0 - distance / width)


def compile_terms(
    terms: list[str], *, case_sensitive: bool, whole_word: bool = False
) -> re.Pattern[str]:
    """One regex matching any of ``terms`` literally (for counting phrase hits in one pass)."""
    flags = 0 if case_sensitive else re.IGNORECASE
    escaped = sorted((re.escape(t) for t in terms if t), key=len, reverse=True)
    if not escaped:
        return re.compile(r"(?!)")
    body = "|".join(escaped)
    # A first-character lookahead lets the engine skip most positions without trying every
    # alternative there: about 3x faster on long prose (bench/probes.py).
    firsts = "".join(sorted({re.escape(t[0]) for t in terms if t}))
    body = f"(?=[{firsts}])(?:{body})"
    return re.compile(rf"\b{body}\b" if whole_word else body, flags)


def contains(haystack: str, needle: str, *, case_sensitive: bool) -> bool:
    if case_sensitive:
        return needle in haystack
    return needle.casefold() in haystack.casefold()


_WORD_RE = re.compile(r"\w+(?:['’-]\w+)*", re.UNICODE)


def word_count(text: str) -> int:
    return sum(1 for _ in _WORD_RE.finditer(text))


def require_choice(param: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """Raise a ``ValueError`` naming the parameter and the allowed values."""
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{param}={value!r} is not valid; allowed values: {options}")


def require_range(
    param: str, value: float | None, *, low: float | None = None, high: float | None = None
) -> None:
    """Raise a ``ValueError`` when a numeric parameter is outside ``[low, high]``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{param} must be a number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
        raise ValueError(f"{param}={value!r} is out of range; it must be within {bounds}")


def require_bool(param: str, value: Any) -> None:
    """Raise a ``ValueError`` unless ``value`` is a real bool (``1`` or ``"yes"`` is a typo)."""
    if not isinstance(value, bool):
        raise ValueError(f"{param}={value!r} is not valid; allowed values: True, False")


def require_int(param: str, value: Any, *, low: int | None = None, high: int | None = None) -> None:
    """Raise a ``ValueError`` unless ``value`` is an integer within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{param} must be an integer, got {value!r}")
    require_range(param, value, low=low, high=high)


_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "“": '"', "”": '"'})


def normalize_quotes(text: str) -> str:
    """Typographic quotes and apostrophes as ASCII, so ``I’m`` matches a pattern for ``I'm``."""
    return text.translate(_QUOTES)
