"""The verdict on a run: :func:`evaluate` compares it with its baseline, :func:`decide` judges.

:func:`evaluate` re-scores either side scored with other probes, compares, measures usage and
ends in :func:`decide`, which makes every decision about the run: the gate, the error-rate rule,
the approvals and the promotion. The CLI (``compare``) and the action (a fresh run, a run merged
from matrix legs) call :func:`evaluate`; re-judging stored results under a new approval calls
:func:`decide` alone. Neither reads or writes a file: loading the baseline and saving a promoted
run are the callers' I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from promptcanary.core.comparator import DEFAULT_THRESHOLD, compare
from promptcanary.core.models import (
    Approval,
    BaselineSnapshot,
    CanaryRunResult,
    DriftReport,
    ProbeComparison,
)
from promptcanary.core.run.scoring import needs_rescore, rescore
from promptcanary.core.sampling.pool import DEFAULT_POOL, promote
from promptcanary.core.stats import DEFAULT_ALPHA
from promptcanary.core.verdict.approval import split_regressions, without_approved
from promptcanary.core.verdict.gate import (
    DEFAULT_FAIL_ON,
    DEFAULT_MAX_ERROR_RATE,
    gate_failed,
    untrustworthy,
)
from promptcanary.core.verdict.judging import capped_note, judge_change, judged_inconclusive
from promptcanary.core.verdict.served import ServedModelChange, served_change
from promptcanary.core.verdict.usage import (
    CostLookup,
    UsageComparison,
    UsageFinding,
    UsageLimits,
    compare_usage,
    usage_findings,
)
from promptcanary.core.words import plural

if TYPE_CHECKING:
    from promptcanary.core.spec import SuiteSpec

PromotionRule = Literal["always", "if_clean", "never"]
"""``if_clean``: promote a run without regressions or errored responses."""

PROMOTION_RULES: dict[str, PromotionRule] = {
    "auto": "if_clean",
    "always": "always",
    "never": "never",
}
"""The user-facing ``update-baseline`` values (action input, CLI flag) → the rule."""


@dataclass(frozen=True)
class EvaluationPolicy:
    """Every threshold and rule of one evaluation, validated by whoever read the configuration."""

    fail_on: str = DEFAULT_FAIL_ON
    regression_threshold: float = DEFAULT_THRESHOLD
    improvement_threshold: float = DEFAULT_THRESHOLD
    alpha: float = DEFAULT_ALPHA
    promotion: PromotionRule = "never"
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    baseline_max_age_days: int = 0
    """A baseline older than this gets a note; 0 turns the note off."""
    usage_limits: UsageLimits = field(default_factory=UsageLimits)
    """Latency, token and cost gates (percent increase over the baseline); off by default."""
    approval: Approval | None = None
    """Regressions a reviewer accepted: they neither fail the gate nor stop a promotion."""
    fail_on_model_change: bool = False
    """A run served by a model id or fingerprint its baseline never saw fails the gate (and,
    under ``if_clean``, is not promoted)."""
    may_create_baseline: bool = True
    """Without a baseline, whether the run may become the first one (the action's event may not
    allow it, and a baseline that exists but cannot be read must not be replaced)."""


@dataclass(frozen=True)
class Promotion:
    """Whether the current run may become the baseline, and why not when it may not."""

    allowed: bool
    reason: str = ""


@dataclass(frozen=True)
class Evaluation:
    """Everything decided about one current run against one baseline (or none)."""

    run: CanaryRunResult
    """The current run, re-scored with the suite's probes when it was scored with others."""
    baseline: BaselineSnapshot | None
    """The baseline, re-scored with the suite's probes when they changed since it was saved."""
    drift: DriftReport | None
    gated_drift: DriftReport | None
    """``drift`` with its approved regressions set aside: what the gate and the promotion judged
    (its regressions are the unapproved ones, its severity theirs)."""
    promotion: Promotion
    gate_failed: bool
    untrustworthy: bool
    notes: tuple[str, ...] = ()
    """Plain-language remarks for the reader: a stale baseline, a promotion refused and why."""
    rescored_baseline: int = 0
    """Baseline responses re-scored with the suite's probes (also in ``drift``)."""
    rescored_current: bool = False
    probes_differ: bool = False
    """The two sides were scored with different probes and no suite was given to re-score."""
    usage: UsageComparison | None = None
    """Latency, tokens and cost of the run, and their change against the baseline."""
    usage_findings: tuple[UsageFinding, ...] = ()
    """Usage gates that tripped: a finding of their own kind (they fail the gate too)."""
    approved: tuple[ProbeComparison, ...] = ()
    """Regressions of ``drift`` that ``approval`` covers (still flagged in ``drift``)."""
    approval: Approval | None = None
    """The policy's approval when it covered at least one regression of this run."""
    served_change: ServedModelChange | None = None
    """The run was served by a model id or fingerprint the baseline never saw."""
    judge_changed: str | None = None
    """Why the run's LLM judge is not the baseline's (its judged comparisons are then
    inconclusive and the run is not promoted); ``None`` when it is the same or there is none."""

    def snapshot(self, pool_size: int = DEFAULT_POOL) -> BaselineSnapshot:
        """The run as the baseline it may become: the pool of the last ``pool_size`` promoted
        runs (``samples: auto`` decides against it), and the approval that let it."""
        # An approved change re-baselines its prompts: the pool keeps none of their older answers.
        approved = {c.prompt_id for c in self.approved}
        return promote(self.run, self.baseline, pool_size, approved).model_copy(
            update={"approval": self.approval}
        )

    @property
    def unapproved_regressions(self) -> list[ProbeComparison]:
        return self.gated_drift.regressions if self.gated_drift else []


