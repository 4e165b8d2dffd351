"""The README agrees with action.yml and with the engine: tables, workflow snippets, suite example."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.probes import get_probe_registry

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_FENCE_RE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the first markdown table in ``text``, cells stripped."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    return cells[2:]  # header and delimiter rows


def code(cell: str) -> str:
    match = re.fullmatch(r"`(.*)`", cell)
    assert match, f"expected a code span, got {cell!r}"
    return match.group(1)


def code_blocks(lang: str) -> list[str]:
    return [body for info, body in _FENCE_RE.findall(README) if info == lang]


def test_inputs_table_lists_exactly_the_inputs_of_action_yml_with_their_defaults() -> None:
    rows = table_rows(section("Inputs"))
    documented = {code(name): "" if default == "—" else code(default) for name, default, _ in rows}
    expected = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    assert documented == expected
    assert len(rows) == len(documented)  # no input listed twice


def test_outputs_table_lists_exactly_the_outputs_of_action_yml() -> None:
    names = [code(row[0]) for row in table_rows(section("Outputs"))]
    assert sorted(names) == sorted(ACTION["outputs"])
    assert len(names) == len(set(names))


def test_quick_start_is_exactly_make_demo_and_make_test() -> None:
    blocks = [b for info, b in _FENCE_RE.findall(section("Quick start")) if info == "sh"]
    assert len(blocks) == 1
    assert blocks[0].split("\n")[:-1] == ["make demo", "make test"]


def _action_steps(document: Any) -> list[dict[str, Any]]:
    """Every step in a YAML snippet that uses this action (workflows, jobs or bare step lists)."""
    found: list[dict[str, Any]] = []
    if isinstance(document, dict):
        if str(document.get("uses", "")).startswith("promptcanary/promptcanary-action@"):
            found.append(document)
        for value in document.values():
            found += _action_steps(value)
    elif isinstance(document, list):
        for value in document:
            found += _action_steps(value)
    return found


def _workflow_snippets() -> list[Any]:
    docs = []
    for body in code_blocks("yaml"):
        doc = yaml.safe_load(body)
        if _action_steps(doc):
            docs.append(doc)
    return docs


def test_workflow_snippets_use_only_real_inputs_and_valid_values() -> None:
    snippets = _workflow_snippets()
    assert len(snippets) >= 5  # PR check, schedule, fork pair, artifact mode, probe-modules
    valid_modes = {"run", "post-comment", "merge"}
    for doc in snippets:
        for step in _action_steps(doc):
            inputs = step.get("with") or {}
            assert set(inputs) <= set(ACTION["inputs"]), set(inputs) - set(ACTION["inputs"])
            assert inputs.get("mode", "run") in valid_modes


def test_workflows_ask_for_the_permissions_their_mode_needs() -> None:
    checked: set[str] = set()
    for doc in _workflow_snippets():
        if not isinstance(doc, dict) or "permissions" not in doc:
            continue
        permissions = doc["permissions"]
        steps = _action_steps(doc)
        if any((s.get("with") or {}).get("baseline") == "artifact" for s in steps):
            assert permissions.get("actions") == "read"
            checked.add("artifact")
        if any((s.get("with") or {}).get("issue-on-drift") for s in steps):
            assert permissions.get("issues") == "write"
            checked.add("issue-on-drift")
        if any((s.get("with") or {}).get("mode") == "post-comment" for s in steps):
            assert permissions.get("pull-requests") == "write"
            checked.add("post-comment")
    # The README shows a workflow for each of these modes: each rule above must have run.
    assert checked == {"artifact", "issue-on-drift", "post-comment"}


def test_the_suite_example_loads() -> None:
    examples = [b for b in code_blocks("yaml") if re.search(r"^prompts:", b, re.M)]
    assert examples, "no suite example in the README"
    for text in examples:
        # Dataset paths are relative to the suite: the README's are to the examples folder.
        suite = suite_from_text(text, source=str(ROOT / "examples" / "README.md"))
        assert suite.prompts


def test_probe_table_names_every_built_in_probe() -> None:
    rows = table_rows(section("The suite file").split("Built-in probe types", 1)[1])
    documented = {code(row[0]) for row in rows}
    built_in = {
        probe_id
        for probe_id, cls in get_probe_registry().items()
        if cls.__module__.startswith("promptcanary.core.probes")
    }
    assert documented == built_in


@pytest.mark.parametrize("path", ["examples/canary.yaml", "examples/custom_probes.py"])
def test_linked_example_files_exist(path: str) -> None:
    assert f"]({path})" in README
    assert (ROOT / path).is_file()
