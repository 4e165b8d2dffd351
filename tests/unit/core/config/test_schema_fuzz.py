"""Mutated suite files either load or fail with SuiteConfigError — never any other exception."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptcanary.core.config.schema import SuiteConfigError, suite_from_dict, suite_from_text
from promptcanary.core.spec import SuiteSpec

VALID = """\
name: fuzz-suite
description: A suite to mutate.
tags: [prod]
system_prompt: Be brief.
models:
  - openai/gpt-4o-mini
  - {model: openai/local, api_base: "http://127.0.0.1:1/v1", temperature: 0.1}
defaults: {temperature: 0.0, max_tokens: 128, seed: 1, samples: 2}
probes:
  - type: json_validity
  - type: keyword_presence
    required_keywords: [Paris]
    apply_to: {tags: [geo]}
  - type: response_length
    id: short
    max_chars: 200
prompts:
  - id: capital
    text: What is the capital of France?
    expected_keywords: [Paris]
    tags: [geo]
    probes:
      - type: step_by_step
        expect_steps: false
  - text: Look up order 42.
    tools:
      - type: function
        function: {name: lookup_order, parameters: {type: object}}
    response_format: {type: json_object}
    metadata: {owner: billing}
"""

# Characters that change YAML structure most: indentation, flow brackets, anchors, tags, quotes.
_NOISE = st.text(alphabet=" \t\n:-[]{}&*!|>'\",#?%@`~0aZ\x00\x85\u2028", min_size=1, max_size=6)
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_loads_or_config_error(text: str) -> None:
    try:
        suite = suite_from_text(text, source="fuzz.yaml")
    except SuiteConfigError as error:
        assert error.file == "fuzz.yaml"
        assert error.message
        return
    assert isinstance(suite, SuiteSpec)
    assert suite.prompts and suite.bindings


def test_the_unmutated_suite_loads() -> None:
    suite = suite_from_text(VALID)
    assert len(suite.prompts) == 2
    assert len(suite.bindings) == 4


@_SETTINGS
@given(data=st.data())
def test_character_edits(data: st.DataObject) -> None:
    text = VALID
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 8)))
        insert = data.draw(st.one_of(st.just(""), _NOISE))
        text = text[:start] + insert + text[end:]
    assert_loads_or_config_error(text)


@_SETTINGS
@given(data=st.data())
def test_line_edits(data: st.DataObject) -> None:
    lines = VALID.splitlines()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        j = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["delete", "duplicate", "swap", "dedent", "indent"]))
        if action == "delete" and len(lines) > 1:
            del lines[i]
        elif action == "duplicate":
            lines.insert(j, lines[i])
        elif action == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "dedent":
            lines[i] = lines[i][2:]
        else:
            lines[i] = "  " + lines[i]
    assert_loads_or_config_error("\n".join(lines) + "\n")


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: _replace(doc[head], rest, new)}
    copy = list(doc)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def _rename_key(doc: Any, path: tuple[Any, ...], new_key: str) -> Any:
    """Rename the key at ``path`` (a key mistyped or swapped with another)."""
    if len(path) == 1 and isinstance(doc, dict):
        return {(new_key if k == path[0] else k): v for k, v in doc.items()}
    if not path:
        return doc
    head = path[0]
    if isinstance(doc, dict):
        return {**doc, head: _rename_key(doc[head], path[1:], new_key)}
    copy = list(doc)
    copy[head] = _rename_key(copy[head], path[1:], new_key)
    return copy


@_SETTINGS
@given(data=st.data())
def test_structural_edits(data: st.DataObject) -> None:
    doc: Any = yaml.safe_load(VALID)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        if data.draw(st.booleans()) and path and isinstance(path[-1], str):
            keys = [p[-1] for p in paths if p and isinstance(p[-1], str)]
            doc = _rename_key(doc, path, data.draw(st.sampled_from(keys)))
        else:
            doc = _replace(doc, path, data.draw(_VALUES))
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:  # e.g. a lone surrogate the emitter cannot write: not a suite problem
        return
    assert_loads_or_config_error(text)
    # The same data handed over as a dict goes through the same validation.
    try:
        suite_from_dict(doc, source="fuzz")
    except SuiteConfigError as error:
        assert error.line is None
