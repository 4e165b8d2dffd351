"""compare(): a pure function from (baseline snapshot, current run) to a DriftReport.

Results are matched by ``(prompt_id, probe_key)``. With one sample a side the spec's threshold
rule decides; with several samples a side a drop must also be statistically significant after a
Benjamini–Hochberg correction over every repeated-sample comparison of the report; a
``samples: auto`` run is judged by its sequential procedure against the pooled baseline
(:mod:`promptcanary.core.sampling.sequencer`). Prompts that
appear on one side only, probes added or removed, and results that errored are reported in their
own lists and never count as regressions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from promptcanary.core import stats
from promptcanary.core.models import (
    AdaptiveSampling,
    BaselineSnapshot,
    CanaryRunResult,
    DriftReport,
    ErroredResult,
    ProbeComparison,
    ProbeResult,
    ResultRef,
)
from promptcanary.core.sampling.sequencer import (
    RunDecisions,
    comparison_fields,
    decide_run,
    settle_hint,
)
from promptcanary.core.sampling.sequential import Verdict
from promptcanary.core.semantic_rows import fixed_meaning_rows, meaning_rows

DEFAULT_THRESHOLD = 0.05
"""The smallest score change that is a regression (or an improvement) unless the thresholds
say otherwise."""
_EPS = 1e-9  # so that 1.0 → 0.95 counts as a drop of 0.05 despite float rounding

Key = tuple[str, str]


def _group(results: list[ProbeResult]) -> dict[Key, list[ProbeResult]]:
    groups: dict[Key, list[ProbeResult]] = defaultdict(list)
    for r in results:
        groups[(r.prompt_id, r.probe_key)].append(r)
    return groups


def _prompt_ids(run: CanaryRunResult) -> list[str]:
    ids = run.prompt_ids or list(dict.fromkeys(r.prompt_id for r in run.probe_results))
    return ids


@dataclass
class _Side:
    scores: list[float]
    passes: list[bool]
    first: ProbeResult
    failing: ProbeResult | None = None
    """The first failed result: a row with a failure shows why an answer failed (a judge's
    reason), not the first answer's details, which may be a pass."""

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return sum(self.scores) / self.n

    @property
    def pass_rate(self) -> float:
        return sum(self.passes) / self.n

    @property
    def passed(self) -> bool:
        return self.passes[0] if self.n == 1 else self.pass_rate >= 0.5


def _side(results: list[ProbeResult]) -> _Side | None:
    scored = [r for r in results if not r.errored]
    if not scored:
        return None
    failing = next((r for r in scored if not r.passed), None)
    return _Side([r.score for r in scored], [r.passed for r in scored], scored[0], failing)


def _error_text(results: list[ProbeResult]) -> str:
    return next((r.details for r in results if r.errored), "")


def _threshold_verdict(
    b: _Side, c: _Side, regression_threshold: float, improvement_threshold: float
) -> tuple[bool, bool]:
    """The spec's single-sample rule: a regression is a failing result that dropped enough."""
    delta = c.mean - b.mean
    regression = not c.passed and delta <= -regression_threshold + _EPS
    improvement = c.passed and delta >= improvement_threshold - _EPS
    return regression, improvement


def _provenance_warnings(baseline: BaselineSnapshot, current: CanaryRunResult) -> list[str]:
    warnings: list[str] = []
    b, c = baseline.provider, current.provider
    if b.model_id != c.model_id:
        warnings.append(
            f"The baseline was recorded with model {b.model_id!r} but this run used "
            f"{c.model_id!r}: differences may come from the model change, not from drift."
        )
    for name in ("temperature", "max_tokens", "seed"):
        bv, cv = getattr(b, name), getattr(c, name)
        if bv != cv:
            warnings.append(f"Parameter {name} changed since the baseline: {bv!r} → {cv!r}.")
    bs, cs = baseline.run_result.provenance.samples, current.provenance.samples
    if bs != cs and current.provenance.adaptive is None:
        warnings.append(f"Samples per prompt changed since the baseline: {bs} → {cs}.")
    before, after = baseline.run_result.provenance.prompt_hashes, current.provenance.prompt_hashes
    edited = [pid for pid, digest in after.items() if pid in before and before[pid] != digest]
    if edited:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        warnings.append(
            f"{len(edited)} prompt(s) were edited since the baseline ({shown}): what the model "
            "was asked changed, so their differences may come from the edit, not from drift."
        )
    return warnings


