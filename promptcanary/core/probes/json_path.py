"""The ``json_path`` probe: JSONPath assertions on JSON output or on tool-call arguments.

Paths use jsonpath-ng's extended syntax (filters such as ``$.items[?(@.price > 10)]``). Every
path and regex is compiled once, when the probe is built, so a bad suite fails at load time with
the assertion's index in the message, never halfway through a run. Regexes (``matches`` and
``=~`` filters) are searched with a time limit (:mod:`promptcanary.core.probes.user_regex`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from jsonpath_ng import DatumInContext, JSONPath
from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.ext import parse as parse_jsonpath
from jsonpath_ng.ext.filter import Expression

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.probes.helpers import (
    JSON_TYPES,
    extract_tool_calls,
    fraction,
    json_error,
    json_type_is,
    json_type_name,
    parse_json,
    require_choice,
    require_range,
)
from promptcanary.core.probes.user_regex import (
    RegexTimeout,
    UserRegex,
    compile_user_regex,
    timed_out_result,
)

__all__ = ["JSON_TYPES", "JsonPathProbe", "json_type_name"]

CHECKS = ("exists", "equals", "matches", "type", "min", "max")
TARGETS = ("content", "tool_arguments")
_MAX_FOUND = 5  # values copied into metadata per assertion
_MAX_VALUE_CHARS = 200


@dataclass(frozen=True)
class _Assertion:
    """One compiled assertion; ``checks`` holds the check keys the user gave."""

    path: str
    expr: Any  # a jsonpath_ng JSONPath (untyped library)
    checks: dict[str, Any]
    pattern: UserRegex | None


class _TimedRegexFilter(Expression):
    """A ``[?(@.sku =~ 'pattern')]`` filter searched with the user-regex time limit.

    jsonpath-ng searches ``=~`` with the standard ``re`` module, which no timeout can stop.
    """

    def __init__(self, original: Any, pattern: UserRegex) -> None:
        super().__init__(original.target, original.op, original.value)
        self.pattern = pattern

    def find(self, datum: Any) -> list[Any]:
        found = self.target.find(DatumInContext.wrap(datum))
        return [m for m in found if isinstance(m.value, str) and self.pattern.search(m.value)]


def _timed(node: Any, where: str) -> Any:
    """``node`` with every ``=~`` filter beneath it searched with a time limit."""
    if isinstance(node, Expression) and node.op == "=~" and isinstance(node.value, str):
        try:
            return _TimedRegexFilter(node, compile_user_regex(node.value))
        except ValueError as exc:
            raise ValueError(f"{where}: =~ {node.value!r} is not a valid regex: {exc}") from None
    for name, value in vars(node).items():
        if isinstance(value, JSONPath):
            setattr(node, name, _timed(value, where))
        elif isinstance(value, list) and any(isinstance(v, JSONPath) for v in value):
            value[:] = [_timed(v, where) if isinstance(v, JSONPath) else v for v in value]
    return node


def _compile(index: int, raw: Any) -> _Assertion:
    where = f"assertions[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be a mapping with 'path' and a check, got {raw!r}")
    unknown = sorted(set(raw) - {"path", *CHECKS})
    if unknown:
        allowed = ", ".join(("path", *CHECKS))
        raise ValueError(f"{where} has unknown key(s) {unknown!r}; allowed keys: {allowed}")
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{where}.path must be a non-empty JSONPath string, got {path!r}")
    try:
        expr = _timed(parse_jsonpath(path), f"{where}.path")
    except JSONPathError as exc:
        raise ValueError(f"{where}.path={path!r} is not a valid JSONPath: {exc}") from None
    checks = {k: raw[k] for k in CHECKS if k in raw}
    if not checks:
        raise ValueError(
            f"{where} ({path}) has no check; give at least one of: {', '.join(CHECKS)}"
        )
    if "exists" in checks:
        if not isinstance(checks["exists"], bool):
            raise ValueError(f"{where}.exists must be true or false, got {checks['exists']!r}")
        if checks["exists"] is False and len(checks) > 1:
            raise ValueError(f"{where}: exists: false cannot be combined with value checks")
    if "type" in checks:
        require_choice(f"{where}.type", checks["type"], JSON_TYPES)
    for bound in ("min", "max"):
        require_range(f"{where}.{bound}", checks.get(bound))
    if "min" in checks and "max" in checks and checks["min"] > checks["max"]:
        raise ValueError(f"{where}: min={checks['min']!r} is greater than max={checks['max']!r}")
    if "equals" in checks:
        try:
            json.dumps(checks["equals"])
        except (TypeError, ValueError):
            raise ValueError(
                f"{where}.equals must be a JSON value, got {checks['equals']!r}"
            ) from None
    pattern = None
    if "matches" in checks:
        if not isinstance(checks["matches"], str):
            raise ValueError(f"{where}.matches must be a regex string, got {checks['matches']!r}")
        try:
            pattern = compile_user_regex(checks["matches"])
        except ValueError as exc:
            raise ValueError(f"{where}.matches is not a valid regex: {exc}") from None
    return _Assertion(path=path, expr=expr, checks=checks, pattern=pattern)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``true`` ≠ ``1`` (Python says equal), ``1`` = ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _as_text(value: Any) -> str:
    """What ``matches`` searches: a string as is, any other value as its JSON text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _short(value: Any) -> str:
    """A value as JSON text, truncated for details and metadata."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "…"


def _value_problem(assertion: _Assertion, value: Any) -> str:
    """Why one matched value fails the assertion's value checks (``""`` when it passes)."""
    checks = assertion.checks
    if "equals" in checks and not _json_equal(value, checks["equals"]):
        return f"{_short(value)} does not equal {_short(checks['equals'])}"
    if "type" in checks and not json_type_is(value, checks["type"]):
        return f"{_short(value)} is not of type {checks['type']}"
    if assertion.pattern is not None and not assertion.pattern.search(_as_text(value)):
        return f"{_short(value)} does not match /{assertion.pattern.pattern}/"
    if "min" in checks or "max" in checks:
        if not _is_number(value) or math.isnan(value):
            return f"{_short(value)} is not a number"
        if "min" in checks and value < checks["min"]:
            return f"{_short(value)} is below min {checks['min']}"
        if "max" in checks and value > checks["max"]:
            return f"{_short(value)} is above max {checks['max']}"
    return ""


