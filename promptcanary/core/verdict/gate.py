"""The merge gate: whether a run (and its comparison) fails under a ``fail-on`` rule.

Shared by the CLI (``compare --fail-on``) and the action (input ``fail-on``).
"""

from __future__ import annotations

from typing import Final

from promptcanary.core.models import CanaryRunResult, DriftReport, DriftSeverity

FAIL_ON = ("regression", "inconclusive", "failure", "never", "low", "medium", "high", "critical")
"""``regression``; ``inconclusive`` (a regression, or a ``samples: auto`` comparison left
undecided at ``max-samples``); ``failure`` (any failed probe); ``never``; or a minimum drift
severity."""
DEFAULT_FAIL_ON: Final = "regression"
DEFAULT_MAX_ERROR_RATE = 0.2
"""Above this share of errored responses a run is untrustworthy: it cannot gate (exit 3)."""


def gate_failed(report: DriftReport | None, run: CanaryRunResult, fail_on: str) -> bool:
    """True when ``fail_on`` fails this run; without a comparison only ``failure`` can fail."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail-on {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    if fail_on == "never":
        return False
    if fail_on == "failure":
        return bool(run.failed_probes)
    if report is None:
        return False
    if fail_on == "regression":
        return report.has_regressions
    if fail_on == "inconclusive":
        return report.has_regressions or bool(report.inconclusive)
    return report.severity.at_least(DriftSeverity(fail_on))


def untrustworthy(run: CanaryRunResult, max_error_rate: float) -> bool:
    """More responses errored than ``max_error_rate`` allows, or no result was scored at all
    (nothing was measured): the run cannot gate (exit 3)."""
    return run.error_rate > max_error_rate or (bool(run.probe_results) and not run.scored)
