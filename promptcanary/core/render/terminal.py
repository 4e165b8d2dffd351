"""Plain-text rendering of runs and drift reports for a terminal (the CLI and `make demo`).

Model text reaches the terminal (probe details quote it), so everything returned passes through
:func:`terminal_safe`: an ESC in a response must not be able to drive the terminal. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from promptcanary.core.models import CanaryRunResult, DriftReport, ProbeComparison, ProbeResult
from promptcanary.core.render.markdown import sanitize
from promptcanary.core.words import plural

_DETAILS_LIMIT = 160


def terminal_safe(text: str) -> str:
    """``text`` with control characters (ESC, BEL, …) and bidi overrides made visible as U+FFFD."""
    return sanitize(text)


def _short(text: str, limit: int = _DETAILS_LIMIT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _failure_lines(failed: Sequence[ProbeResult]) -> list[str]:
    """One line per failed probe of a prompt: its samples counted, not repeated."""
    groups: dict[tuple[str, str], list[ProbeResult]] = {}
    for r in failed:
        groups.setdefault((r.prompt_id, r.probe_key), []).append(r)
    lines = []
    for (prompt_id, probe_key), results in groups.items():
        mean = sum(r.score for r in results) / len(results)
        times = f" ({plural(len(results), 'sample')})" if len(results) > 1 else ""
        lines.append(
            f"  {prompt_id} / {probe_key}{times}  {mean:.3f}  {_short(results[0].details)}"
        )
    return lines


def format_run(run: CanaryRunResult) -> str:
    """One run as plain text: the scores, then every failed and errored result."""
    score = "–" if run.overall_score is None else f"{run.overall_score:.3f}"
    rate = "–" if run.pass_rate is None else f"{run.pass_rate:.0%}"
    lines = [
        f"{run.suite_name} on {run.provider.model_id}: score {score}, "
        f"pass rate {rate} ({plural(len(run.probe_results), 'result')}, "
        f"{plural(len(run.prompt_ids), 'prompt')}, {run.error_count} errored)"
    ]
    failed = run.failed_probes
    if failed:
        lines.append(f"Failed ({len(failed)}):")
        lines += _failure_lines(failed)
    errored = [r for r in run.llm_responses if r.errored]
    if errored:
        lines.append(f"Errored ({len(errored)}):")
        lines += [f"  {r.prompt_id} (sample {r.sample}): {_short(r.error or '')}" for r in errored]
    return terminal_safe("\n".join(lines))


def _comparison_lines(rows: list[ProbeComparison]) -> list[str]:
    lines = []
    for c in rows:
        lines.append(
            f"  {c.prompt_id} / {c.probe_key}  {c.baseline_score:.3f} → {c.current_score:.3f} "
            f"({c.score_delta:+.3f})"
        )
        if c.current_details:
            lines.append(f"      {_short(c.current_details)}")
    return lines


def format_drift(report: DriftReport, notes: Sequence[str] = ()) -> str:
    """A drift report as plain text for a terminal: summary, regressions first."""
    lines = [report.summary]
    sections: list[tuple[str, list[str]]] = [
        ("Regressions", _comparison_lines(report.regressions)),
        ("Improvements", _comparison_lines(report.improvements)),
        (
            "Inconclusive (undecided at max-samples; not regressions)",
            [
                f"  {c.prompt_id} / {c.probe_key}: {c.current_samples} answers, pass rate "
                f"{(c.baseline_pass_rate or 0):.0%} → {(c.current_pass_rate or 0):.0%}"
                for c in report.inconclusive
            ],
        ),
        (
            "Flaky (the baseline itself varies)",
            [f"  {c.prompt_id} / {c.probe_key}" for c in report.flaky],
        ),
        ("New prompts", [f"  {p}" for p in report.new_prompts]),
        ("Removed prompts", [f"  {p}" for p in report.removed_prompts]),
        ("New probes", [f"  {r.prompt_id} / {r.probe_key}" for r in report.new_probes]),
        ("Removed probes", [f"  {r.prompt_id} / {r.probe_key}" for r in report.removed_probes]),
        (
            "Errored (not counted as regressions)",
            [
                f"  {e.prompt_id} / {e.probe_key} ({e.side}): {_short(e.error)}"
                for e in report.errored
            ],
        ),
        ("Warnings", [f"  ! {w}" for w in report.warnings]),
        ("Notes", [f"  {n}" for n in notes]),
    ]
    for title, body in sections:
        if body:
            count = sum(1 for line in body if not line.startswith("      "))
            lines += ["", f"{title} ({count}):", *body]
    return terminal_safe("\n".join(lines))
