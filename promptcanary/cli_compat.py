"""What the command line does for command lines written for PromptCanary 0.2.2.

Its flags that have a counterpart here are aliases in :func:`promptcanary.cli.build_parser`
(``--provider`` is ``--model``, ``-b`` is ``--baseline``, …). This module holds the rest: the
flags this engine does not support are refused with an error naming what to use instead, and
``report`` renders a run file as well as a drift file, as 0.2.2's did.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from promptcanary import __version__

NO_HTML = (
    "HTML is written by `promptcanary report --format html -o report.html FILE`; use --output-md "
    "for markdown here"
)


class UnsupportedFlag(Exception):
    """A PromptCanary 0.2.2 flag with no counterpart here; the message says what to use."""


def refuse_unsupported(args: argparse.Namespace) -> None:
    """Raise :class:`UnsupportedFlag` for the 0.2.2 flags this engine cannot honour."""
    if getattr(args, "output_html", None):
        raise UnsupportedFlag(f"--output-html: {NO_HTML}")
    if args.command == "compare" and args.provider:
        raise UnsupportedFlag(
            "compare --provider (a fresh run) is two steps here: `promptcanary run --config "
            f"SUITE --model {args.provider} --output-json run.json`, then "
            "`promptcanary compare --current run.json`"
        )
    if args.command == "compare" and not args.current:
        raise UnsupportedFlag(
            "compare needs --current RUN.json (write one with `promptcanary run --output-json`)"
        )
    if args.command == "report":
        if args.open and args.format != "html":
            raise UnsupportedFlag("report --open opens an HTML report: add --format html")
        if bool(args.input) == bool(args.drift):
            raise UnsupportedFlag("report needs one file: `report FILE` or `report --drift FILE`")


def is_drift_document(text: str) -> bool:
    """True for a drift report, False for a run (0.2.2's ``report`` took either)."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return True  # let the drift parser report the JSON error with its usual message
    return not isinstance(data, dict) or "comparisons" in data


def version_line() -> str:
    return f"promptcanary {__version__}"
