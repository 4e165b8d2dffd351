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
from typing import TextIO

from pydantic import ValidationError

from promptcanary.cli_compat import UnsupportedFlag, refuse_unsupported, version_line
from promptcanary.core.comparator import DEFAULT_THRESHOLD
from promptcanary.core.config.source import SuiteConfigError
from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import (
    TEMPERATURE_RANGE,
    BaselineSnapshot,
    CanaryRunResult,
    DriftReport,
    slugify,
)
from promptcanary.core.render.terminal import format_drift, format_run, terminal_safe
from promptcanary.core.run.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    RunOptionError,
    RunOptions,
    samples_problem,
)
from promptcanary.core.run.provider import BaseLLMProvider, MissingCredentialsError
from promptcanary.core.sampling.pool import DEFAULT_POOL, MAX_POOL, promote
from promptcanary.core.sampling.sequential import MAX_SAMPLES_CAP
from promptcanary.core.spec import ModelSpec, SuiteSpec, requested_models
from promptcanary.core.stats import DEFAULT_ALPHA
from promptcanary.core.verdict.evaluate import (
    PROMOTION_RULES,
    Evaluation,
    EvaluationPolicy,
    evaluate,
)
from promptcanary.core.verdict.gate import DEFAULT_FAIL_ON, DEFAULT_MAX_ERROR_RATE, FAIL_ON
from promptcanary.storage.base import BaselineFileError

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_UNTRUSTED = 0, 1, 2, 3
DEFAULT_BASELINE_DIR = ".promptcanary/baselines"
_PROBES_CHANGED = (
    "The probes changed between the baseline and this run; pass --config SUITE to re-score "
    "both with the current probes, so probe edits are not reported as drift."
)


class CliError(Exception):
    """A problem the user can fix; ``code`` is the exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


# ── starter suite ───────────────────────────────────────────────────────────────────────────────

STARTER_SUITE = """\
# A starter PromptCanary suite. Run it:   promptcanary run --config {path} --save-baseline
# Every prompt has an explicit `id:` so baselines and recordings (--record / --replay) stay
# comparable when you edit the text. Probe reference: the README's "Suite YAML" section.
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


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    # `init NAME` (PromptCanary 0.2.2) writes the suite into the folder NAME.
    path = Path(args.name) / "canary.yaml" if args.name else Path(args.path)
    if path.exists() and not args.force:
        raise CliError(f"{path} already exists; pass --force to overwrite it")
    atomic_write_text(path, STARTER_SUITE.format(path=path))
    print(f"Wrote {path}. Next: promptcanary run --config {path} --save-baseline", file=out)
    return EXIT_OK


def _import_probe_modules(entries: Sequence[str]) -> None:
    """Import custom probe files or modules so their probes register before the suite loads."""
    from promptcanary.core.probes.plugins import ProbeModuleError, import_probe_modules

    try:
        import_probe_modules(entries, base_dir=Path.cwd(), label="--probe-module")
    except ProbeModuleError as exc:
        raise CliError(str(exc)) from None


def _load_suite(path: str) -> SuiteSpec:
    from promptcanary.core.config.schema import load_suite
    from promptcanary.core.config.source import SuiteFileNotFoundError

    try:
        return load_suite(path)
    except SuiteFileNotFoundError as exc:
        raise CliError(f"{exc}; write a starter suite with `promptcanary init`") from None


def _models(
    args: argparse.Namespace, suite: SuiteSpec, suite_path: Path
) -> list[tuple[ModelSpec, Path]]:
    """The models to run and the folder their relative replay paths resolve against."""
    from promptcanary.providers.factory import REPLAY_PREFIX

    given = [*(args.model or []), *(f"{REPLAY_PREFIX}{r}" for r in args.replay or [])]
    if given:  # paths typed on the command line are relative to the working directory
        return [(m, Path.cwd()) for m in requested_models(given, suite.models)]
    if suite.models:  # paths written in the suite are relative to the suite file
        return [(m, suite_path.parent) for m in suite.models]
    raise CliError(
        f"{suite_path}: no model to run: add `models:` to the suite, or pass --model "
        "(e.g. openai/gpt-4o-mini) or --replay RECORDING.jsonl"
    )


