"""The report folder and the step outputs: written before anything is sent to GitHub.

Layout of ``report-dir``::

    comment.md                 the PR comment exactly as posted (or to post from workflow_run)
    summary.md                 the job summary
    outcome.json               verdict, gate and per-pair figures
    step.json                  the whole outcome (post-comment mode re-renders the comment from it)
    <suite>/<model>/run.json   the full run (responses, scores, provenance)
    <suite>/<model>/drift.json the comparison, when there was a baseline
    <suite>/<model>/snapshot.json  this run as a baseline snapshot (for artifact or path mode)
    report.html                one self-contained page to explore the run (open it in a browser)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.render.html import HtmlPair, ScoreTrend, render_html
from promptcanary.storage import layout
from promptcanary.storage.base import snapshot_to_json
from promptcanary_action.errors import ReportWriteError
from promptcanary_action.outcome import BaselineStatus, PairOutcome, StepOutcome
from promptcanary_action.paths import workspace_relative
from promptcanary_action.trend import build_trend, prompt_trends
from promptcanary_action.workflow import Workflow

STEP_FILE = "step.json"
"""The whole StepOutcome, from which post-comment mode re-renders the comment."""


@dataclass
class ReportFiles:
    directory: Path
    comment: Path
    summary: Path
    snapshots: list[Path] = field(default_factory=list)


def pair_dir(directory: Path, pair: PairOutcome) -> Path:
    """The pair's folder, laid out like the baseline stores (``<suite>/<model>``)."""
    return directory.joinpath(*layout.pair_dir(pair.suite_name, pair.model).split("/"))


def _unique_dir(directory: Path, pair: PairOutcome, used: set[Path]) -> Path:
    """``pair_dir``, or with a hash of the names when an earlier pair has the same slugs
    (ids alike in their first 60 characters, or only in case): never overwrite its results."""
    folder = pair_dir(directory, pair)
    if folder in used:
        digest = hashlib.sha256(f"{pair.suite_name}\0{pair.model}".encode()).hexdigest()[:8]
        folder = folder.with_name(f"{folder.name}-{digest}")
    used.add(folder)
    return folder


def write_reports(outcome: StepOutcome, directory: Path, comment: str, summary: str) -> ReportFiles:
    """Write every report file; returns their paths.

    Each file is written whole or not at all (temporary file, then rename): a full disk leaves
    the files written so far intact and raises :class:`ReportWriteError` naming the folder.
    """
    try:
        return _write_all(outcome, directory, comment, summary)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise ReportWriteError(
            f"cannot write the report folder {directory}: {exc.strerror or exc}{where}; free "
            "disk space on that file system or point the `report-dir` input elsewhere"
        ) from None


def _write_all(outcome: StepOutcome, directory: Path, comment: str, summary: str) -> ReportFiles:
    files = ReportFiles(directory, directory / "comment.md", directory / "summary.md")
    atomic_write_text(files.comment, comment)
    atomic_write_text(files.summary, summary)
    used: set[Path] = set()
    for pair in outcome.pairs:
        folder = _unique_dir(directory, pair, used)
        atomic_write_text(folder / "run.json", pair.run.model_dump_json(indent=2) + "\n")
        if pair.drift is not None:
            atomic_write_text(folder / "drift.json", pair.drift.model_dump_json(indent=2) + "\n")
        snapshot = BaselineSnapshot.of_run(pair.run)
        snap_path = folder / "snapshot.json"
        atomic_write_text(snap_path, snapshot_to_json(snapshot))
        files.snapshots.append(snap_path)
    atomic_write_text(directory / STEP_FILE, outcome.model_dump_json() + "\n")
    atomic_write_text(directory / "report.html", html_report(outcome, outcome.run_url))
    atomic_write_text(
        directory / "outcome.json", json.dumps(outcome_json(outcome), indent=2) + "\n"
    )
    return files


def html_report(outcome: StepOutcome, artifacts_url: str | None = None) -> str:
    """The explorable page of the step: every pair, its baseline's answers and the trends."""
    pairs = [
        HtmlPair(
            suite=p.suite_name,
            model=p.model,
            run=p.run,
            drift=p.drift,
            baseline=p.baseline_run,
            tags=p.prompt_tags,
            prompt_trends=prompt_trends(p.history, p.run),
            usage=p.usage.current if p.usage else None,
        )
        for p in outcome.pairs
    ]
    trends = []
    for suite in dict.fromkeys(p.suite_name for p in outcome.pairs):
        mine = [p for p in outcome.pairs if p.suite_name == suite]
        trend = build_trend(
            suite, {p.model: p.history for p in mine}, {p.model: p.run.overall_score for p in mine}
        )
        if trend is not None:
            trends.append(ScoreTrend(trend.suite_name, trend.labels, dict(trend.series)))
    return render_html(pairs, verdict=outcome.verdict, trends=trends, artifacts_url=artifacts_url)