@dataclass
class _Matching:
    """Both runs' results matched by ``(prompt_id, probe_key)``, and what could not be matched."""

    base_prompts: list[str]
    cur_prompts: list[str]
    pairs: list[tuple[Key, _Side, _Side]] = field(default_factory=list)
    new_probes: list[ResultRef] = field(default_factory=list)
    removed_probes: list[ResultRef] = field(default_factory=list)
    errored: list[ErroredResult] = field(default_factory=list)


def _ordered_keys(groups: list[dict[Key, list[ProbeResult]]], prompts: list[str]) -> list[Key]:
    """Every key, in the current run's prompt order (the first position of a prompt counts)."""
    order: dict[str, int] = {}
    for pid in prompts:
        order.setdefault(pid, len(order))
    keys = {key for group in groups for key in group}
    return sorted(keys, key=lambda k: (order.get(k[0], 0), k))


def _errored_side(side: str, key: Key, results: list[ProbeResult]) -> ErroredResult:
    return ErroredResult(prompt_id=key[0], probe_key=key[1], side=side, error=_error_text(results))


def _match(base_run: CanaryRunResult, current: CanaryRunResult) -> _Matching:
    base_groups, cur_groups = _group(base_run.probe_results), _group(current.probe_results)
    found = _Matching(_prompt_ids(base_run), _prompt_ids(current))
    both = set(found.base_prompts) & set(found.cur_prompts)
    for key in _ordered_keys([base_groups, cur_groups], found.cur_prompts + found.base_prompts):
        if key[0] not in both:
            continue  # whole prompt new or removed: listed once in the report
        b_results, c_results = base_groups.get(key), cur_groups.get(key)
        if b_results is None:
            found.new_probes.append(ResultRef(prompt_id=key[0], probe_key=key[1]))
            continue
        if c_results is None:
            found.removed_probes.append(ResultRef(prompt_id=key[0], probe_key=key[1]))
            continue
        b, c = _side(b_results), _side(c_results)
        if b is None:
            found.errored.append(_errored_side("baseline", key, b_results))
        if c is None:
            found.errored.append(_errored_side("current", key, c_results))
        if b is not None and c is not None:
            found.pairs.append((key, b, c))
    return found


def _snapshots(
    baseline: BaselineSnapshot | Sequence[BaselineSnapshot], current: CanaryRunResult
) -> list[BaselineSnapshot]:
    """The baseline snapshots, newest first; none, or one of another suite, is a ValueError."""
    snapshots = [baseline] if isinstance(baseline, BaselineSnapshot) else list(baseline)
    if not snapshots:
        raise ValueError("compare() needs a baseline snapshot, or a non-empty list of them")
    if any(s.suite_name != current.suite_name for s in snapshots):
        raise ValueError(
            f"Suite name mismatch: baseline is for '{snapshots[0].suite_name}' "
            f"but current run is for '{current.suite_name}'. "
            "Cannot compare results from different suites."
        )
    return snapshots


def _sampled_against_a_baseline(current: CanaryRunResult) -> AdaptiveSampling | None:
    """The sequential procedure of a run that sampled against a baseline, else None.

    Only such a run made sequential decisions. One run without a baseline and compared later
    (``run`` then ``compare``) is judged by the documented fixed-sample rules on its answers.
    """
    record = current.provenance.adaptive
    return None if record is None or record.pool_runs == 0 else record