def promotion_allowed(rule: str, run: CanaryRunResult, has_regressions: bool) -> tuple[bool, str]:
    """Whether ``rule`` lets this run become the baseline, and why not."""
    if rule == "always":
        return True, ""
    if rule == "never":
        return False, "update-baseline does not allow it for this event"
    if has_regressions:
        return False, "the run has regressions"
    if run.error_count:
        return False, f"{plural(run.error_count, 'response')} errored"
    return True, ""


def decide_promotion(
    run: CanaryRunResult,
    drift: DriftReport | None,
    policy: EvaluationPolicy,
    findings: tuple[UsageFinding, ...] = (),
) -> Promotion:
    """The promotion rule, then the error-rate rule that no rule overrides.

    :func:`decide` then holds back what no rule may promote (:func:`_held_back`)."""
    allowed, why_not = promotion_allowed(
        policy.promotion, run, bool(drift and drift.has_regressions)
    )
    if allowed and findings and policy.promotion == "if_clean":
        # A doubled bill must not become the reference the next run is measured against.
        allowed, why_not = False, f"the run exceeds {', '.join(f.gate for f in findings)}"
    if allowed and untrustworthy(run, policy.max_error_rate):
        # Not even under `always`: an outage must not become the reference.
        return Promotion(
            False,
            f"{run.error_count} of {len(run.llm_responses)} responses errored, above "
            f"max-error-rate {policy.max_error_rate:g}",
        )
    return Promotion(allowed, why_not)


def _held_back(
    promotion: Promotion, run: CanaryRunResult, has_baseline: bool, policy: EvaluationPolicy
) -> Promotion:
    """``promotion``, refused for part of a run or for a first baseline the policy may not create.

    Neither is a rule's refusal: the incomplete run has its own note, and the missing baseline
    is the caller's to explain (an event that may not create one, an unreadable one)."""
    if not promotion.allowed:
        return promotion
    if run.incomplete is not None:
        return Promotion(False, f"the run is incomplete ({run.incomplete})")
    if not has_baseline and not policy.may_create_baseline:
        return Promotion(False, "no baseline exists and this run may not create one")
    return promotion


