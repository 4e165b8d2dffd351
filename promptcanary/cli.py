"""The ``promptcanary`` command line: ``init``, ``run``, ``compare``, ``baselines``, ``report``,
``version`` (and the flags of PromptCanary 0.2.2, see :mod:`promptcanary.cli_compat`).

Exit codes are the action's: 0 ok, 1 the ``--fail-on`` gate failed, 2 configuration or usage
error, 3 untrustworthy run (missing API key, too many errored prompts). ``main()`` holds
the one top-level handler: known errors become one clean line on stderr, never a traceback.

Model text reaches the terminal (probe details quote it), so everything printed passes through
:func:`promptcanary.core.render.terminal.terminal_safe`: an ESC in a response must not drive the
terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from promptcanary.cli_args import build_parser
from promptcanary.cli_common import (
    DEFAULT_BASELINE_DIR,
    EXAMPLES,
    EXIT_GATE,
    EXIT_OK,
    EXIT_UNTRUSTED,
    EXIT_USAGE,
    CliError,
    find_baseline,
    import_probe_modules,
    load_suite,
    read_text,
)
from promptcanary.cli_compat import UnsupportedFlag, refuse_unsupported, version_line
from promptcanary.cli_run import cmd_run, save_baseline
from promptcanary.core.config.source import SuiteConfigError
from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, DriftReport
from promptcanary.core.render.terminal import format_drift, format_run, terminal_safe
from promptcanary.core.run.provider import MissingCredentialsError
from promptcanary.core.verdict.evaluate import (
    PROMOTION_RULES,
    Evaluation,
    EvaluationPolicy,
    evaluate,
)
from promptcanary.core.words import plural
from promptcanary.storage.base import BaselineFileError
from promptcanary.storage.file import FileBaselineStore
from promptcanary.storage.layout import BASELINE_FILE

__all__ = [
    "DEFAULT_BASELINE_DIR",
    "EXIT_GATE",
    "EXIT_OK",
    "EXIT_UNTRUSTED",
    "EXIT_USAGE",
    "CliError",
    "build_parser",
    "latest_report",
    "load_run",
    "main",
]

_PROBES_CHANGED = (
    "The probes changed between the baseline and this run; pass --config SUITE to re-score "
    "both with the current probes, so probe edits are not reported as drift."
)


# ── starter suite ───────────────────────────────────────────────────────────────────────────────

STARTER_SUITE = """\
# A starter PromptCanary suite. Run it:   promptcanary run --config {path} --save-baseline
# Every prompt has an explicit `id:` so baselines and recordings (--record / --replay) stay
# comparable when you edit the text. Keys and probes: the README's section "The suite file",
# https://github.com/promptcanary/promptcanary-action#the-suite-file
name: starter-canaries
description: A first canary suite; replace the prompts with the behaviours your product needs.

models:
  - openai/gpt-4o-mini        # any LiteLLM model id; needs OPENAI_API_KEY in the environment

defaults:
  temperature: 0.0
  max_tokens: 256

probes:
  - type: keyword_presence
    id: no-ai-boilerplate
    forbidden_keywords: ["As an AI language model"]

prompts:
  - id: capital-france
    text: What is the capital of France? Answer with the city name only.
    tags: [factual]
    expected_keywords: [Paris]
    probes:
      - type: factual_consistency
        expected_value: Paris
      - type: expected_keywords

  - id: extract-user
    text: 'Extract as JSON with keys name and age, nothing else: "Ada is 36 years old."'
    tags: [json]
    probes:
      - type: json_validity
      - type: json_schema
        required_keys: [name, age]

  - id: short-answer
    text: In one sentence, what is a unit test?
    probes:
      - type: response_length
        max_chars: 300
      - type: refusal
        expect_refusal: false
