"""Which regressions an approval covers, and the comparison the gate judges once they are set aside.

Pure functions over :class:`DriftReport` and :class:`Approval`: the approval itself (who gave it,
for which keys) is found by the caller; :func:`promptcanary.core.verdict.evaluate.decide` applies
it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from promptcanary.core.models import DriftReport, ProbeComparison, RegressionKey


def key_of(drift: DriftReport, comparison: ProbeComparison) -> RegressionKey:
    """The cross-suite, cross-model name of one comparison row of ``drift``."""
    return RegressionKey(
        suite=drift.suite_name,
        model=drift.provider.model_id,
        prompt_id=comparison.prompt_id,
        probe_key=comparison.probe_key,
    )


def regression_keys(reports: Iterable[DriftReport | None]) -> tuple[RegressionKey, ...]:
    """Every regressed key of ``reports``, sorted and once each (what a reviewer approves)."""
    keys = {key_of(r, c) for r in reports if r is not None for c in r.regressions}
    return tuple(sorted(keys, key=RegressionKey.sort_key))


def split_regressions(
    drift: DriftReport, approved: Collection[RegressionKey]
) -> tuple[list[ProbeComparison], list[ProbeComparison]]:
    """``drift``'s regressions as (approved, not approved) by the ``approved`` keys."""
    covered: list[ProbeComparison] = []
    uncovered: list[ProbeComparison] = []
    for comparison in drift.regressions:
        (covered if key_of(drift, comparison) in approved else uncovered).append(comparison)
    return covered, uncovered


def without_approved(drift: DriftReport, approved: Collection[RegressionKey]) -> DriftReport:
    """``drift`` with its approved regressions no longer flagged: the comparison the gate and
    the promotion rule judge (severity is then that of the unapproved regressions alone)."""
    if not approved:
        return drift
    rows = [
        c.model_copy(update={"regression": False})
        if c.regression and key_of(drift, c) in approved
        else c
        for c in drift.comparisons
    ]
    return drift.model_copy(update={"comparisons": rows})