def build_note(run: CanaryRunResult) -> str | None:
    """What a first ``samples: auto`` baseline cost and why (None for a fixed-sample run)."""
    record = run.provenance.adaptive
    prompts = (len(run.prompt_ids) or record.prompts) if record else 0
    if record is None or not prompts or not record.top_up or record.baseline_samples <= 1:
        return None
    per_prompt = len(run.llm_responses) / prompts
    return (
        f"This run built the baseline with {per_prompt:.1f} answers per prompt on average "
        f"({len(run.llm_responses)} requests, at most baseline-samples {record.baseline_samples} "
        f"a prompt): enough for a drop of {record.margin:g} in a probe's pass rate to be shown "
        "from the first pull request. Prompts stopped early once their answers sufficed; "
        "later pushes ask only what a pull request asks."
    )


def age_note(snapshot: BaselineSnapshot, now: datetime, max_age_days: int) -> str | None:
    """A note when the baseline is older than ``max_age_days`` (0: never)."""
    created = snapshot.created_at
    if created.tzinfo is None:  # hand-written or older documents: read a bare time as UTC
        created = created.replace(tzinfo=UTC)
    age = (now - created).days
    if max_age_days and age > max_age_days:
        return (
            f"The baseline is {age} days old (limit {max_age_days}): drift may have accumulated "
            "since; consider re-creating it."
        )
    return None


@dataclass(frozen=True)
class _Scored:
    baseline: BaselineSnapshot
    run: CanaryRunResult
    rescored_baseline: int = 0
    rescored_current: bool = False
    probes_differ: bool = False


def _rescored_to_suite(
    baseline: BaselineSnapshot, run: CanaryRunResult, suite: SuiteSpec | None
) -> _Scored:
    """Both sides scored with one probe configuration: the suite's, when there is a suite."""
    if suite is None:
        differ = (
            baseline.run_result.provenance.probe_config_hash != run.provenance.probe_config_hash
        )
        return _Scored(baseline, run, probes_differ=differ)
    count = 0
    if needs_rescore(baseline, suite):
        # Probe edits must not read as model drift: score stored answers with today's probes.
        baseline, count = rescore(baseline, suite)
    rescored_current = run.provenance.probe_config_hash != suite.probe_config_hash
    if rescored_current:
        run = rescore(BaselineSnapshot.of_run(run), suite)[0].run_result
    return _Scored(baseline, run, count, rescored_current)


def _apply_approval(
    drift: DriftReport | None, approval: Approval | None
) -> tuple[list[ProbeComparison], DriftReport | None]:
    """(approved regressions, the comparison the gate and the promotion judge)."""
    if drift is None or approval is None:
        return [], drift
    covered, _ = split_regressions(drift, approval.keys)
    if not covered:
        return [], drift
    return covered, without_approved(drift, approval.keys)


def evaluate(
    baseline: BaselineSnapshot | None,
    run: CanaryRunResult,
    suite: SuiteSpec | None,
    policy: EvaluationPolicy,
    *,
    now: datetime | None = None,
    cost: CostLookup | None = None,
) -> Evaluation:
    """Compare ``run`` with ``baseline`` under ``policy``; decide the gate and the promotion.

    ``suite`` re-scores either side scored with other probes; without it, differing probes are
    only flagged (``probes_differ``). ``now`` dates the staleness note (none when omitted).
    ``cost`` prices the answers (no cost figures without it).

    Raises:
        ValueError: the baseline belongs to another suite.
    """
    if baseline is None:
        scored: _Scored | None = None
        drift = None
    else:
        scored = _rescored_to_suite(baseline, run, suite)
        run, baseline = scored.run, scored.baseline
        drift = compare(
            baseline,
            run,
            regression_threshold=policy.regression_threshold,
            improvement_threshold=policy.improvement_threshold,
            alpha=policy.alpha,
        ).model_copy(update={"rescored_responses": scored.rescored_baseline})
    usage = compare_usage(baseline.run_result if baseline else None, run, cost)
    decided = decide(run, drift, policy, baseline=baseline, now=now, usage=usage)
    if scored is None:
        return decided
    return replace(
        decided,
        rescored_baseline=scored.rescored_baseline,
        rescored_current=scored.rescored_current,
        probes_differ=scored.probes_differ,
    )