def _per_model(path: str, model: str, several: bool) -> Path:
    """``path`` itself for one model; with several, ``run.json`` → ``run.<model>.json``."""
    target = Path(path)
    return target.with_name(f"{target.stem}.{slugify(model)}{target.suffix}") if several else target


def _run_options(args: argparse.Namespace, target: Path | None) -> RunOptions:
    """The flags that shape a run; unset ones leave the suite's ``defaults:`` in force."""
    low, high = args.min_samples, args.max_samples
    if low is not None and high is not None and low > high:
        raise CliError(f"--min-samples {low} is above --max-samples {high}")
    try:
        return _options_of(args, target)
    except RunOptionError as exc:
        raise CliError(f"--{exc.field.replace('_', '-')} {exc.problem}") from None


def _options_of(args: argparse.Namespace, target: Path | None) -> RunOptions:
    return RunOptions(
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        samples=args.samples,
        min_samples=args.min_samples,
        max_samples=args.max_samples,
        baseline_pool=args.baseline_pool,
        baseline_samples=args.baseline_samples,
        top_up=args.save_baseline,  # the run may become the baseline: top a thin pool up
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
        show_progress=not args.no_progress,
        record=target,
    )


def _run_one(
    args: argparse.Namespace,
    suite: SuiteSpec,
    model: tuple[ModelSpec, BaseLLMProvider],
    several: bool,
    out: TextIO,
) -> Evaluation:
    """Run ``suite`` on one model, write what was asked for; the evaluation of the run."""
    from promptcanary.core.run.runner import run_suite_blocking

    spec, provider = model
    record = _per_model(args.record, spec.model, several) if args.record else None
    baseline = _given_baseline(args)
    run = run_suite_blocking(suite, provider, _run_options(args, record), baseline=baseline)
    print(format_run(run), file=out)
    if args.output_json:
        target = _per_model(args.output_json, spec.model, several)
        atomic_write_text(target, run.model_dump_json(indent=2) + "\n")
        print(f"Wrote the run to {target}", file=out)
    if args.output_md:
        from promptcanary.core.render.report import render_run_markdown

        atomic_write_text(_per_model(args.output_md, spec.model, several), render_run_markdown(run))
    # --save-baseline promotes whatever ran, unless too many responses errored.
    policy = EvaluationPolicy(promotion="always", max_error_rate=args.max_error_rate)
    evaluation = evaluate(baseline, run, suite, policy)
    if evaluation.drift is not None:
        print(format_drift(evaluation.drift), file=out)
    return evaluation


def _given_baseline(args: argparse.Namespace) -> BaselineSnapshot | None:
    """``run --baseline FILE``: the snapshot (and its pool) an adaptive run decides against."""
    from promptcanary.storage.base import snapshot_from_json

    if not args.baseline:
        return None
    return snapshot_from_json(_read(args.baseline, "baseline file"), args.baseline)


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _import_probe_modules(args.probe_module or [])
    suite = _load_suite(args.config)
    from promptcanary.providers.factory import build_providers

    models = _models(args, suite, Path(args.config))
    # Every model is checked (known, key set, recording readable) before the first request.
    providers = build_providers(models)
    untrusted, failed, regressed = [], False, False
    for model in zip([spec for spec, _ in models], providers, strict=True):
        spec = model[0]
        evaluation = _run_one(args, suite, model, len(models) > 1, out)
        run = evaluation.run
        failed = failed or bool(run.failed_probes)
        if args.save_baseline and not evaluation.promotion.allowed:
            # Errored results are never compared: such a baseline would hide every later drift.
            print("Baseline not saved: too many errored responses.", file=out)
        elif args.save_baseline:
            _save_baseline(promote(run, evaluation.baseline, args.baseline_pool), args, out)
        regressed = regressed or bool(evaluation.drift and evaluation.drift.has_regressions)
        if evaluation.untrustworthy:
            untrusted.append(f"{spec.model}: {run.error_count} of {len(run.llm_responses)}")
    if untrusted:
        print(
            terminal_safe(
                "promptcanary: error: untrustworthy run, errored responses above "
                f"--max-error-rate {args.max_error_rate:g}: " + "; ".join(untrusted)
            ),
            file=err,
        )
        return EXIT_UNTRUSTED
    # With --baseline the run is a comparison too: a regression fails it, as `compare` would.
    return EXIT_GATE if regressed or (args.fail_on_failure and failed) else EXIT_OK


