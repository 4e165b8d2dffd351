"""Tool-use probes: was a tool called, which one, with which arguments, matching which schema.

Every probe reads the response's **native** ``tool_calls`` first and falls back to tool calls
written as JSON in the content (see :func:`helpers.extract_tool_calls`). ``metadata["source"]``
says which path was used: ``"native"``, ``"content"`` or ``""`` (no call found).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult, ToolCall
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.probes.helpers import (
    JSON_TYPES,
    content_tool_calls,
    extract_tool_calls,
    fraction,
    json_type_is,
    json_type_name,
    require_choice,
    shorten,
)

WRONG_TOOL_SCORE = 0.25
"""``tool_call_name``'s partial credit when a tool was called, but not the expected one."""

SCHEMA_KEYS = ("name", "required_args", "optional_args", "forbidden_args", "arg_types")
PRESENCE_STRATEGIES = ("any", "native", "content")
# PromptCanary 0.2.2's names: "auto" looked everywhere, "json" and "text" only in the content.
_LEGACY_STRATEGIES = {"auto": "any", "json": "content", "text": "content"}


# ── shared pieces ────────────────────────────────────────────────────────────


def _string_list(param: str, value: Any) -> list[str]:
    """A list of strings from a probe parameter (``None`` → ``[]``); anything else is an error."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"{param} must be a list of strings, got {value!r}")
    items = list(value)
    bad = [item for item in items if not isinstance(item, str)]
    if bad:
        raise ValueError(f"{param} must be a list of strings; not strings: {bad!r}")
    return items


def _arguments(call: ToolCall) -> tuple[dict[str, Any] | None, str]:
    """The call's arguments as a JSON object, or ``(None, why not)``.

    A call without arguments (no parsed value, empty raw text) has the empty object; when a
    provider left the parsed value empty, the raw text is parsed here.
    """
    args = call.arguments
    if args is None:
        raw = call.arguments_raw.strip()
        if not raw:
            return {}, ""
        try:
            args = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return None, f"arguments are not valid JSON ({exc}): {shorten(call.arguments_raw)!r}"
    if not isinstance(args, dict):
        shown = call.arguments_raw or repr(args)
        return None, f"arguments are not a JSON object: {shorten(shown)!r}"
    return args, ""


def _no_call(probe: BaseProbe, prompt: CanaryPrompt) -> ProbeResult:
    return probe._make_result(
        prompt.id,
        passed=False,
        score=0.0,
        details="No tool call in the response (neither native nor in the content).",
        metadata={"source": "", "called_names": []},
    )


def _parsed_calls(
    calls: Sequence[ToolCall],
) -> tuple[list[tuple[int, ToolCall, dict[str, Any]]], list[str]]:
    """The calls whose arguments are a JSON object, with their index; why each other one is not."""
    parsed: list[tuple[int, ToolCall, dict[str, Any]]] = []
    errors: list[str] = []
    for index, call in enumerate(calls):
        args, error = _arguments(call)
        if args is None:
            errors.append(f"call {index} ({call.name}): {error}")
        else:
            parsed.append((index, call, args))
    return parsed, errors


def _no_readable_call(
    probe: BaseProbe, prompt: CanaryPrompt, errors: list[str], metadata: dict[str, Any]
) -> ProbeResult:
    """No call's arguments are a JSON object: failed, with why for each call."""
    return probe._make_result(
        prompt.id, passed=False, score=0.0, details="; ".join(errors), metadata=metadata
    )


def _names(calls: Sequence[ToolCall]) -> list[str]:
    return [c.name for c in calls]


# ── tool_call_presence ───────────────────────────────────────────────────────