def _check(assertion: _Assertion, document: Any) -> dict[str, Any]:
    """Evaluate one assertion: ``{path, ok, reason, found, found_count}``."""
    try:
        values = [m.value for m in assertion.expr.find(document)]
    except RegexTimeout:
        raise  # not this assertion failing: the response cannot be judged
    except Exception as exc:  # jsonpath-ng runs user filters on model output
        # and can raise nearly anything (TypeError on mixed comparisons, re.error, …); that is
        # this assertion failing, never the run crashing.
        return _outcome(assertion, [], f"path evaluation failed: {type(exc).__name__}: {exc}")
    exists = assertion.checks.get("exists")
    if exists is False:
        reason = f"expected no match, found {len(values)} value(s)" if values else ""
        return _outcome(assertion, values, reason)
    if not values:
        return _outcome(assertion, values, "path matched nothing")
    for i, value in enumerate(values):
        problem = _value_problem(assertion, value)
        if problem:
            prefix = f"value {i + 1} of {len(values)}: " if len(values) > 1 else ""
            return _outcome(assertion, values, prefix + problem)
    return _outcome(assertion, values, "")


def _outcome(assertion: _Assertion, values: list[Any], reason: str) -> dict[str, Any]:
    return {
        "path": assertion.path,
        "ok": not reason,
        "reason": reason,
        "found": [_short(v) for v in values[:_MAX_FOUND]],
        "found_count": len(values),
    }


