"""Suites shaped like production traffic: conversations, templates over inline rows and
dataset files; ids that survive reordering; probe parameters per row; every bad input."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from promptcanary.core.config import datasets
from promptcanary.core.config.schema import SuiteConfigError, load_suite, suite_from_text
from promptcanary.core.models import LLMResponse
from promptcanary.core.run.scoring import score
from promptcanary.core.spec import SuiteSpec
from tests.unit.core.config.test_schema import write

TOOL_TRACE = """
name: agent
probes: [{type: json_validity}]
prompts:
  - id: weather-after-tool
    messages:
      - {role: system, content: You are a travel agent.}
      - {role: user, content: "What is the weather in Paris?"}
      - role: assistant
        content: null
        tool_calls:
          - {id: call_1, type: function, function: {name: get_weather, arguments: '{"city": "Paris"}'}}
      - {role: tool, tool_call_id: call_1, content: '{"temp_c": 31}'}
"""


def load(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> SuiteSpec:
    for name, content in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content, encoding="utf-8")
    return load_suite(write(tmp_path, text))


def load_error(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> SuiteConfigError:
    with pytest.raises(SuiteConfigError) as info:
        load(tmp_path, text, files)
    return info.value


def _csv(rows: list[dict[str, Any]]) -> str:
    header = list(rows[0])
    lines = [",".join(header)] + [",".join(str(r[h]) for h in header) for r in rows]
    return "\n".join(lines) + "\n"


# ── conversations ────────────────────────────────────────────────────────────


def test_a_pasted_tool_trace_loads_as_the_conversation(tmp_path: Path) -> None:
    suite = load(tmp_path, TOOL_TRACE)
    (prompt,) = suite.prompts
    assert prompt.id == "weather-after-tool"
    assert prompt.system_prompt == "You are a travel agent."
    assert prompt.messages is not None
    assert [m.role for m in prompt.messages] == ["user", "assistant", "tool"]
    assert prompt.messages[1].tool_calls[0].arguments == '{"city": "Paris"}'  # type: ignore[index]
    assert suite.prompt_lines == {"weather-after-tool": 4}


@pytest.mark.parametrize(
    ("turns", "message", "line"),
    [
        (
            "      - {role: user, content: hi}\n      - {role: assistant, content: hello}\n",
            "the last turn is a assistant turn",
            6,
        ),
        (
            "      - {role: user, content: hi}\n      - {role: tool, tool_call_id: c9, content: x}\n",
            "turn 2 (tool) answers no call: tool_call_id 'c9'",
            6,
        ),
        ("      - {role: user, contnet: hi}\n", "unknown key 'contnet'", 5),
        ("      - {role: wizard, content: hi}\n", "'role'", 5),
    ],
)
def test_a_conversation_no_model_can_answer_names_its_line_and_fix(
    tmp_path: Path, turns: str, message: str, line: int
) -> None:
    text = "name: s\nprobes: [{type: json_validity}]\nprompts:\n  - messages:\n" + turns
    error = load_error(tmp_path, text)
    assert message in error.message
    assert error.line == line


def test_text_and_messages_together_are_refused(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        name: s
        probes: [{type: json_validity}]
        prompts:
          - text: hi
            messages: [{role: user, content: hi}]
        """,
    )
    assert "give `text` or `messages` (a conversation), not both" in error.message
    assert error.line == 4


# ── templates over inline rows ───────────────────────────────────────────────

INLINE = """
name: cities
probes: [{type: json_validity}]
prompts:
  - id: capital
    text: "What country is {{ city }} the capital of?"
    expected_keywords: ["{{ country }}"]
    tags: [geo]
    row_key: city
    vars:
      - {city: Paris, country: France, tags: "europe, big"}
      - {city: Canberra, country: Australia}
    probes:
      - type: keyword_presence
        required_keywords: ["{{ country }}"]
"""


def test_each_inline_row_is_one_prompt_with_its_own_id_text_tags_and_line(tmp_path: Path) -> None:
    suite = load(tmp_path, INLINE)
    paris, canberra = suite.prompts
    assert (paris.id, canberra.id) == ("capital.paris", "capital.canberra")
    assert paris.text == "What country is Paris the capital of?"
    assert paris.expected_keywords == ["France"]
    assert paris.tags == ["geo", "europe", "big"]
    assert canberra.tags == ["geo"]
    assert paris.metadata["vars"]["country"] == "France"
    assert suite.prompt_lines == {"capital.paris": 10, "capital.canberra": 11}
    assert suite.prompt_rows == {}  # inline rows point into the suite itself