class ToolCallPresenceProbe(BaseProbe):
    """Checks whether the model called a tool (or, with ``expect_tool_call=False``, did not).

    Args:
        expect_tool_call: ``True`` (default) when a call is expected, ``False`` when the model
            should answer in text without calling anything.
        strategy: Which calls count: ``"native"`` only the response's native ``tool_calls``;
            ``"content"`` only calls written in the text (JSON such as
            ``{"name": "get_weather", "arguments": {...}}``, or ``get_weather({"city": "Paris"})``);
            ``"any"`` (default) native calls, else those in the text.

    Score semantics:
        Binary: 1.0 when the presence of a call matches ``expect_tool_call``, else 0.0.
        ``metadata`` has ``source``, ``call_count`` and ``called_names``.

    Example:
        >>> probe = ToolCallPresenceProbe(expect_tool_call=True, strategy="native")
    """

    probe_id = "tool_call_presence"
    name = "Tool Call Presence"
    category = ProbeCategory.TOOL_USE
    description = "Checks that the model called a tool (or did not)."

    def __init__(self, expect_tool_call: bool = True, strategy: str = "any") -> None:
        if not isinstance(expect_tool_call, bool):
            raise ValueError(f"expect_tool_call must be true or false, got {expect_tool_call!r}")
        strategy = _LEGACY_STRATEGIES.get(strategy, strategy)
        require_choice("strategy", strategy, PRESENCE_STRATEGIES)
        self.expect_tool_call = expect_tool_call
        self.strategy = strategy

    def _calls(self, response: LLMResponse) -> tuple[list[ToolCall], str]:
        if self.strategy == "native":
            calls = list(response.tool_calls)
            return calls, "native" if calls else ""
        if self.strategy == "content":
            return content_tool_calls(response.content, call_syntax=True)
        return extract_tool_calls(response, call_syntax=True)

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        calls, source = self._calls(response)
        called = bool(calls)
        ok = called == self.expect_tool_call
        if called:
            where = "natively" if source == "native" else "in the content"
            details = f"Tool called {where}: {', '.join(_names(calls))}."
        else:
            details = f"No tool call found (strategy {self.strategy!r})."
        if not ok:
            details += " Expected a tool call." if self.expect_tool_call else " Expected none."
        return self._make_result(
            prompt.id,
            passed=ok,
            score=1.0 if ok else 0.0,
            details=details,
            metadata={"source": source, "call_count": len(calls), "called_names": _names(calls)},
        )


# ── tool_call_name ───────────────────────────────────────────────────────────


class ToolCallNameProbe(BaseProbe):
    """Checks that the model called the expected tool.

    Args:
        expected_name: The tool (function) name that should be called.
        case_sensitive: Compare names exactly (default) or ignoring case.
        allow_aliases: Other names that count as the expected tool (renamed functions).

    Score semantics:
        1.0 when any call has the expected name or an alias; ``WRONG_TOOL_SCORE`` (0.25) when
        tools were called but none of them is the expected one (the model still chose to use a
        tool); 0.0 when no tool was called. Passes only at 1.0. ``metadata`` has
        ``called_names``, ``matched_name`` and ``source``.

    Example:
        >>> probe = ToolCallNameProbe(expected_name="get_weather", allow_aliases=["weather"])
    """

    probe_id = "tool_call_name"
    name = "Tool Call Name"
    category = ProbeCategory.TOOL_USE
    description = "Checks that the expected tool was called."

    def __init__(
        self,
        expected_name: str,
        case_sensitive: bool = True,
        allow_aliases: list[str] | None = None,
    ) -> None:
        if not isinstance(expected_name, str) or not expected_name:
            raise ValueError(f"expected_name must be a non-empty string, got {expected_name!r}")
        self.expected_name = expected_name
        self.case_sensitive = bool(case_sensitive)
        self.allow_aliases = _string_list("allow_aliases", allow_aliases)

    def _norm(self, name: str) -> str:
        return name if self.case_sensitive else name.casefold()

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        calls, source = extract_tool_calls(response, call_syntax=True)
        if not calls:
            return _no_call(self, prompt)
        accepted = {self._norm(n) for n in [self.expected_name, *self.allow_aliases]}
        names = _names(calls)
        matched = next((n for n in names if self._norm(n) in accepted), None)
        metadata = {"source": source, "called_names": names, "matched_name": matched}
        if matched is not None:
            return self._make_result(
                prompt.id,
                passed=True,
                score=1.0,
                details=f"Called {matched!r} as expected.",
                metadata=metadata,
            )
        return self._make_result(
            prompt.id,
            passed=False,
            score=WRONG_TOOL_SCORE,
            details=f"Expected a call to {self.expected_name!r}; called {', '.join(names)}.",
            metadata=metadata,
        )


# ── tool_call_args ───────────────────────────────────────────────────────────