"""


# ── commands ────────────────────────────────────────────────────────────────────────────────────


def _starter(name: str) -> str:
    from importlib.resources import files

    return files("promptcanary").joinpath("starters", name).read_text(encoding="utf-8")


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    # `init NAME` (PromptCanary 0.2.2) writes the suite into the folder NAME.
    path = Path(args.name) / "canary.yaml" if args.name else Path(args.path)
    extra = {path.parent / rel: _starter(Path(rel).name) for rel in EXAMPLES.get(args.example, ())}
    for target in [path, *extra]:
        if target.exists() and not args.force:
            raise CliError(f"{target} already exists; pass --force to overwrite it")
    text = _starter(f"{args.example}.yaml") if args.example else STARTER_SUITE
    for target, content in extra.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, content)
    atomic_write_text(path, text.replace("{path}", str(path)))
    print(f"Wrote {path}. Next: promptcanary run --config {path} --save-baseline", file=out)
    return EXIT_OK


def load_run(path: str) -> CanaryRunResult:
    """A run written by ``promptcanary run --output-json`` (or an action's ``run.json``)."""
    try:
        return CanaryRunResult.model_validate_json(read_text(path, "run file"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise CliError(
            f"{path}: not a PromptCanary run (write one with `promptcanary run --output-json`): "
            f"{where}: {first['msg']}"
        ) from None


def _load_baseline(args: argparse.Namespace, current: CanaryRunResult) -> BaselineSnapshot:
    suite, model = current.suite_name, current.provider.model_id
    baseline = find_baseline(args, suite, model)
    if baseline is None:
        raise CliError(
            f"no baseline of {suite!r} on {model!r} in {args.baseline_dir} (see --baseline-dir; "
            "save one with `promptcanary run --save-baseline`)"
        )
    return baseline


def _compare_notes(evaluation: Evaluation, config: str | None) -> list[str]:
    """What was done to score both sides alike, then the evaluation's own notes."""
    notes: list[str] = []
    if evaluation.probes_differ:
        notes.append(_PROBES_CHANGED)
    if evaluation.rescored_baseline:
        notes.append(
            f"Probes changed since the baseline: re-scored "
            f"{plural(evaluation.rescored_baseline, 'stored baseline response')} "
            "with the current probes, so probe edits are not reported as "
            "model drift."
        )
    if evaluation.rescored_current:
        notes.append(f"Re-scored the current run with the probes of {config}.")
    return [*notes, *evaluation.notes]


def _compare_policy(args: argparse.Namespace) -> EvaluationPolicy:
    return EvaluationPolicy(
        fail_on=args.fail_on,
        regression_threshold=args.regression_threshold,
        improvement_threshold=args.improvement_threshold,
        alpha=args.alpha,
        promotion=PROMOTION_RULES[args.update_baseline],
        max_error_rate=args.max_error_rate,
    )


def cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    from promptcanary.core.render.report import render_json, render_markdown

    if args.baseline and args.update_baseline != "never":
        raise CliError("--update-baseline saves into --baseline-dir; it cannot go with --baseline")
    current = load_run(args.current)
    baseline = _load_baseline(args, current)
    suite = None
    if args.config:
        import_probe_modules(args.probe_module or [])
        suite = load_suite(args.config)
    try:
        evaluation = evaluate(baseline, current, suite, _compare_policy(args))
    except ValueError as exc:  # different suites
        raise CliError(str(exc)) from None
    report = evaluation.drift
    assert report is not None  # a baseline was given
    print(format_drift(report, _compare_notes(evaluation, args.config)), file=out)
    if args.output_md:
        atomic_write_text(Path(args.output_md), render_markdown(report, evaluation.run))
    if args.output_json:
        atomic_write_text(Path(args.output_json), render_json(report) + "\n")
    if args.update_baseline != "never" and evaluation.promotion.allowed:
        save_baseline(evaluation.snapshot(), args.baseline_dir, out)
    if evaluation.untrustworthy:
        # Errored answers are not regressions: "0 regressions" from an outage proves nothing.
        run = evaluation.run
        print(
            f"Untrustworthy run: {run.error_count} of "
            f"{plural(len(run.llm_responses), 'response')} errored "
            f"(--max-error-rate {args.max_error_rate:g}); nothing to gate on.",
            file=out,
        )
        return EXIT_UNTRUSTED
    return EXIT_GATE if evaluation.gate_failed else EXIT_OK


def cmd_baselines(args: argparse.Namespace, out: TextIO) -> int:
    directory = Path(args.baseline_dir)
    if not directory.is_dir():
        print(f"No baselines: {directory} does not exist.", file=out)
        return EXIT_OK
    store = FileBaselineStore(directory)
    entries = store.list_baselines(args.suite, args.model)
    actions = [e for e in map(_layout_entry, _layout_files(directory)) if _wanted(e, args)]
    unnamed = _unnamed_files(store)
    if not entries and not actions and not unnamed:
        print(f"No baselines in {directory}.", file=out)
    for e in [*entries, *actions]:
        if "error" in e:
            line = f"ERROR     {e['path']}: {e['error']}"
        else:
            line = (
                f"{str(e['snapshot_id'])[:8]}  {e['created_at']}  {e['suite_name']}  "
                f"{e['model_id']}  {e['path']}"
            )
        print(terminal_safe(line), file=out)
    for path in unnamed:
        print(terminal_safe(f"UNNAMED   {path}: {_UNNAMED}"), file=out)
    return EXIT_OK


_UNNAMED = (
    "not named SUITE__MODEL__TIME_ID.json (nor SUITE/MODEL/baseline.json, the action's), so "
    "`run` and `compare` never take it as the newest baseline; pass it as --baseline FILE"
)


def _layout_files(directory: Path) -> list[Path]:
    """The action's ``baseline: path`` files: ``<suite>/<model>/baseline.json``."""
    return sorted(p for p in directory.glob(f"*/*/{BASELINE_FILE}") if p.is_file())


def _layout_entry(path: Path) -> dict[str, Any]:
    from promptcanary.storage.base import snapshot_from_json

    try:
        snapshot = snapshot_from_json(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, BaselineFileError) as exc:
        return {"path": str(path), "error": f"unreadable baseline file: {exc}"}
    return {
        "path": str(path),
        "snapshot_id": snapshot.snapshot_id,
        "suite_name": snapshot.suite_name,
        "model_id": snapshot.provider.model_id,
        "created_at": snapshot.created_at.isoformat(),
    }


def _wanted(entry: dict[str, Any], args: argparse.Namespace) -> bool:
    """An entry of the ``--suite`` and ``--model`` asked for (an unreadable one always is)."""
    return "error" in entry or (
        args.suite in (None, entry["suite_name"]) and args.model in (None, entry["model_id"])
    )


def _unnamed_files(store: FileBaselineStore) -> list[Path]:
    """Files in the baseline folder that no rule names (renamed by hand, copied in): listed
    with the reason, never skipped."""
    named = {Path(e["path"]) for e in store.list_baselines()}
    named.update(_layout_files(store.directory))
    return sorted(p for p in store.directory.rglob("*.json") if p.is_file() and p not in named)


def _html_report(args: argparse.Namespace, path: str, text: str, out: TextIO) -> str:
    """A stored drift.json (with the run.json beside it, as the report folder keeps them, and
    its baseline from the store) or a run file as the explorable HTML page."""
    from promptcanary.cli_compat import is_drift_document
    from promptcanary.cli_report import SnapshotMismatchError, stored_baseline
    from promptcanary.core.render.html import HtmlPair, render_html

    report: DriftReport | None = None
    run_path = Path(path)
    if args.drift or is_drift_document(text):
        try:
            report = DriftReport.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise CliError(f"{path}: not a PromptCanary drift report: {first['msg']}") from None
        run_path = run_path.with_name("run.json")
        if not run_path.is_file():
            raise CliError(
                f"{path}: the HTML report needs the run beside it: {run_path} is missing"
            )
    run = load_run(str(run_path))
    if report is None:
        verdict = f"{plural(len(run.failed_probes), 'failed probe result')}, no baseline"
        pair = HtmlPair(suite=run.suite_name, model=run.provider.model_id, run=run)
        return render_html([pair], verdict=verdict)
    verdict = (
        f"{plural(len(report.regressions), 'regression')}, "
        f"{plural(len(report.improvements), 'improvement')}"
    )
    try:
        found = stored_baseline(report, baseline_file=args.baseline, baseline_dir=args.baseline_dir)
    except SnapshotMismatchError as exc:
        raise CliError(str(exc)) from None
    if args.output:  # the page goes to a file: say here too what it says
        for note in found.notes:
            print(terminal_safe(note), file=out)
    pair = HtmlPair(
        suite=run.suite_name,
        model=run.provider.model_id,
        run=run,
        drift=report,
        baseline=found.run,
        notes=found.notes,
    )
    return render_html([pair], verdict=verdict)


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from promptcanary.cli_compat import is_drift_document
    from promptcanary.core.render.report import render_json, render_markdown, render_run_markdown

    path = args.drift or args.input
    text = read_text(path, "drift file" if args.drift else "report input")
    if args.format == "html":
        return _write_html(args, _html_report(args, path, text, out), out)
    if args.drift or is_drift_document(text):
        try:
            report = DriftReport.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise CliError(f"{path}: not a PromptCanary drift report: {first['msg']}") from None
        renderers = {"md": render_markdown, "json": render_json, "terminal": format_drift}
        rendered = renderers[args.format](report)
    else:  # a run file (PromptCanary 0.2.2's `report` took either)
        run = load_run(path)
        rendered = {
            "md": render_run_markdown,
            "json": lambda r: r.model_dump_json(indent=2),
            "terminal": format_run,
        }[args.format](run)
    if args.output:
        atomic_write_text(Path(args.output), rendered + "\n")
        return EXIT_OK
    print(terminal_safe(rendered), file=out)
    return EXIT_OK


def _write_html(args: argparse.Namespace, page: str, out: TextIO) -> int:
    if not args.output:
        out.write(page)
        return EXIT_OK
    target = Path(args.output)
    atomic_write_text(target, page)
    if args.open:
        import webbrowser

        webbrowser.open(target.resolve().as_uri())
    return EXIT_OK


def latest_report(folder: Path) -> Path:
    """``folder/report.html``, else the newest report.html under ``folder``."""
    if (folder / "report.html").is_file():
        return folder / "report.html"
    found = sorted(folder.rglob("report.html"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise CliError(
            f"{folder}: no report.html here; run the suite first (the action and `make demo` "
            "write one into the report folder) or pass the folder: promptcanary view DIR"
        )
    return found[-1]


def cmd_view(args: argparse.Namespace, out: TextIO) -> int:
    page = latest_report(Path(args.folder)).resolve()
    if args.print:
        print(terminal_safe(str(page)), file=out)
        return EXIT_OK
    import webbrowser

    if not webbrowser.open(page.as_uri()):
        raise CliError(f"no browser to open {page}; open it yourself or pass --print")
    return EXIT_OK


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        refuse_unsupported(args)
    except UnsupportedFlag as exc:
        raise CliError(str(exc)) from None
    if args.command == "version":
        print(version_line(), file=out)
        return EXIT_OK
    if args.command == "report" and args.format == "markdown":
        args.format = "md"
    if args.command == "init":
        return cmd_init(args, out)
    if args.command == "run":
        return cmd_run(args, out, err)
    if args.command == "compare":
        return cmd_compare(args, out)
    if args.command == "baselines":
        return cmd_baselines(args, out)
    if args.command == "view":
        return cmd_view(args, out)
    return cmd_report(args, out)


EXIT_SIGPIPE = 141  # what a shell reports for a writer ended by SIGPIPE (128 + 13)


def _closed_stdout() -> int:
    """End quietly with 141 after the reader closed stdout, like ``cat`` or ``yes``."""
    import os

    # Point stdout at /dev/null so the interpreter's final flush does not fail a second time.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the command, map known failures to exit codes."""
    out, err = sys.stdout, sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a bad flag (2, message already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    from promptcanary.providers.errors import ModelConfigError
    from promptcanary.providers.replay import ReplayFileError

    try:
        return _dispatch(args, out, err)
    except CliError as exc:
        code, message = exc.code, str(exc)
    except (SuiteConfigError, BaselineFileError, ReplayFileError, ModelConfigError) as exc:
        code, message = EXIT_USAGE, str(exc)
    except MissingCredentialsError as exc:
        code, message = EXIT_UNTRUSTED, str(exc)
    except BrokenPipeError:  # `promptcanary report … | head`: the reader has what it wanted
        return _closed_stdout()
    except ValidationError as exc:  # e.g. a model entry's temperature outside [0, 2]
        first = exc.errors()[0]
        code, message = (
            EXIT_USAGE,
            f"{exc.title}: {'.'.join(map(str, first['loc']))}: {first['msg']}",
        )
    except OSError as exc:  # e.g. an output file in a folder we may not write
        code, message = EXIT_USAGE, f"{exc.filename or ''}: {exc.strerror or exc}"
    except KeyboardInterrupt:
        code, message = 130, "interrupted"
    print(f"promptcanary: error: {terminal_safe(message)}", file=err)
    return code