def compare(
    baseline: BaselineSnapshot | Sequence[BaselineSnapshot],
    current: CanaryRunResult,
    *,
    regression_threshold: float = DEFAULT_THRESHOLD,
    improvement_threshold: float = DEFAULT_THRESHOLD,
    alpha: float = stats.DEFAULT_ALPHA,
    pool_size: int | None = None,
) -> DriftReport:
    """Compare a current run against a saved baseline snapshot (or a pool of them).

    A ``samples: auto`` run that sampled against a baseline is judged by its sequential procedure
    against the pool (the snapshot's stored entries, or the snapshots given newest first), at most
    ``pool_size`` runs (default: as many as it decided against); any other run by the fixed-sample
    rules against the newest snapshot.

    Args:
        baseline: Saved :class:`BaselineSnapshot`, or a list of them (newest first).
        current: Fresh :class:`CanaryRunResult` from the same suite.
        regression_threshold: Minimum score drop (Δ) to declare a regression.
        improvement_threshold: Minimum score gain (Δ) to declare an improvement.
        alpha: Significance level (false-discovery rate) for repeated-sample comparisons.
    Raises:
        ValueError: If suite names do not match (guards against comparing incompatible suites).
    """
    snapshots = _snapshots(baseline, current)
    found = _match((baseline := snapshots[0]).run_result, current)
    warnings = _provenance_warnings(baseline, current)
    thresholds = _Thresholds(regression_threshold, improvement_threshold, alpha)
    record = _sampled_against_a_baseline(current)
    # Sampled against a pool: its sequential decisions only (no fixed-sample rule or warning).
    fixed_warnings = warnings if record is None else []
    comparisons, statistical = _fixed_sample_comparisons(found.pairs, thresholds, fixed_warnings)
    pool_runs = 1
    if record is None:
        comparisons += _fixed_meaning_rows(snapshots, current, found, thresholds.alpha, comparisons)
    else:
        report = (comparisons, warnings)
        comparisons, pool_runs = _sequential(snapshots, current, report, pool_size, found)
        statistical, alpha = True, record.alpha
    base_set, cur_set = set(found.base_prompts), set(found.cur_prompts)
    return DriftReport(
        suite_name=current.suite_name,
        provider=current.provider,
        baseline_provider=baseline.provider,
        baseline_snapshot_id=baseline.snapshot_id,
        baseline_created_at=baseline.created_at,
        current_run_id=current.run_id,
        comparisons=comparisons,
        new_prompts=[p for p in found.cur_prompts if p not in base_set],
        removed_prompts=[p for p in found.base_prompts if p not in cur_set],
        new_probes=found.new_probes,
        removed_probes=found.removed_probes,
        errored=found.errored,
        warnings=warnings,
        statistical=statistical,
        alpha=alpha if statistical else None,
        adaptive=record,
        baseline_pool_runs=pool_runs,
    )


def _fixed_meaning_rows(
    snapshots: list[BaselineSnapshot],
    current: CanaryRunResult,
    found: _Matching,
    alpha: float,
    rows: list[ProbeComparison],
) -> list[ProbeComparison]:
    """The meaning rows of a ``samples: N`` run (one look at its answers); none without
    ``semantic_drift:``. Prompts whose pool holds no vector yet join the new probes."""
    tested = sum(1 for row in rows if row.p_value is not None)
    meaning, no_pool = fixed_meaning_rows(snapshots, current, alpha, tested)
    found.new_probes += no_pool
    return meaning


def _meaning_rows(
    decided: RunDecisions, baseline: BaselineSnapshot, current: CanaryRunResult, found: _Matching
) -> list[ProbeComparison]:
    """The meaning rows; prompts whose pool holds no vector yet join the new probes."""
    if decided.meaning is None:
        return []
    rows, no_pool = meaning_rows(decided.meaning, decided.decisions, baseline, current)
    found.new_probes += no_pool
    return rows