class JsonPathProbe(BaseProbe):
    """Asserts values inside JSON output, or inside the arguments of the first tool call.

    Each assertion is a ``path`` (jsonpath-ng extended syntax, filters allowed) plus one or more
    checks, all of which must hold:

    - ``exists``: ``true`` — the path matches something; ``false`` — it matches nothing (cannot
      be combined with the value checks below);
    - ``equals``: a JSON value; JSON equality (``true`` ≠ ``1``, ``1`` = ``1.0``);
    - ``matches``: a regex, searched in a string value, or in the JSON text of any other
      value (``true``, ``3``, ``{"a": 1}``); a search that runs out of time makes the result
      *errored*, naming the pattern (so does an ``=~`` filter in the path);
    - ``type``: a JSON-schema type name (string, number, integer, boolean, object, array, null;
      a boolean is not a number, ``2.0`` is an integer);
    - ``min`` / ``max``: inclusive numeric bounds (the value must be a number).

    A path matching several values passes only when *every* value satisfies the checks; a path
    matching nothing fails every check but ``exists: false``.

    Args:
        assertions: List of mappings ``{path, exists | equals | matches | type | min | max}``.
        target: ``"content"`` (the response parsed as JSON: fences stripped, else the first
            JSON code block embedded in prose) or
            ``"tool_arguments"`` (the arguments of the first tool call; native calls first).

    Score:
        The fraction of assertions that hold; 0.0 when there is no JSON document to inspect
        (content not JSON, no tool call, unparseable arguments). Passes when all hold.

    Example:
        >>> from promptcanary.core.probes import JsonPathProbe
        >>> probe = JsonPathProbe(
        ...     assertions=[
        ...         {"path": "$.city", "equals": "Paris"},
        ...         {"path": "$.temperature", "type": "number", "min": -50, "max": 60},
        ...         {"path": "$.items[*].sku", "matches": "^[A-Z]{3}-[0-9]+$"},
        ...     ],
        ...     target="content",
        ... )
    """

    probe_id = "json_path"
    name = "JSON Path"
    category = ProbeCategory.FORMAT
    description = "JSONPath assertions on JSON output or tool-call arguments hold."

    def __init__(self, assertions: list[dict[str, Any]], target: str = "content") -> None:
        require_choice("target", target, TARGETS)
        if not isinstance(assertions, list | tuple) or not assertions:
            raise ValueError(
                "assertions must be a non-empty list of mappings like "
                f"{{'path': '$.name', 'exists': true}}, got {assertions!r}"
            )
        self._compiled = [_compile(i, a) for i, a in enumerate(assertions)]
        self.assertions = [dict(a) for a in assertions]
        self.target = target

    def _document(self, response: LLMResponse) -> tuple[bool, Any, str, dict[str, Any]]:
        """``(found, document, why_not, extra_metadata)`` for the configured target."""
        if self.target == "content":
            ok, value = parse_json(response.content)
            why = "" if ok else f"the response is not JSON: {json_error(response.content)}"
            return ok, value, why, {}
        calls, source = extract_tool_calls(response)
        if not calls:
            return False, None, "the response has no tool call", {}
        first = calls[0]
        extra = {"tool_name": first.name, "tool_call_source": source}
        if first.arguments is None:
            raw = first.arguments_raw[:_MAX_VALUE_CHARS]
            return (
                False,
                None,
                f"arguments of tool call {first.name!r} are not JSON: {raw!r}",
                extra,
            )
        return True, first.arguments, "", extra

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        found, document, why_not, extra = self._document(response)
        if not found:
            return self._make_result(
                prompt.id,
                passed=False,
                score=0.0,
                details=f"No JSON to check: {why_not}.",
                metadata={"target": self.target, "assertions": [], **extra},
            )
        try:
            outcomes = [_check(a, document) for a in self._compiled]
        except RegexTimeout as exc:
            return timed_out_result(self, prompt.id, exc)
        failed = [o for o in outcomes if not o["ok"]]
        held = len(outcomes) - len(failed)
        details = f"{held}/{len(outcomes)} assertions hold"
        if failed:
            details += "; failed: " + "; ".join(f"{o['path']}: {o['reason']}" for o in failed[:5])
            if len(failed) > 5:
                details += f"; and {len(failed) - 5} more"
        return self._make_result(
            prompt.id,
            passed=not failed,
            score=fraction(held, len(outcomes)),
            details=details + ".",
            metadata={"target": self.target, "assertions": outcomes, **extra},
        )
