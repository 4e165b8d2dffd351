"""``promptcanary run``: run a suite on each model, decide against the stored baseline pool, write
what was asked for, and save the run as a baseline with ``--save-baseline``.

Under ``samples: auto`` a run decides against its baseline while it samples. The baseline is the
one the action would take: ``--baseline FILE`` when given, else the newest snapshot of the suite
and the model that answers in ``--baseline-dir``, with the pool it carries (at most
``--baseline-pool`` promoted runs; :func:`promptcanary.core.sampling.sequencer.pooled_baseline`).
A run saved with ``--save-baseline`` carries the pool on (``Evaluation.snapshot``), as the action's
promotion does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from promptcanary.cli_common import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_UNTRUSTED,
    CliError,
    find_baseline,
    import_probe_modules,
    load_suite,
)
from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot, slugify
from promptcanary.core.render.terminal import format_drift, format_run, terminal_safe
from promptcanary.core.run.options import RunOptionError, RunOptions
from promptcanary.core.run.pacing import Pacing
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.spec import ModelSpec, SuiteSpec, requested_models
from promptcanary.core.verdict.evaluate import Evaluation, EvaluationPolicy, evaluate
from promptcanary.core.words import plural

if TYPE_CHECKING:
    from promptcanary.core.run.answer_phase import AnswerService


def flag(field: str) -> str:
    """A run option's flag: ``max_retries`` → ``--max-retries``."""
    return "--" + field.replace("_", "-")


def run_options(args: argparse.Namespace, target: Path | None = None) -> RunOptions:
    """The flags that shape a run, checked by RunOptions (the action's inputs meet the same
    rule); unset ones leave the suite's ``defaults:`` in force."""
    try:
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
    except RunOptionError as exc:
        raise CliError(exc.describe(flag)) from None


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


def _decides_against(baseline: BaselineSnapshot, args: argparse.Namespace) -> str:
    pooled = min(max(1, len(baseline.pool)), args.baseline_pool)
    where = args.baseline or args.baseline_dir
    return (
        f"Baseline {baseline.snapshot_id[:8]} ({baseline.created_at:%Y-%m-%d %H:%M} UTC, "
        f"{where}): a pool of {plural(pooled, 'promoted run')}"
    )


def _run_one(
    args: argparse.Namespace,
    suite: SuiteSpec,
    model: tuple[ModelSpec, BaseLLMProvider],
    several: bool,
    out: TextIO,
    pacing: Pacing,
) -> Evaluation:
    """Run ``suite`` on one model, write what was asked for; the evaluation of the run.
    ``pacing`` is shared by the models of the command: one budget per provider key."""
    from promptcanary.core.run.runner import run_suite_blocking

    spec, provider = model
    record = _per_model(args.record, spec.model, several) if args.record else None
    options = run_options(args, record)
    baseline = find_baseline(args, suite.name, provider.config.model_id)
    if baseline is not None:
        print(terminal_safe(_decides_against(baseline, args)), file=out)
    from promptcanary.providers.factory import services_for

    # The embedding model of semantic_drift: (checked first), then the judge of llm_judge probes.
    services = [*services_for(suite), *_judge_services(suite, Path(args.config).parent, baseline)]
    run = run_suite_blocking(
        suite, provider, options, baseline=baseline, services=services, pacing=pacing
    )
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


def _judge_services(
    suite: SuiteSpec, folder: Path, baseline: BaselineSnapshot | None
) -> list[AnswerService]:
    """The LLM judge the suite names (``llm_judge`` probes, ``judge_checks:``), through LiteLLM."""
    from promptcanary.core.run.judge import judge_services
    from promptcanary.providers.factory import make_provider
    from promptcanary.providers.litellm import cost_usd

    return judge_services(
        suite,
        lambda model, params: make_provider(model, params, base_dir=folder),
        baseline=baseline,
        cost=cost_usd,
    )


def write_report_dir(
    folder: Path, suite: SuiteSpec, evaluations: list[Evaluation], out: TextIO
) -> None:
    """``--report-dir``: each model's run.json (and drift.json when it was compared) in a
    folder of its own, and one report.html for them all, as the action's report folder has."""
    from promptcanary.core.render.html import HtmlPair, render_html

    tags = {p.id: list(p.tags) for p in suite.prompts if p.tags}
    pairs = []
    for evaluation in evaluations:
        run = evaluation.run
        pair_dir = folder / slugify(run.provider.model_id)
        atomic_write_text(pair_dir / "run.json", run.model_dump_json(indent=2) + "\n")
        if evaluation.drift is not None:
            drift = evaluation.drift.model_dump_json(indent=2) + "\n"
            atomic_write_text(pair_dir / "drift.json", drift)
        baseline = evaluation.baseline.run_result if evaluation.baseline is not None else None
        pairs.append(
            HtmlPair(
                suite=run.suite_name,
                model=run.provider.model_id,
                run=run,
                drift=evaluation.drift,
                baseline=baseline,
                tags=tags,
            )
        )
    regressions = sum(len(e.drift.regressions) for e in evaluations if e.drift is not None)
    verdict = f"{plural(regressions, 'regression')} in {plural(len(pairs), 'model run')}"
    atomic_write_text(folder / "report.html", render_html(pairs, verdict=verdict))
    print(terminal_safe(f"Wrote the report to {folder / 'report.html'}"), file=out)


def save_baseline(snapshot: BaselineSnapshot, directory: str, out: TextIO) -> None:
    from promptcanary.storage.file import FileBaselineStore

    saved = FileBaselineStore(directory).save_snapshot(snapshot)
    print(f"Saved baseline {snapshot.snapshot_id[:8]} to {saved}", file=out)


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    run_options(args)  # every flag checked before the suite loads or a model is built
    import_probe_modules(args.probe_module or [])
    suite = load_suite(args.config)
    from promptcanary.providers.factory import build_providers

    models = _models(args, suite, Path(args.config))
    # Every model is checked (known, key set, recording readable) before the first request.
    providers = build_providers(models)
    untrusted, failed, regressed = [], False, False
    pacing, evaluations = Pacing(), []
    for model in zip([spec for spec, _ in models], providers, strict=True):
        spec = model[0]
        evaluation = _run_one(args, suite, model, len(models) > 1, out, pacing)
        evaluations.append(evaluation)
        run = evaluation.run
        failed = failed or bool(run.failed_probes)
        if args.save_baseline and not evaluation.promotion.allowed:
            # Errored results are never compared: such a baseline would hide every later drift.
            print("Baseline not saved: too many errored responses.", file=out)
        elif args.save_baseline:
            save_baseline(evaluation.snapshot(args.baseline_pool), args.baseline_dir, out)
        regressed = regressed or bool(evaluation.drift and evaluation.drift.has_regressions)
        if evaluation.untrustworthy:
            untrusted.append(f"{spec.model}: {run.error_count} of {len(run.llm_responses)}")
    if args.report_dir:
        write_report_dir(Path(args.report_dir), suite, evaluations, out)
    if untrusted:
        print(
            terminal_safe(
                "promptcanary: error: untrustworthy run, errored responses above "
                f"--max-error-rate {args.max_error_rate:g}: " + "; ".join(untrusted)
            ),
            file=err,
        )
        return EXIT_UNTRUSTED
    # Against a baseline the run is a comparison too: a regression fails it, as `compare` would.
    return EXIT_GATE if regressed or (args.fail_on_failure and failed) else EXIT_OK