def test_probe_parameters_are_rendered_per_row_and_keyed_by_them(tmp_path: Path) -> None:
    suite = load(tmp_path, INLINE)
    paris, canberra = suite.prompts
    (own_paris,) = [b for b in suite.bindings_for(paris) if b.prompt_id]
    (own_canberra,) = [b for b in suite.bindings_for(canberra) if b.prompt_id]
    assert own_paris.probe.params()["required_keywords"] == ["France"]
    assert own_canberra.probe.params()["required_keywords"] == ["Australia"]
    assert own_paris.key != own_canberra.key  # the rendered parameters are in the key
    assert own_paris.line == 13  # the template's probe entry
    answer = LLMResponse(prompt_id=paris.id, provider_model_id="m", content="It is France.")
    results = {r.probe_key: r.passed for r in score(suite, paris, answer)}
    assert results[own_paris.key] is True
    wrong = answer.model_copy(update={"prompt_id": canberra.id})
    assert {r.probe_key: r.passed for r in score(suite, canberra, wrong)}[own_canberra.key] is False


def test_a_lone_placeholder_keeps_the_row_value_type(tmp_path: Path) -> None:
    rows = [{"order": "A1", "total": 42}, {"order": "B2", "total": 7.5}]
    suite = load(
        tmp_path,
        """
        name: orders
        prompts:
          - id: total
            text: "Order {{ order }}: reply with JSON {\\"total\\": ...}"
            dataset: orders.jsonl
            probes:
              - type: json_path
                assertions: [{path: $.total, equals: "{{ total }}"}, {path: $.id, equals: "{{ order }} x"}]
        """,
        {"orders.jsonl": "\n".join(json.dumps(r) for r in rows) + "\n"},
    )
    first, second = suite.prompts
    (binding,) = [b for b in suite.bindings_for(first) if b.prompt_id]
    assert binding.probe.params()["assertions"] == [
        {"path": "$.total", "equals": 42},
        {"path": "$.id", "equals": "A1 x"},
    ]
    (binding,) = [b for b in suite.bindings_for(second) if b.prompt_id]
    assert binding.probe.params()["assertions"][0]["equals"] == 7.5


def test_a_conversation_template_renders_every_turn(tmp_path: Path) -> None:
    suite = load(
        tmp_path,
        """
        name: support
        probes: [{type: json_validity}]
        prompts:
          - id: late-order
            messages:
              - {role: user, content: "My order {{ order }} is late."}
              - {role: assistant, content: "Sorry! Which address?"}
              - {role: user, content: "{{ address }}"}
            vars: [{order: A-1, address: 1 Main St}]
        """,
    )
    (prompt,) = suite.prompts
    assert [m.content for m in prompt.messages or []] == [
        "My order A-1 is late.",
        "Sorry! Which address?",
        "1 Main St",
    ]


# ── identity ─────────────────────────────────────────────────────────────────

DATASET_SUITE = """
name: mails
probes: [{type: json_validity}]
prompts:
  - id: classify
    text: "Classify this e-mail: {{ body }}"
    dataset: data/mails.csv
"""


def _ids(tmp_path: Path, rows: list[dict[str, Any]]) -> dict[str, str]:
    suite = load(tmp_path, DATASET_SUITE, {"data/mails.csv": _csv(rows)})
    return {p.text: p.id for p in suite.prompts}


def test_reordering_rows_or_adding_one_keeps_every_other_id(tmp_path: Path) -> None:
    rows = [{"body": f"mail {n}"} for n in range(5)]
    before = _ids(tmp_path, rows)
    assert len(set(before.values())) == 5
    assert _ids(tmp_path, list(reversed(rows))) == before
    grown = _ids(tmp_path, [*rows[:2], {"body": "new mail"}, *rows[2:]])
    assert {k: v for k, v in grown.items() if k in before} == before
    assert len(grown) == 6


def test_row_key_ids_survive_an_edited_row(tmp_path: Path) -> None:
    text = DATASET_SUITE.replace(
        "dataset: data/mails.csv", "dataset: data/mails.csv\n    row_key: case"
    )
    rows = [{"case": "c-1", "body": "hello"}, {"case": "c-2", "body": "bye"}]
    first = load(tmp_path, text, {"data/mails.csv": _csv(rows)})
    rows[0]["body"] = "hello again"
    second = load(tmp_path, text, {"data/mails.csv": _csv(rows)})
    assert (
        [p.id for p in first.prompts]
        == [p.id for p in second.prompts]
        == [
            "classify.c-1",
            "classify.c-2",
        ]
    )
    assert first.prompt_hashes["classify.c-1"] != second.prompt_hashes["classify.c-1"]
    assert first.prompt_hashes["classify.c-2"] == second.prompt_hashes["classify.c-2"]


