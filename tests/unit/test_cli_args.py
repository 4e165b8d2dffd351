"""The command line's flags: every option explains itself in ``--help``, names its default, and a
value that is not a number is refused naming the flag."""

from __future__ import annotations

import argparse
import re

import pytest

from promptcanary.cli import main
from promptcanary.cli_args import build_parser


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def _options() -> list[tuple[str, argparse.Action]]:
    options = [
        (f"{prog} {'/'.join(action.option_strings) or action.dest}", action)
        for prog, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
    ]
    assert len(options) > 40  # the walk reached every command's options
    return options


def test_every_cli_option_has_help_text() -> None:
    missing = [name for name, action in _options() if not action.help]
    assert missing == []


def test_every_cli_option_with_a_default_shows_it_in_its_help() -> None:
    silent = [
        name
        for name, action in _options()
        if action.help != argparse.SUPPRESS
        and action.default not in (None, False, argparse.SUPPRESS)
        and not isinstance(action, argparse._VersionAction)
        and "%(default)s" not in (action.help or "")
    ]
    assert silent == []


def test_run_help_lists_each_run_flag_with_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for shown in (
        "(default: canary.yaml)",
        "seconds per request (default: 60.0)",
        "requests in flight at once (default: 8)",
        "pooled as the baseline (default: 20)",
        "(default: .promptcanary/baselines)",
    ):
        assert shown in text


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--temperature", "abc"], "--temperature: 'abc' is not a number"),
        (["-t", "abc"], "--temperature: 'abc' is not a number"),
        (["--max-tokens", "1e3"], "--max-tokens: '1e3' is not a whole number"),
        (["--samples", "many"], "--samples: 'many' is not auto or a whole number"),
        (["--timeout", "soon"], "--timeout: 'soon' is not a number"),
        (["--max-error-rate", "half"], "--max-error-rate: 'half' is not a number"),
    ],
)
def test_a_value_that_is_not_a_number_is_refused_naming_the_flag(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *flags]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert not re.search(r"invalid \w+ value", err)