def _sequential(
    snapshots: list[BaselineSnapshot],
    current: CanaryRunResult,
    report: tuple[list[ProbeComparison], list[str]],
    pool_size: int | None,
    found: _Matching,
) -> tuple[list[ProbeComparison], int]:
    """The rows of a run sampled against a pool, decided by its sequential procedure (then its
    meaning rows, ``semantic_drift:``), and the pooled runs; inconclusive rows add a warning
    saying what would settle them."""
    rows, warnings = report
    record = current.provenance.adaptive
    assert record is not None
    decided = decide_run(snapshots, pool_size or record.pool_runs, current)
    if decided is None:  # never: the run recorded the procedure it sampled by
        return rows, 1
    rows = _with_sequential_decisions(rows, decided)
    warnings.extend(_inconclusive_notes(rows))
    warnings.extend(_one_run_note(rows, decided.pooled.runs))
    return rows + _meaning_rows(decided, snapshots[0], current, found), decided.pooled.runs


def _with_sequential_decisions(
    rows: list[ProbeComparison], decided: RunDecisions
) -> list[ProbeComparison]:
    """Rows of an adaptive run with the sequential decisions, counts and pooled baseline means.

    A row without a decision (its prompt was edited since every pooled run, so nothing pooled
    matches it) is inconclusive: nothing tested it, and the edit's warning says why.
    """
    out: list[ProbeComparison] = []
    for row in rows:
        decision = decided.decisions.get((row.prompt_id, row.probe_key))
        if decision is None:
            out.append(row.model_copy(update={
                "verdict": "inconclusive", "regression": False, "improvement": False,
                "p_value": None, "p_adjusted": None,
                "settle": "no pooled answer of this prompt as it is worded today",
            }))  # fmt: skip
            continue
        update = comparison_fields(decision)
        if decision.verdict is Verdict.UNDECIDED:
            update["settle"] = settle_hint(decision, len(decided.decisions), decided.policy)
        pool = decided.pooled.prompts.get(row.prompt_id)
        summary = pool.results.get(row.probe_key) if pool else None
        if summary is not None and summary.mean is not None:
            update["baseline_score"] = summary.mean
            update["score_delta"] = row.current_score - summary.mean
            update["flaky"] = 0 < summary.passes < summary.n
        out.append(row.model_copy(update=update))
    return out


def _inconclusive_notes(rows: list[ProbeComparison]) -> list[str]:
    """One warning per reason that left comparisons inconclusive, with what would settle them."""
    reasons: dict[str, list[str]] = {}
    for row in rows:
        if row.inconclusive and row.settle:
            reasons.setdefault(row.settle.split(":")[0], []).append(row.settle)
    return [
        f"{len(texts)} comparison(s) inconclusive: {texts[0]}"
        + (f" (and {len(texts) - 1} more alike)" if len(texts) > 1 else "")
        + "."
        for texts in reasons.values()
    ]


def _one_run_note(rows: list[ProbeComparison], pooled_runs: int) -> list[str]:
    """A regression of a probe that also failed in a pool of one run may be that day's variation:
    one run cannot show how much a pass rate moves between runs (docs/statistics.md)."""
    flaky = [row for row in rows if row.regression and row.flaky]
    if pooled_runs != 1 or not flaky:
        return []
    return [
        f"{len(flaky)} regression(s) of probes that also failed in the baseline are measured "
        "against a pool of one run: how much a pass rate varies from run to run cannot be "
        "measured yet, so a model that varies a lot between runs can show such a drop without "
        "drifting (about 1 pull request in 10 at logit sd 1.0); from the second promoted run "
        "on, the spread is measured and widens the comparison."
    ]


@dataclass(frozen=True)
class _Thresholds:
    regression: float
    improvement: float
    alpha: float


@dataclass(frozen=True)
class _Significance:
    """Repeated-sample tests by pair index, with BH-adjusted p-values in both directions."""

    tests: dict[int, stats.SampleTest]
    worse: dict[int, float]
    better: dict[int, float]


def _adjusted(
    repeated: list[int], pvalues: list[float], min_pvalues: list[float], alpha: float
) -> dict[int, float]:
    """BH over the testable hypotheses only; the others get ``p_adjusted = 1``."""
    keep = stats.testable(min_pvalues, alpha)
    family = [i for i, k in zip(repeated, keep, strict=True) if k]
    bh = stats.benjamini_hochberg([p for p, k in zip(pvalues, keep, strict=True) if k])
    result = dict.fromkeys(repeated, 1.0)
    result.update(zip(family, bh, strict=True))
    return result