class ToolCallArgsProbe(BaseProbe):
    """Checks the top-level argument names of a tool call: required present, forbidden absent.

    With several calls the one with the fewest violations is scored (the first among equals),
    so an extra, unrelated call does not hide a correct one. Values are not checked: use
    ``tool_call_schema`` for types or ``json_path`` (``target: tool_arguments``) for values.

    Args:
        required_args: Argument names that must be present.
        forbidden_args: Argument names that must not be present.

    Score semantics:
        ``1 − violations / total_checks`` (one check per listed argument; 1.0 when none are
        listed and a tool was called). 0.0 when no tool was called or no call's arguments are a
        JSON object (the raw text, truncated, is quoted in ``details``). Passes with no violation.

    Example:
        >>> probe = ToolCallArgsProbe(required_args=["city"], forbidden_args=["api_key"])
    """

    probe_id = "tool_call_args"
    name = "Tool Call Arguments"
    category = ProbeCategory.TOOL_USE
    description = "Checks required and forbidden tool-call arguments."

    def __init__(
        self, required_args: list[str] | None = None, forbidden_args: list[str] | None = None
    ) -> None:
        self.required_args = _string_list("required_args", required_args)
        self.forbidden_args = _string_list("forbidden_args", forbidden_args)
        both = sorted(set(self.required_args) & set(self.forbidden_args))
        if both:
            raise ValueError(f"arguments both required and forbidden: {', '.join(both)}")

    def _violations(self, args: dict[str, Any]) -> tuple[list[str], list[str]]:
        missing = [a for a in self.required_args if a not in args]
        present = [a for a in self.forbidden_args if a in args]
        return missing, present

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        calls, source = extract_tool_calls(response)
        if not calls:
            return _no_call(self, prompt)
        total = len(self.required_args) + len(self.forbidden_args)
        metadata: dict[str, Any] = {"source": source, "called_names": _names(calls)}
        parsed, errors = _parsed_calls(calls)
        if not parsed:
            return _no_readable_call(self, prompt, errors, metadata)
        scored = [(index, call, args, *self._violations(args)) for index, call, args in parsed]
        # The call with the fewest violations (the first among equals).
        index, call, args, missing, forbidden = min(scored, key=lambda s: len(s[3]) + len(s[4]))
        violations = len(missing) + len(forbidden)
        problems = [f"missing required: {', '.join(missing)}"] if missing else []
        problems += [f"forbidden present: {', '.join(forbidden)}"] if forbidden else []
        details = f"Call {call.name!r}: " + ("; ".join(problems) if problems else "arguments OK")
        metadata.update(
            call_index=index,
            call_name=call.name,
            arguments=sorted(map(str, args)),
            missing_args=missing,
            forbidden_present=forbidden,
        )
        return self._make_result(
            prompt.id,
            passed=violations == 0,
            score=1.0 - fraction(violations, total, empty=0.0),
            details=details + ".",
            metadata=metadata,
        )


# ── tool_call_schema ─────────────────────────────────────────────────────────


def _validate_schema(schema: Any) -> dict[str, Any]:
    """A normalised copy of a ``tool_call_schema`` schema; errors name the offending keys."""
    if not isinstance(schema, dict):
        raise ValueError(f"schema must be a mapping with keys {', '.join(SCHEMA_KEYS)}")
    unknown = sorted(str(k) for k in schema if k not in SCHEMA_KEYS)
    if unknown:
        raise ValueError(
            f"unknown schema key(s): {', '.join(unknown)}; allowed keys: {', '.join(SCHEMA_KEYS)}"
        )
    name = schema.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"schema name must be a non-empty string, got {name!r}")
    out: dict[str, Any] = {"name": name}
    for key in ("required_args", "forbidden_args"):
        out[key] = _string_list(f"schema {key}", schema.get(key))
    optional = schema.get("optional_args")
    out["optional_args"] = (
        None if optional is None else _string_list("schema optional_args", optional)
    )
    both = sorted(set(out["required_args"]) & set(out["forbidden_args"]))
    if both:
        raise ValueError(f"schema arguments both required and forbidden: {', '.join(both)}")
    types = schema.get("arg_types") or {}
    if not isinstance(types, dict):
        raise ValueError(f"schema arg_types must map argument names to types, got {types!r}")
    out["arg_types"] = {}
    for arg, spec in types.items():
        names = [spec] if isinstance(spec, str) else _string_list(f"schema arg_types.{arg}", spec)
        bad = sorted(n for n in names if n not in JSON_TYPES)
        if bad or not names:
            raise ValueError(
                f"schema arg_types.{arg}: unknown type name(s) {', '.join(bad) or '(none)'}; "
                f"allowed: {', '.join(JSON_TYPES)}"
            )
        out["arg_types"][str(arg)] = names
    return out