def test_dataset_rows_know_their_file_and_line(tmp_path: Path) -> None:
    csv_text = 'body\n"first,\nmulti-line"\n\nsecond\n'
    suite = load(tmp_path, DATASET_SUITE, {"data/mails.csv": csv_text})
    rows = {p.text.removeprefix("Classify this e-mail: "): p.id for p in suite.prompts}
    assert suite.prompt_rows[rows["first,\nmulti-line"]] == ("data/mails.csv", 2)
    assert suite.prompt_rows[rows["second"]] == ("data/mails.csv", 5)
    assert suite.prompt_lines[rows["second"]] == 4  # the template's line in the suite
    assert suite.prompts[0].metadata["dataset_row"] == "data/mails.csv#L2"


def test_limit_and_sample_choose_the_same_rows_every_time(tmp_path: Path) -> None:
    text = DATASET_SUITE.replace(
        "dataset: data/mails.csv", "dataset: {path: data/mails.csv, limit: 40, sample: 10}"
    )
    rows = [{"body": f"mail {n}"} for n in range(60)]
    first = load(tmp_path, text, {"data/mails.csv": _csv(rows)})
    again = load(tmp_path, text, {"data/mails.csv": _csv(rows)})
    chosen = [p.text for p in first.prompts]
    assert chosen == [p.text for p in again.prompts]
    assert len(chosen) == 10
    numbers = [int(t.rsplit(" ", 1)[1]) for t in chosen]
    assert numbers == sorted(numbers) and max(numbers) < 40  # file order, within the limit
    assert numbers != list(range(10))  # a sample, not the first rows


def test_a_text_suite_reads_datasets_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rows.jsonl").write_text('{"body": "hi"}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    suite = suite_from_text(dedent(DATASET_SUITE).replace("data/mails.csv", "rows.jsonl"))
    assert [p.text for p in suite.prompts] == ["Classify this e-mail: hi"]


# ── bad input ────────────────────────────────────────────────────────────────


def test_a_row_without_a_variable_names_file_line_and_variable(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        DATASET_SUITE.replace("{{ body }}", "{{ body }} from {{ sender }}"),
        {"data/mails.csv": "body\nhello\n"},
    )
    assert error.file == str(tmp_path / "data" / "mails.csv")
    assert error.line == 2
    assert "no variable 'sender'" in error.message
    assert "template 'classify'" in error.message and "canary.yaml:4" in error.message


def test_an_inline_row_without_a_variable_points_at_the_row(tmp_path: Path) -> None:
    error = load_error(
        tmp_path, INLINE.replace("{city: Canberra, country: Australia}", "{city: Rome}")
    )
    assert error.line == 11
    assert "no variable 'country'" in error.message


@pytest.mark.parametrize(
    ("name", "content", "line", "message"),
    [
        ("data/mails.csv", 'body\n"ok"\n"unclosed\n', 3, "malformed CSV"),
        ("data/mails.csv", "body,extra\nhi\n", 2, "line 2 has 1 fields, the header has 2"),
        ("data/mails.csv", "body,body\nx,y\n", 1, "appears twice"),
        ("data/mails.csv", "", 1, "the CSV file is empty"),
        ("data/mails.jsonl", '{"body": "a"}\n{"body": \n', 2, "line 2 is not valid JSON"),
        ("data/mails.jsonl", '{"body": "a"}\n\n["b"]\n', 3, "line 3 is not a JSON object"),
    ],
)
def test_a_malformed_dataset_line_is_named(
    tmp_path: Path, name: str, content: str, line: int, message: str
) -> None:
    text = DATASET_SUITE.replace("data/mails.csv", name)
    error = load_error(tmp_path, text, {name: content})
    assert error.file == str(tmp_path / name)
    assert error.line == line
    assert message in error.message


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        ("/etc/passwd.csv", "is absolute"),
        ("../outside.csv", "leaves the suite's folder"),
        ("data/mails.txt", "neither CSV nor JSON Lines"),
        ("data/missing.csv", "does not exist"),
    ],
)
def test_a_dataset_path_that_cannot_be_used_is_refused(
    tmp_path: Path, dataset: str, message: str
) -> None:
    error = load_error(
        tmp_path, DATASET_SUITE.replace("data/mails.csv", dataset), {"data/mails.txt": "x"}
    )
    assert message in error.message


def test_a_dataset_over_the_caps_is_an_error_not_a_huge_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(datasets, "MAX_DATASET_ROWS", 3)
    rows = {"data/mails.csv": _csv([{"body": f"m{n}"} for n in range(4)])}
    error = load_error(tmp_path, DATASET_SUITE, rows)
    assert "4 rows is over the cap of 3" in error.message
    assert (
        len(
            load(
                tmp_path,
                DATASET_SUITE.replace("data/mails.csv", "{path: data/mails.csv, limit: 3}"),
                rows,
            ).prompts
        )
        == 3
    )
    monkeypatch.setattr(datasets, "MAX_DATASET_BYTES", 10)
    error = load_error(tmp_path, DATASET_SUITE, rows)
    assert "over the cap of 10" in error.message