def _significance(pairs: list[tuple[Key, _Side, _Side]], alpha: float) -> _Significance:
    repeated = [i for i, (_, b, c) in enumerate(pairs) if b.n >= 2 and c.n >= 2]
    tests = {
        i: stats.test_samples(
            pairs[i][1].scores, pairs[i][1].passes, pairs[i][2].scores, pairs[i][2].passes
        )
        for i in repeated
    }
    worse = _adjusted(
        repeated,
        [tests[i].p_worse for i in repeated],
        [tests[i].min_p_worse for i in repeated],
        alpha,
    )
    better = _adjusted(
        repeated,
        [tests[i].p_better for i in repeated],
        [tests[i].min_p_better for i in repeated],
        alpha,
    )
    return _Significance(tests, worse, better)


def _fixed_sample_comparisons(
    pairs: list[tuple[Key, _Side, _Side]], thresholds: _Thresholds, warnings: list[str]
) -> tuple[list[ProbeComparison], bool]:
    """Verdict for every matched pair: threshold rule, or threshold + corrected significance.

    With repeated samples on both sides a drop must be at least the threshold *and* significant:
    Benjamini–Hochberg at ``alpha`` over the hypotheses that can reach significance at all (a
    probe that always passes on both sides has p = 1 whatever happens; leaving such hypotheses out
    keeps them from diluting the family — Tarone 1990, Gilbert 2005). The others get
    ``p_adjusted = 1``. Regressions and improvements are two separate families.
    """
    mixed = [i for i, (_, b, c) in enumerate(pairs) if (b.n >= 2) != (c.n >= 2)]
    if mixed:
        warnings.append(
            f"{len(mixed)} comparison(s) have repeated samples on one side only; they use the "
            "single-sample threshold rule without a significance test."
        )
    sig = _significance(pairs, thresholds.alpha)
    comparisons = [
        _comparison(key, b, c, i, sig, thresholds) for i, (key, b, c) in enumerate(pairs)
    ]
    return comparisons, bool(sig.tests)


def _comparison(
    key: Key, b: _Side, c: _Side, index: int, sig: _Significance, thresholds: _Thresholds
) -> ProbeComparison:
    """One matched pair's row: its verdict, and its test when both sides have repeated samples."""
    prompt_id, probe_key = key
    delta = c.mean - b.mean
    t = sig.tests.get(index)
    p_value = p_adjusted = None
    if t is not None:
        drop_ok = delta <= -thresholds.regression + _EPS
        gain_ok = delta >= thresholds.improvement - _EPS
        regression = drop_ok and sig.worse[index] < thresholds.alpha
        improvement = gain_ok and sig.better[index] < thresholds.alpha
        # Report the test in the direction the means moved.
        p_value = t.p_worse if delta <= 0 else t.p_better
        p_adjusted = sig.worse[index] if delta <= 0 else sig.better[index]
    else:
        regression, improvement = _threshold_verdict(
            b, c, thresholds.regression, thresholds.improvement
        )
    return ProbeComparison(
        probe_id=c.first.probe_id,
        probe_key=probe_key,
        probe_name=c.first.probe_name,
        category=c.first.category,
        prompt_id=prompt_id,
        baseline_score=b.mean,
        current_score=c.mean,
        score_delta=delta,
        baseline_passed=b.passed,
        current_passed=c.passed,
        regression=regression,
        improvement=improvement,
        baseline_details=b.first.details,
        current_details=(c.failing or c.first).details,
        baseline_samples=b.n,
        current_samples=c.n,
        baseline_pass_rate=b.pass_rate,
        current_pass_rate=c.pass_rate,
        pass_rate_ci=t.pass_rate_ci if t else None,
        score_ci=t.score_ci if t else None,
        p_value=p_value,
        p_adjusted=p_adjusted,
        flaky=0.0 < b.pass_rate < 1.0,
    )
