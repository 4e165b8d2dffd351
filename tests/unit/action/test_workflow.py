"""Tests for workflow commands, step outputs and the job summary (parsed as the runner does)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from promptcanary_action.workflow import Workflow, escape_data, escape_property
from tests.e2e.runner import parse_command_file, parse_workflow_commands


def make_workflow(tmp_path: Path) -> tuple[Workflow, io.StringIO]:
    out = io.StringIO()
    return Workflow(out, tmp_path / "output.txt", tmp_path / "summary.md"), out


def test_escape_data_and_property() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


@pytest.mark.parametrize(
    "value",
    ["", "one line", "two\nlines", "ghadelimiter_x\nEOF\n", "trailing newline\n", "a=b<<c"],
)
def test_set_output_round_trips_through_the_runner_parser(tmp_path: Path, value: str) -> None:
    workflow, _ = make_workflow(tmp_path)
    workflow.set_output("first", "before")
    workflow.set_output("value", value)
    workflow.set_output("last", "after")
    parsed = parse_command_file((tmp_path / "output.txt").read_text(encoding="utf-8"))
    assert parsed == {"first": "before", "value": value, "last": "after"}


def test_set_output_delimiters_are_random(tmp_path: Path) -> None:
    workflow, _ = make_workflow(tmp_path)
    workflow.set_output("a", "x")
    workflow.set_output("b", "x")
    lines = (tmp_path / "output.txt").read_text(encoding="utf-8").splitlines()
    first, second = lines[0].split("<<")[1], lines[3].split("<<")[1]
    assert first.startswith("ghadelimiter_") and first != second


@pytest.mark.parametrize("name", ["", "a\nb", "a=b", "a<<b", " a"])
def test_set_output_rejects_names_the_runner_would_misread(tmp_path: Path, name: str) -> None:
    workflow, _ = make_workflow(tmp_path)
    with pytest.raises(ValueError, match="invalid output name"):
        workflow.set_output(name, "x")


def test_without_command_files_values_are_kept_in_memory() -> None:
    workflow = Workflow(io.StringIO())
    workflow.set_output("x", "1")
    workflow.add_summary("# hi")
    assert workflow.outputs == {"x": "1"}
    assert workflow.summary == ["# hi"]


def test_summary_is_appended(tmp_path: Path) -> None:
    workflow, _ = make_workflow(tmp_path)
    workflow.add_summary("# one")
    workflow.add_summary("two\n")
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == "# one\ntwo\n"


def test_annotations_escape_message_and_properties(tmp_path: Path) -> None:
    workflow, out = make_workflow(tmp_path)
    workflow.error("line1\nline2 100%", title="a: b, c", file="dir/canary.yaml", line=12)
    workflow.warning("w")
    workflow.notice("n", title="t")
    workflow.debug("d\n::error::x")
    commands = parse_workflow_commands(out.getvalue())
    assert [(c.name, c.message) for c in commands] == [
        ("error", "line1\nline2 100%"),
        ("warning", "w"),
        ("notice", "n"),
        ("debug", "d\n::error::x"),
    ]
    assert commands[0].properties == {"title": "a: b, c", "file": "dir/canary.yaml", "line": "12"}
    assert len(out.getvalue().splitlines()) == 4


def test_annotation_properties_hide_control_and_bidi_characters(tmp_path: Path) -> None:
    # A title carries a suite name or model id: an ANSI escape (the log viewer renders colours
    # and "conceal") or a bidi override must not reach the log, as in the message.
    workflow, out = make_workflow(tmp_path)
    workflow.warning("m", title="suite\x1b[8m hidden\u202e on model")
    [command] = parse_workflow_commands(out.getvalue())
    assert command.properties["title"] == "suite\ufffd[8m hidden\ufffd on model"
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()


def test_group_wraps_the_body_even_when_it_raises(tmp_path: Path) -> None:
    workflow, out = make_workflow(tmp_path)
    with pytest.raises(RuntimeError), workflow.group("suite\non model"):
        out.write("inside\n")
        raise RuntimeError("boom")
    assert out.getvalue().splitlines() == ["::group::suite%0Aon model", "inside", "::endgroup::"]


def test_print_untrusted_suspends_workflow_commands(tmp_path: Path) -> None:
    workflow, out = make_workflow(tmp_path)
    workflow.print_untrusted("model says\n::error::pwned\n::add-mask::x\n  ::warning::indented")
    workflow.notice("after")
    text = out.getvalue()
    lines = text.splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) >= 32 and lines[0] != token
    assert f"::{token}::" in lines
    assert lines.index("::error::pwned") < lines.index(f"::{token}::")
    commands = parse_workflow_commands(text)
    assert [(c.name, c.message) for c in commands] == [("notice", "after")]


def test_print_untrusted_tokens_differ_and_hide_control_characters(tmp_path: Path) -> None:
    workflow, out = make_workflow(tmp_path)
    workflow.print_untrusted("a\x00b\u202ec\r::error::x")
    workflow.print_untrusted("second")
    lines = out.getvalue().splitlines()
    assert lines[1] == "a\ufffdb\ufffdc"
    assert lines[2] == "::error::x"
    assert lines[0] != lines[4]