def test_repeated_rows_are_named_by_their_lines(tmp_path: Path) -> None:
    error = load_error(tmp_path, DATASET_SUITE, {"data/mails.csv": "body\nsame\nother\nsame\n"})
    assert error.line == 4
    assert "rows on lines 2 and 4 give the same prompt id" in error.message


def test_a_row_whose_key_is_empty_is_refused(tmp_path: Path) -> None:
    text = DATASET_SUITE.replace(
        "dataset: data/mails.csv", "dataset: data/mails.csv\n    row_key: case"
    )
    error = load_error(tmp_path, text, {"data/mails.csv": "case,body\nc1,hi\n,there\n"})
    assert error.line == 3
    assert "no value in its row_key column 'case'" in error.message


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("    vars: [{body: x}]\n", "as `vars` or as a `dataset`, not both"),
        ("    dataset: {path: data/mails.csv, limt: 3}\n", "unknown key 'limt'"),
    ],
)
def test_conflicting_or_misspelt_template_keys_are_refused(
    tmp_path: Path, extra: str, message: str
) -> None:
    text = dedent(DATASET_SUITE).replace("    dataset: data/mails.csv\n", "") + extra
    if "vars" in extra:
        text += "    dataset: data/mails.csv\n"
    error = load_error(tmp_path, text, {"data/mails.csv": "body\nhi\n"})
    assert message in error.message


def test_row_key_without_rows_is_refused(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        "name: s\nprobes: [{type: json_validity}]\nprompts:\n  - {text: hi, row_key: id}\n",
    )
    assert "`row_key` names a column" in error.message


def test_a_template_syntax_error_points_at_the_prompt(tmp_path: Path) -> None:
    error = load_error(tmp_path, INLINE.replace("{{ city }} the", "{{ city the"))
    assert "template syntax error" in error.message
    assert error.line == 4


def test_a_sandboxed_template_cannot_reach_python_internals(tmp_path: Path) -> None:
    error = load_error(
        tmp_path, INLINE.replace("{{ city }} the", "{{ city.__class__.__mro__ }} the")
    )
    assert "SecurityError" in error.message or "unsafe" in error.message


def test_text_without_rows_is_sent_as_written(tmp_path: Path) -> None:
    suite = load(
        tmp_path, "name: s\nprobes: [{type: json_validity}]\nprompts:\n  - text: 'Use {{ x }}'\n"
    )
    assert suite.prompts[0].text == "Use {{ x }}"


def test_a_conversation_suite_renders_back_to_yaml_that_loads_the_same(tmp_path: Path) -> None:
    from promptcanary.core.config.schema import suite_to_yaml

    suite = load(tmp_path, TOOL_TRACE)
    unnamed = load(
        tmp_path, TOOL_TRACE.replace("  - id: weather-after-tool\n    messages:", "  - messages:")
    )
    for original in (suite, unnamed):
        again = suite_from_text(suite_to_yaml(original))
        assert again.prompts == original.prompts
        assert again.prompt_hashes == original.prompt_hashes


def test_a_probe_sees_the_conversation_and_checks_the_answer_against_the_tool_result(
    tmp_path: Path,
) -> None:
    from promptcanary.core.models import CanaryPrompt, ProbeCategory, ProbeResult
    from promptcanary.core.probes.base import BaseProbe
    from promptcanary.core.probes.registry import ProbeRegistry

    class UsesToolResult(BaseProbe):
        probe_id = "uses_tool_result"
        category = ProbeCategory.TOOL_USE

        def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            result = json.loads(next(m.content for m in prompt.messages or [] if m.role == "tool"))
            passed = str(result["temp_c"]) in response.content
            return self._make_result(prompt.id, passed=passed, score=float(passed))

    registry = ProbeRegistry()
    registry.register(UsesToolResult)
    text = TOOL_TRACE.replace(
        "probes: [{type: json_validity}]", "probes: [{type: uses_tool_result}]"
    )
    suite = load_suite(write(tmp_path, text), registry=registry)
    (prompt,) = suite.prompts
    said = {
        content: [
            r.passed
            for r in score(
                suite,
                prompt,
                LLMResponse(prompt_id=prompt.id, provider_model_id="m", content=content),
            )
        ]
        for content in ("It is 31 °C.", "It is 12 °C.")
    }
    assert said == {"It is 31 °C.": [True], "It is 12 °C.": [False]}
