"""The ``promptcanary`` command line's flags: every option with its help and its default.

The flags only *parse* (a number is a number); the run options' bounds are
:class:`promptcanary.core.run.options.RunOptions`'s, the one rule the action's inputs meet too,
and the CLI shows a :class:`~promptcanary.core.run.options.RunOptionError` as its flag.
"""

from __future__ import annotations

import argparse
import re
from typing import NoReturn

from promptcanary.cli_common import DEFAULT_BASELINE_DIR, EXAMPLES
from promptcanary.cli_compat import version_line
from promptcanary.core.comparator import DEFAULT_THRESHOLD
from promptcanary.core.run.options import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.sampling.sequential import MAX_SAMPLES, MIN_SAMPLES
from promptcanary.core.stats import DEFAULT_ALPHA
from promptcanary.core.verdict.evaluate import PROMOTION_RULES
from promptcanary.core.verdict.gate import DEFAULT_FAIL_ON, DEFAULT_MAX_ERROR_RATE, FAIL_ON

# argparse says "argument --temperature/-t: …"; the flag as the user typed it reads better.
_ARGUMENT_RE = re.compile(r"^argument (-[^/:\s]+)(?:/-[^:\s]+)*: ")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors begin with the flag at fault: ``--temperature: …``."""

    def error(self, message: str) -> NoReturn:
        super().error(_ARGUMENT_RE.sub(r"\1: ", message))


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def samples(text: str) -> int | str:
    if text.lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not auto or a whole number") from None


def fraction(text: str) -> float:
    value = number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="promptcanary",
        description="Run canary prompts against LLMs, compare with a baseline, report drift.",
        epilog="Exit codes: 0 ok, 1 gate failed, 2 configuration error, 3 untrustworthy run.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("version", help="print the version")
    _add_init(sub.add_parser("init", help="write a starter suite"))
    _add_run(sub.add_parser("run", help="run a suite against one or more models"))
    _add_compare(sub.add_parser("compare", help="compare a run with a baseline"))
    _add_baselines(sub.add_parser("baselines", help="list stored baselines"))
    _add_report(sub.add_parser("report", help="render a drift.json (or a run) as md, JSON, HTML"))
    view = sub.add_parser("view", help="open the latest report.html in a browser")
    view.add_argument(
        "folder", nargs="?", default="promptcanary-report", metavar="DIR",
        help="the report folder, or a folder above it (default: %(default)s)",
    )  # fmt: skip
    view.add_argument("--print", action="store_true", help="print the page's path, open nothing")
    return parser


def _add_init(init: argparse.ArgumentParser) -> None:
    init.add_argument("name", nargs="?", help="a folder to write canary.yaml into")
    init.add_argument(
        "--path", default="canary.yaml", help="where to write it (default: %(default)s)"
    )
    init.add_argument("--force", "-f", action="store_true", help="overwrite an existing file")
    init.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        help="a starter of another shape: a conversation with a tool result, or a template "
        "over a CSV dataset (written next to the suite); default: the plain starter",
    )


def _add_run(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--config", "-c", default="canary.yaml", help="the suite (default: %(default)s)"
    )
    run.add_argument(
        "--model", "--provider", "-p", action="append", metavar="MODEL",
        help="LiteLLM model id, e.g. openai/gpt-4o-mini (repeatable; default: the suite's models)",
    )  # fmt: skip
    run.add_argument(
        "--replay", action="append", metavar="F", help="answer from a recording (repeatable)"
    )
    run.add_argument(
        "--temperature", "-t", type=number, help="0 to 2 (default: the suite's, else 0)"
    )
    run.add_argument(
        "--max-tokens", type=whole_number, metavar="N",
        help="longest answer in tokens (default: the suite's, else 1024)",
    )  # fmt: skip
    run.add_argument(
        "--seed", type=whole_number, help="sampling seed, where the provider takes one "
        "(default: the suite's, else 42)",
    )  # fmt: skip
    _add_sampling(run)
    run.add_argument(
        "--concurrency", type=whole_number, default=DEFAULT_CONCURRENCY, metavar="N",
        help="requests in flight at once (default: %(default)s)",
    )  # fmt: skip
    run.add_argument(
        "--timeout", type=number, default=DEFAULT_TIMEOUT, metavar="S",
        help="seconds per request (default: %(default)s)",
    )  # fmt: skip
    run.add_argument(
        "--max-retries", type=whole_number, default=DEFAULT_MAX_RETRIES, metavar="N",
        help="retries of a transient error: 429, 5xx, timeout (default: %(default)s)",
    )  # fmt: skip
    _max_error_rate(run)
    run.add_argument(
        "--save-baseline", "-s", action="store_true",
        help="store the run as the newest baseline in --baseline-dir",
    )  # fmt: skip
    run.add_argument(
        "--baseline-dir", default=DEFAULT_BASELINE_DIR, metavar="D",
        help="where baselines are read and saved (default: %(default)s)",
    )  # fmt: skip
    run.add_argument("--output-json", "-o", metavar="F", help="write the run as JSON")
    run.add_argument("--output-md", metavar="F", help="write the run as markdown")
    run.add_argument(
        "--report-dir", metavar="DIR",
        help="write each model's run.json and drift.json, and report.html (open it with "
        "`promptcanary view DIR`) into DIR (default: none)",
    )  # fmt: skip
    run.add_argument("--output-html", metavar="F", help=argparse.SUPPRESS)  # refused, see compat
    run.add_argument("--fail-on-failure", action="store_true", help="exit 1 if any probe failed")
    run.add_argument("--record", metavar="F", help="write the answers as a replay file")
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    _probe_module(run)


def _add_sampling(run: argparse.ArgumentParser) -> None:
    """``samples`` and what ``samples: auto`` decides against."""
    run.add_argument(
        "--samples", type=samples, metavar="N|auto",
        help="answers per prompt: a number, or auto (default: the suite's, else auto)",
    )  # fmt: skip
    run.add_argument(
        "--min-samples", type=whole_number, metavar="N",
        help=f"auto: answers every prompt gets first (default: {MIN_SAMPLES})",
    )  # fmt: skip
    run.add_argument(
        "--max-samples", type=whole_number, metavar="N",
        help=f"auto: most answers a prompt gets (default: {MAX_SAMPLES})",
    )  # fmt: skip
    run.add_argument(
        "--baseline-pool", type=whole_number, default=DEFAULT_POOL, metavar="N",
        help="auto: promoted runs pooled as the baseline (default: %(default)s)",
    )  # fmt: skip
    run.add_argument(
        "--baseline-samples", type=whole_number, metavar="N",
        help="auto, with --save-baseline or no baseline: most answers per prompt while building "
        "the baseline (default: derived from the suite's size; docs/statistics.md)",
    )  # fmt: skip
    run.add_argument(
        "--baseline", "-b", metavar="FILE",
        help="decide against this baseline snapshot (default: the newest in --baseline-dir "
        "for the suite and model)",
    )  # fmt: skip


def _max_error_rate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-error-rate", type=fraction, default=DEFAULT_MAX_ERROR_RATE, metavar="R",
        help="share of errored answers (0 to 1) above which the run is untrustworthy, exit 3 "
        "(default: %(default)s)",
    )  # fmt: skip


def _probe_module(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--probe-module", action="append", metavar="FILE_OR_MODULE",
        help="custom probe file or module to import first (repeatable)",
    )  # fmt: skip


def _add_compare(cmp: argparse.ArgumentParser) -> None:
    source = cmp.add_mutually_exclusive_group()
    source.add_argument("--baseline", "-b", metavar="FILE", help="a baseline snapshot file")
    source.add_argument(
        "--baseline-dir", default=DEFAULT_BASELINE_DIR, metavar="D",
        help="take the newest baseline of the run's suite and model here (default: %(default)s)",
    )  # fmt: skip
    cmp.add_argument("--current", metavar="RUN.json", help="the run (required)")
    cmp.add_argument("--config", "-c", help="the suite, to re-score when its probes changed")
    for which in ("regression", "improvement"):
        cmp.add_argument(
            f"--{which}-threshold", type=fraction, default=DEFAULT_THRESHOLD, metavar="T",
            help=f"smallest score change that counts as a {which} (default: %(default)s)",
        )  # fmt: skip
    cmp.add_argument(
        "--alpha", type=fraction, default=DEFAULT_ALPHA, metavar="A",
        help="significance level of a regression (default: %(default)s)",
    )  # fmt: skip
    cmp.add_argument("--output-md", metavar="F", help="write the drift report as markdown")
    cmp.add_argument("--output-json", metavar="F", help="write the drift report as JSON")
    cmp.add_argument(
        "--fail-on", choices=FAIL_ON, default=DEFAULT_FAIL_ON,
        help="what fails the gate, exit 1 (default: %(default)s)",
    )  # fmt: skip
    cmp.add_argument(  # PromptCanary 0.2.2's switch; gating on regressions is our default
        "--fail-on-drift", dest="fail_on", action="store_const", const="regression",
        help="the same as --fail-on regression (PromptCanary 0.2.2's flag)",
    )  # fmt: skip
    cmp.add_argument(
        "--update-baseline", choices=tuple(PROMOTION_RULES), default="never",
        help="save the run as the new baseline: auto (no regression, no error), always, never "
        "(default: %(default)s)",
    )  # fmt: skip
    _max_error_rate(cmp)
    _probe_module(cmp)
    cmp.add_argument("--provider", "-p", help=argparse.SUPPRESS)  # refused, see compat
    cmp.add_argument("--output-html", help=argparse.SUPPRESS)
    cmp.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)  # no calls


def _add_baselines(lst: argparse.ArgumentParser) -> None:
    lst.add_argument(
        "--baseline-dir", "--dir", "-d", default=DEFAULT_BASELINE_DIR, metavar="D",
        help="the baseline folder (default: %(default)s)",
    )  # fmt: skip
    lst.add_argument("--suite", "-s", help="only this suite's baselines")
    lst.add_argument("--model", help="only this model's baselines")


def _add_report(rep: argparse.ArgumentParser) -> None:
    rep.add_argument("input", nargs="?", metavar="FILE", help="a drift.json or a run file")
    rep.add_argument("--drift", metavar="drift.json", help="the drift report to render")
    rep.add_argument(
        "--format", "-f", choices=("md", "json", "terminal", "markdown", "html"), default="md",
        help="the output format (default: %(default)s; html needs run.json beside drift.json)",
    )  # fmt: skip
    rep.add_argument("--output", "-o", metavar="F", help="write to F instead of stdout")
    rep.add_argument("--open", action="store_true", help="--format html -o F: open F")
    stored = rep.add_mutually_exclusive_group()
    stored.add_argument(
        "--baseline", "-b", metavar="FILE", help="--format html: the snapshot drift.json names"
    )
    stored.add_argument(
        "--baseline-dir",
        default=DEFAULT_BASELINE_DIR,
        metavar="D",
        help="--format html: where to find the snapshot drift.json names (default: %(default)s)",
    )