def _save_baseline(snapshot: BaselineSnapshot, args: argparse.Namespace, out: TextIO) -> None:
    from promptcanary.storage.file import FileBaselineStore

    saved = FileBaselineStore(args.baseline_dir).save_snapshot(snapshot)
    print(f"Saved baseline {snapshot.snapshot_id[:8]} to {saved}", file=out)


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def load_run(path: str) -> CanaryRunResult:
    """A run written by ``promptcanary run --output-json`` (or an action's ``run.json``)."""
    try:
        return CanaryRunResult.model_validate_json(_read(path, "run file"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise CliError(
            f"{path}: not a PromptCanary run (write one with `promptcanary run --output-json`): "
            f"{where}: {first['msg']}"
        ) from None


def _load_baseline(args: argparse.Namespace, current: CanaryRunResult) -> BaselineSnapshot:
    from promptcanary.storage.base import snapshot_from_json
    from promptcanary.storage.file import FileBaselineStore

    if args.baseline:
        return snapshot_from_json(_read(args.baseline, "baseline file"), args.baseline)
    directory = Path(args.baseline_dir)
    if not directory.is_dir():
        raise CliError(f"baseline directory {directory} does not exist (see --baseline-dir)")
    try:
        return FileBaselineStore(directory).load_latest(
            current.suite_name, current.provider.model_id
        )
    except FileNotFoundError as exc:
        raise CliError(f"{exc} (save one with `promptcanary run --save-baseline`)") from None


def _compare_notes(evaluation: Evaluation, config: str | None) -> list[str]:
    """What was done to score both sides alike, then the evaluation's own notes."""
    notes: list[str] = []
    if evaluation.probes_differ:
        notes.append(_PROBES_CHANGED)
    if evaluation.rescored_baseline:
        notes.append(
            f"Probes changed since the baseline: re-scored {evaluation.rescored_baseline} stored "
            "baseline response(s) with the current probes, so probe edits are not reported as "
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
        _import_probe_modules(args.probe_module or [])
        suite = _load_suite(args.config)
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
        _save_baseline(promote(evaluation.run, evaluation.baseline), args, out)
    if evaluation.untrustworthy:
        # Errored answers are not regressions: "0 regressions" from an outage proves nothing.
        run = evaluation.run
        print(
            f"Untrustworthy run: {run.error_count} of {len(run.llm_responses)} responses "
            f"errored (--max-error-rate {args.max_error_rate:g}); nothing to gate on.",
            file=out,
        )
        return EXIT_UNTRUSTED
    return EXIT_GATE if evaluation.gate_failed else EXIT_OK


def cmd_baselines(args: argparse.Namespace, out: TextIO) -> int:
    from promptcanary.storage.file import FileBaselineStore

    directory = Path(args.baseline_dir)
    if not directory.is_dir():
        print(f"No baselines: {directory} does not exist.", file=out)
        return EXIT_OK
    entries = FileBaselineStore(directory).list_baselines(args.suite, args.model)
    if not entries:
        print(f"No baselines in {directory}.", file=out)
    for e in entries:
        if "error" in e:
            line = f"ERROR     {e['path']}: {e['error']}"
        else:
            line = (
                f"{str(e['snapshot_id'])[:8]}  {e['created_at']}  {e['suite_name']}  "
                f"{e['model_id']}  {e['path']}"
            )
        print(terminal_safe(line), file=out)
    return EXIT_OK


def _html_report(path: str, text: str, drift: bool) -> str:
    """A stored drift.json (with the run.json beside it, as the report folder keeps them) or a
    run file as the explorable HTML page."""
    from promptcanary.cli_compat import is_drift_document
    from promptcanary.core.render.html import HtmlPair, render_html

    report: DriftReport | None = None
    run_path = Path(path)
    if drift or is_drift_document(text):
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
        verdict = f"{len(run.failed_probes)} failed probe result(s), no baseline"
    else:
        verdict = (
            f"{len(report.regressions)} regression(s), {len(report.improvements)} improvement(s)"
        )
    pair = HtmlPair(suite=run.suite_name, model=run.provider.model_id, run=run, drift=report)
    return render_html([pair], verdict=verdict)


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from promptcanary.cli_compat import is_drift_document
    from promptcanary.core.render.report import render_json, render_markdown, render_run_markdown

    path = args.drift or args.input
    text = _read(path, "drift file" if args.drift else "report input")
    if args.format == "html":
        return _write_html(args, _html_report(path, text, bool(args.drift)), out)
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


# ── argument parsing ───────────────────────────────────────────────────────────────────────────


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _temperature(text: str) -> float:
    value = float(text)
    low, high = TEMPERATURE_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text!r} must be between {low:g} and {high:g}")
    return value


def _samples(text: str) -> int | str:
    if text.lower() == "auto":
        return "auto"
    value = _positive_int(text, "auto or an integer ≥ 1")
    if samples_problem(value) is not None:
        raise argparse.ArgumentTypeError(f"{text!r} must be auto or at most {MAX_SAMPLES_CAP}")
    return value


def _sample_count(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_SAMPLES_CAP:
        raise argparse.ArgumentTypeError(f"{text!r} must be at most {MAX_SAMPLES_CAP}")
    return value


def _pool_size(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_POOL:
        raise argparse.ArgumentTypeError(f"{text!r} must be at most {MAX_POOL}")
    return value


def _positive_int(text: str, what: str = "an integer ≥ 1") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promptcanary",
        description="Run canary prompts against LLMs, compare with a baseline, report drift.",
        epilog="Exit codes: 0 ok, 1 gate failed, 2 configuration error, 3 untrustworthy run.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("version", help="print the version")

    init = sub.add_parser("init", help="write a starter suite")
    init.add_argument("name", nargs="?", help="a folder to write canary.yaml into")
    init.add_argument("--path", default="canary.yaml", help="where to write it (canary.yaml)")
    init.add_argument("--force", "-f", action="store_true", help="overwrite an existing file")

    _add_run(sub.add_parser("run", help="run a suite against one or more models"))
    _add_compare(sub.add_parser("compare", help="compare a run with a baseline"))

    lst = sub.add_parser("baselines", help="list stored baselines")
    lst.add_argument("--baseline-dir", "--dir", "-d", default=DEFAULT_BASELINE_DIR)
    lst.add_argument("--suite", "-s")
    lst.add_argument("--model")

    rep = sub.add_parser("report", help="render a drift.json (or a run) as markdown or JSON")
    rep.add_argument("input", nargs="?", metavar="FILE", help="a drift.json or a run file")
    rep.add_argument("--drift", metavar="drift.json")
    rep.add_argument(
        "--format", "-f", choices=("md", "json", "terminal", "markdown", "html"), default="md"
    )
    rep.add_argument("--output", "-o", metavar="F", help="write to F instead of stdout")
    rep.add_argument("--open", action="store_true", help="--format html -o F: open F")
    view = sub.add_parser("view", help="open the latest report.html in a browser")
    view.add_argument("folder", nargs="?", default="promptcanary-report", metavar="DIR")
    view.add_argument("--print", action="store_true", help="print the page's path, open nothing")
    return parser


def _add_run(run: argparse.ArgumentParser) -> None:
    run.add_argument("--config", "-c", default="canary.yaml", help="the suite YAML file")
    run.add_argument(
        "--model", "--provider", "-p", action="append", help="LiteLLM model id (repeatable)"
    )
    run.add_argument("--replay", action="append", metavar="F", help="answer from a recording")
    run.add_argument("--temperature", "-t", type=_temperature)
    run.add_argument("--max-tokens", type=_positive_int)
    run.add_argument("--seed", type=int)
    run.add_argument(
        "--samples", type=_samples, help="answers per prompt: auto (default) or a number"
    )
    run.add_argument("--min-samples", type=_sample_count, help="auto: first answers (3)")
    run.add_argument("--max-samples", type=_sample_count, help="auto: most answers (60)")
    run.add_argument(
        "--baseline-pool", type=_pool_size, default=DEFAULT_POOL, help="auto: runs pooled (20)"
    )
    run.add_argument(
        "--baseline-samples",
        type=_sample_count,
        help="auto: most answers per prompt when building the baseline (from the suite's size)",
    )
    run.add_argument(
        "--baseline", "-b", metavar="FILE", help="decide against this baseline snapshot"
    )
    run.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    run.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per request")
    run.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES)
    run.add_argument("--max-error-rate", type=_fraction, default=DEFAULT_MAX_ERROR_RATE)
    run.add_argument(
        "--save-baseline", "-s", action="store_true", help="store the run as a baseline"
    )
    run.add_argument("--baseline-dir", default=DEFAULT_BASELINE_DIR)
    run.add_argument("--output-json", "-o", metavar="F", help="write the run as JSON")
    run.add_argument("--output-md", metavar="F", help="write the run as markdown")
    run.add_argument("--output-html", metavar="F", help=argparse.SUPPRESS)  # refused, see compat
    run.add_argument("--fail-on-failure", action="store_true", help="exit 1 if any probe failed")
    run.add_argument("--record", metavar="F", help="write the responses as a replay file")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("--probe-module", action="append", help="custom probe file or module")


def _add_compare(cmp: argparse.ArgumentParser) -> None:
    source = cmp.add_mutually_exclusive_group()
    source.add_argument("--baseline", "-b", metavar="FILE", help="a baseline snapshot file")
    source.add_argument("--baseline-dir", default=DEFAULT_BASELINE_DIR, metavar="D")
    cmp.add_argument("--current", metavar="RUN.json", help="the run (required)")
    cmp.add_argument("--config", "-c", help="the suite, to re-score when its probes changed")
    cmp.add_argument("--regression-threshold", type=_fraction, default=DEFAULT_THRESHOLD)
    cmp.add_argument("--improvement-threshold", type=_fraction, default=DEFAULT_THRESHOLD)
    cmp.add_argument("--alpha", type=_fraction, default=DEFAULT_ALPHA)
    cmp.add_argument("--output-md", metavar="F")
    cmp.add_argument("--output-json", metavar="F")
    cmp.add_argument("--fail-on", choices=FAIL_ON, default=DEFAULT_FAIL_ON)
    cmp.add_argument(  # PromptCanary 0.2.2's switch; gating on regressions is our default
        "--fail-on-drift", dest="fail_on", action="store_const", const="regression"
    )
    cmp.add_argument(
        "--update-baseline",
        choices=tuple(PROMOTION_RULES),
        default="never",
        help="save the run as the new baseline: auto (no regression, no error), always, never",
    )
    cmp.add_argument("--max-error-rate", type=_fraction, default=DEFAULT_MAX_ERROR_RATE)
    cmp.add_argument("--probe-module", action="append", help="custom probe file or module")
    cmp.add_argument("--provider", "-p", help=argparse.SUPPRESS)  # refused, see compat
    cmp.add_argument("--output-html", help=argparse.SUPPRESS)
    cmp.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)  # no calls


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