def _promotion_rule(
    run: CanaryRunResult,
    gated: DriftReport | None,
    policy: EvaluationPolicy,
    findings: list[UsageFinding],
    *,
    gates_model: bool,
) -> Promotion:
    """The promotion rule's answer, held back when the served model failed the step."""
    rule = decide_promotion(run, gated, policy, tuple(findings))
    if gates_model and rule.allowed and policy.promotion == "if_clean":
        # Like a usage gate: what failed the step must not become the reference.
        return Promotion(False, "the served model changed (fail-on-model-change)")
    return rule


def _run_notes(
    run: CanaryRunResult,
    rule: Promotion,
    policy: EvaluationPolicy,
    baseline: BaselineSnapshot | None,
    now: datetime | None,
) -> list[str]:
    """The notes on the run itself: the judge's cap, a stale baseline, why it was not promoted."""
    notes = [note for note in (capped_note(run),) if note]
    if baseline is not None and now is not None:
        stale = age_note(baseline, now, policy.baseline_max_age_days)
        if stale:
            notes.append(stale)
    if policy.promotion != "never" and rule.reason:
        notes.append(f"The baseline was not updated: {rule.reason}.")
    if run.incomplete is not None:
        # Whatever the rule: part of a run must not become the reference (a pull request too).
        notes.append(f"Not promoted: the run is incomplete ({run.incomplete}).")
    return notes


def decide(
    run: CanaryRunResult,
    drift: DriftReport | None,
    policy: EvaluationPolicy,
    *,
    baseline: BaselineSnapshot | None = None,
    now: datetime | None = None,
    usage: UsageComparison | None = None,
    baseline_run: CanaryRunResult | None = None,
) -> Evaluation:
    """The verdict on a run already compared with its baseline: the gate, the error-rate rule,
    the approvals, the promotion and the notes.

    :func:`evaluate` ends here; so does re-judging stored results under a new policy (e.g. an
    approval given after the run), which must not compare, score or measure anything again.
    ``usage`` is the run's usage as measured with its comparison (None: not measured, so no
    usage gate); ``baseline`` dates the staleness note with ``now`` (none when either is omitted).
    The served models are compared with ``baseline``'s run, or ``baseline_run`` (re-judging
    keeps the baseline's run, not its snapshot).
    """
    # A judge that changed since the baseline cannot tell what the model did: its comparisons
    # are inconclusive, not regressions, and the run is not promoted (core/verdict/judging.py).
    changed_judge = judge_change(run, baseline)
    if changed_judge is not None:
        drift = judged_inconclusive(drift, changed_judge)
    approved, gated = _apply_approval(drift, policy.approval)
    findings, notes = usage_findings(usage, policy.usage_limits) if usage else ([], [])
    served = served_change(baseline.run_result if baseline is not None else baseline_run, run)
    gates_model = served is not None and policy.fail_on_model_change
    rule = _promotion_rule(run, gated, policy, findings, gates_model=gates_model)
    if changed_judge is not None:
        notes.append(f"Judged comparisons are inconclusive: the judge changed ({changed_judge}).")
        if rule.allowed:
            rule = Promotion(False, "the judge changed since the baseline")
    notes += _run_notes(run, rule, policy, baseline, now)
    promotion = _held_back(rule, run, baseline is not None, policy)
    built = build_note(run) if baseline is None and promotion.allowed else None
    if built:
        notes.append(built)
    return Evaluation(
        run=run,
        baseline=baseline,
        drift=drift,
        gated_drift=gated,
        promotion=promotion,
        gate_failed=gate_failed(gated, run, policy.fail_on) or bool(findings) or gates_model,
        untrustworthy=untrustworthy(run, policy.max_error_rate),
        notes=tuple(notes),
        usage=usage,
        usage_findings=tuple(findings),
        approved=tuple(approved),
        approval=policy.approval if approved else None,
        served_change=served,
        judge_changed=changed_judge,
    )
