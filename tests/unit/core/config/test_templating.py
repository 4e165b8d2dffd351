"""Prompt templates: plain placeholders render as jinja2 renders them, other syntax goes through
the sandbox, a lone placeholder keeps its value's type, and a missing variable is named."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

from promptcanary.core.config.templating import TemplateProblem, render, variables

ROW: dict[str, Any] = {
    "s": "Paris", "n": 42, "f": 7.5, "b": True, "none": None, "items": [1, "a"],
    "braces": "{{ s }}", "uni": "Zürich ✓",
}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "{{ s }}",
        "a {{ n }} b {{f}} c {{ b }}{{ none }} {{ items }}",
        "{{ braces }} is not rendered twice",
        "  {{ uni }}\n",
        "trailing newline kept\n",
        "{{ s | upper }} and {{ n + 1 }}",
        "{% if b %}yes{% else %}no{% endif %} {{ s }}",
        "{# a comment #}{{ s }}",
    ],
)
def test_texts_render_exactly_as_jinja2_renders_them(text: str) -> None:
    expected = jinja2.Environment(keep_trailing_newline=True).from_string(text).render(**ROW)
    assert render(text, ROW) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("{{ n }}", 42), (" {{ f }} ", 7.5), ("{{ b }}", True), ("{{ items }}", [1, "a"]),
     ("{{ n | string }}", "42"), ("{{ s }} x", "Paris x"), ("{{ '7' | int }}", 7)],
)  # fmt: skip
def test_a_lone_placeholder_keeps_the_value_type_when_typed(value: str, expected: Any) -> None:
    assert render(value, ROW, typed=True) == expected
    assert render({"k": [value]}, ROW, typed=True) == {"k": [expected]}


@pytest.mark.parametrize(
    "text", ["{{ missing }}", "x {{ missing | upper }}", "{{ s }}{{ missing }}"]
)
def test_a_missing_variable_is_named(text: str) -> None:
    with pytest.raises(TemplateProblem) as info:
        render(text, ROW)
    assert info.value.variable == "missing"


def test_variables_lists_what_the_template_uses_but_not_jinja_globals() -> None:
    used = variables(["{{ a }} {% for i in range(3) %}{{ i }}{% endfor %}", {"x": ["{{ b.c }}"]}])
    assert used == {"a", "b"}


def test_the_sandbox_refuses_internals() -> None:
    with pytest.raises(TemplateProblem, match=r"SecurityError|unsafe"):
        render("{{ s.__class__.__mro__[1].__subclasses__() }}", ROW)