def outcome_json(outcome: StepOutcome) -> dict[str, object]:
    return {
        "verdict": outcome.verdict,
        "gate_failed": outcome.gate_failed,
        "untrustworthy": outcome.untrustworthy,
        "fail_on": outcome.fail_on,
        "severity": outcome.severity.value,
        "pr_number": outcome.pr_number,
        "sha": outcome.sha,
        "comment_id": outcome.comment_id,
        "warnings": outcome.warnings,
        "pairs": [
            {
                "suite": p.suite_name,
                "suite_file": p.suite_file,
                "model": p.model,
                "overall_score": p.run.overall_score,
                "pass_rate": p.run.pass_rate,
                "baseline_score": p.drift.baseline_score if p.drift else None,
                "regressions": p.regression_count,
                "improvements": p.improvement_count,
                "errors": p.error_count,
                "severity": p.severity.value,
                "baseline_status": p.baseline_status.value,
            }
            for p in outcome.pairs
        ],
    }


_STATUS_PRIORITY = (
    BaselineStatus.UNREACHABLE,
    BaselineStatus.MISSING,
    BaselineStatus.CREATED,
    BaselineStatus.UPDATED,
    BaselineStatus.FOUND,
)


def combined_status(pairs: list[PairOutcome]) -> str:
    """One ``baseline-status`` for the step: the least established state among the pairs."""
    statuses = {p.baseline_status for p in pairs}
    return next((s.value for s in _STATUS_PRIORITY if s in statuses), BaselineStatus.MISSING.value)


def _mean(values: list[float | None]) -> float | None:
    """The mean over the pairs that have a figure (an unscored run has none)."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def set_outputs(
    workflow: Workflow,
    outcome: StepOutcome,
    files: ReportFiles,
    *,
    workspace: Path | None = None,
) -> None:
    """The outputs known before publishing, aggregated over the pairs (worst severity, totals).

    ``comment-url`` and ``check-run-url`` are set by the publisher once GitHub has answered.
    File paths are relative to ``workspace`` (``GITHUB_WORKSPACE``) when they are inside it.
    """
    pairs = outcome.pairs
    current = _mean([p.run.overall_score for p in pairs])
    baseline = _mean([p.drift.baseline_score for p in pairs if p.drift])
    compared = _mean([p.drift.current_score for p in pairs if p.drift])
    delta = None if baseline is None or compared is None else compared - baseline
    values = {
        "overall-score": _fmt(current),
        "baseline-score": _fmt(baseline),
        "score-delta": _fmt(delta),
        "pass-rate": _fmt(_mean([p.run.pass_rate for p in pairs])),
        "regressions": str(outcome.regression_count),
        "improvements": str(outcome.improvement_count),
        "inconclusive": str(outcome.inconclusive_count),
        "errors": str(outcome.error_count),
        "severity": outcome.severity.value,
        "drift-detected": "true" if outcome.drift_detected else "false",
        "baseline-status": combined_status(pairs),
        "report-dir": workspace_relative(files.directory, workspace),
        "snapshot-path": "\n".join(workspace_relative(p, workspace) for p in files.snapshots),
        "comment-file": workspace_relative(files.comment, workspace),
        **usage_outputs(outcome),
        "summary": outcome.verdict,
    }
    for name, value in values.items():
        workflow.set_output(name, value)


def usage_outputs(outcome: StepOutcome) -> dict[str, str]:
    """Latency, tokens and cost over every pair; "" where any pair's figure is unknown."""
    usages = [p.usage.current for p in outcome.pairs if p.usage is not None]
    p95 = [u.latency_p95_ms for u in usages if u.latency_p95_ms is not None]
    costs = [u.cost_usd for u in usages]
    known_costs = [c for c in costs if c is not None]
    return {
        "latency-p95-ms": f"{max(p95):.0f}" if p95 else "",
        "prompt-tokens": str(sum(p.run.token_usage.prompt_tokens for p in outcome.pairs)),
        "completion-tokens": str(sum(p.run.token_usage.completion_tokens for p in outcome.pairs)),
        "cost-usd": f"{sum(known_costs):.6f}" if costs and len(known_costs) == len(costs) else "",
        "usage-findings": str(len(outcome.usage_findings)),
        "served-model-changed": "true" if outcome.served_changes else "false",
    }
