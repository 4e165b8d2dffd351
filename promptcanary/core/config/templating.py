"""Prompt templates: ``{{ name }}`` placeholders in a prompt's texts and probe parameters,
filled from one dataset row at a time.

The environment is jinja2's immutable sandbox (a suite from a pull request is untrusted: no
attribute access to internals, no mutation) with strict undefined variables, so a row without
a variable the template uses is an error, never an empty string. Autoescaping is off on
purpose: these are texts sent to a model, not HTML; our own report templates escape.

A value that is one placeholder and nothing else (``equals: "{{ total }}"``) keeps the row
value's type, so a JSON Lines number compares as a number; ``{{ total | int }}`` turns a CSV
cell into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

_ONE_PLACEHOLDER = re.compile(r"^\{\{(?P<expr>(?:(?!\}\}).)*)\}\}$", re.DOTALL)


class TemplateProblem(ValueError):
    """A template that cannot be read or filled; ``variable`` is the one missing, if any."""

    def __init__(self, message: str, variable: str | None = None) -> None:
        super().__init__(message)
        self.variable = variable


@lru_cache(maxsize=1)
def _environment() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def variables(value: Any) -> set[str]:
    """The variables the strings in ``value`` use (a syntax error is a TemplateProblem)."""
    env = _environment()
    used: set[str] = set()
    known = set(env.globals)  # range, dict, namespace, ...
    for text in _strings(value):
        if "{" not in text:
            continue
        try:
            used |= meta.find_undeclared_variables(env.parse(text))
        except jinja2.TemplateSyntaxError as exc:
            shown = text[:60]
            raise TemplateProblem(f"template syntax error in {shown!r}: {exc.message}") from None
    return used - known


@lru_cache(maxsize=4096)
def _compiled(text: str) -> jinja2.Template:
    return _environment().from_string(text)


@lru_cache(maxsize=1024)
def _expression(expr: str) -> Any:
    return _environment().compile_expression(expr, undefined_to_none=False)


def render(value: Any, row: Mapping[str, Any], *, typed: bool = False) -> Any:
    """``value`` with every string rendered against ``row`` (mappings and lists walked).

    With ``typed``, a string that is one placeholder becomes the expression's own value.
    """
    if isinstance(value, str):
        return _render_text(value, row, typed)
    if isinstance(value, Mapping):
        return {k: render(v, row, typed=typed) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [render(v, row, typed=typed) for v in value]
    return value


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@lru_cache(maxsize=4096)
def _plain_parts(text: str) -> tuple[str, ...] | None:
    """``text`` split into literal text and variable names (odd places) when its only syntax
    is ``{{ name }}``; None when it uses anything else (filters, blocks, comments)."""
    parts = tuple(_PLACEHOLDER.split(text))
    literal = "".join(parts[::2])
    return None if any(mark in literal for mark in ("{{", "{%", "{#")) else parts


def _fill(parts: tuple[str, ...], row: Mapping[str, Any], typed: bool) -> Any:
    """What jinja2 renders for plain placeholders (``str`` of each value), without its
    per-render context: thousands of dataset rows render a few texts each."""
    names = parts[1::2]
    for name in names:
        if name not in row:
            raise TemplateProblem(f"'{name}' is undefined", name)
    if typed and len(parts) == 3 and not parts[0].strip() and not parts[2].strip():
        return row[names[0]]
    return "".join(part if n % 2 == 0 else str(row[part]) for n, part in enumerate(parts))


def _render_text(text: str, row: Mapping[str, Any], typed: bool) -> Any:
    if "{" not in text:
        return text
    parts = _plain_parts(text)
    if parts is not None:
        return _fill(parts, row, typed)
    try:
        match = _ONE_PLACEHOLDER.match(text.strip()) if typed else None
        if match:
            result = _expression(match["expr"].strip())(**row)
            if isinstance(result, jinja2.Undefined):
                str(result)  # raises UndefinedError naming the variable
            return result
        return _compiled(text).render(**row)
    except jinja2.UndefinedError as exc:
        name = re.search(r"'([^']+)' is undefined", str(exc))
        raise TemplateProblem(str(exc), name[1] if name else None) from None
    except jinja2.TemplateError as exc:  # syntax, sandbox security
        raise TemplateProblem(f"{type(exc).__name__}: {exc}") from None