class ToolCallSchemaProbe(BaseProbe):
    """Checks a tool call against a small schema: name, required/optional/forbidden args, types.

    Args:
        schema: A mapping with any of
            ``name`` (expected tool name),
            ``required_args`` (names that must be present),
            ``optional_args`` (names that may be present; when given, any argument that is in
            neither list nor in ``arg_types`` is *unexpected*),
            ``forbidden_args`` (names that must be absent),
            ``arg_types`` (argument → JSON-schema type name or list of names: ``string``,
            ``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``; a boolean is
            neither an integer nor a number, ``2.0`` is an integer).
            Unknown keys or type names raise ``ValueError``.

    Score semantics:
        The fraction of checks that hold. Checks: the name (when given), each required argument
        present, each forbidden argument absent, one "no unexpected arguments" check (when
        ``optional_args`` is given), and the type of each typed argument that is present (an
        absent one is judged by the required check alone). With several calls the call with the
        most checks holding is scored (the first among equals). 0.0 when no tool was called or no
        call's arguments are a JSON object. Passes when every check holds.

    Example:
        >>> probe = ToolCallSchemaProbe(schema={
        ...     "name": "get_weather",
        ...     "required_args": ["city"],
        ...     "optional_args": ["unit"],
        ...     "arg_types": {"city": "string", "unit": ["string", "null"]},
        ... })
    """

    probe_id = "tool_call_schema"
    name = "Tool Call Schema"
    category = ProbeCategory.TOOL_USE
    description = "Checks a tool call's name, arguments and argument types against a schema."

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._spec = _validate_schema(schema)

    def _failures(self, call: ToolCall, args: dict[str, Any]) -> tuple[int, list[str]]:
        """(number of checks, descriptions of the failed ones) for one call."""
        spec = self._spec
        checks = 0
        failed: list[str] = []
        if spec["name"] is not None:
            checks += 1
            if call.name != spec["name"]:
                failed.append(f"name is {call.name!r}, expected {spec['name']!r}")
        for arg in spec["required_args"]:
            checks += 1
            if arg not in args:
                failed.append(f"required argument {arg!r} missing")
        for arg in spec["forbidden_args"]:
            checks += 1
            if arg in args:
                failed.append(f"forbidden argument {arg!r} present")
        if spec["optional_args"] is not None:
            checks += 1
            declared = {*spec["required_args"], *spec["optional_args"], *spec["arg_types"]}
            unexpected = [a for a in args if a not in declared]
            if unexpected:
                failed.append(f"unexpected argument(s): {', '.join(map(repr, unexpected))}")
        for arg, types in spec["arg_types"].items():
            if arg not in args:
                continue
            checks += 1
            if not any(json_type_is(args[arg], t) for t in types):
                found = json_type_name(args[arg])
                failed.append(f"argument {arg!r} is {found}, expected {' or '.join(types)}")
        return checks, failed

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        calls, source = extract_tool_calls(response)
        if not calls:
            return _no_call(self, prompt)
        metadata: dict[str, Any] = {"source": source, "called_names": _names(calls)}
        parsed, errors = _parsed_calls(calls)
        if not parsed:
            return _no_readable_call(self, prompt, errors, metadata)
        scored = []
        for index, call, args in parsed:
            checks, failed = self._failures(call, args)
            scored.append((fraction(checks - len(failed), checks), index, call, checks, failed))
        # The call with the most checks holding (the first among equals).
        score, index, call, checks, failed = max(scored, key=lambda s: s[0])
        metadata.update(call_index=index, call_name=call.name, checks=checks, failed_checks=failed)
        details = f"Call {call.name!r}: " + (
            "; ".join(failed) if failed else f"all {checks} schema checks hold"
        )
        return self._make_result(
            prompt.id, passed=not failed, score=score, details=details + ".", metadata=metadata
        )
