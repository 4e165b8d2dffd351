"""What one action step produced, and the step's verdict on it.

Each :class:`PairOutcome` carries what the engine's evaluation decided for its pair
(:func:`promptcanary_action.pipeline.verdict_fields`). :class:`StepOutcome` only combines those
decisions (one failing pair fails the step) into the gate, the exit code, the check run's
conclusion, ``drift-detected`` and the reasons a step fails, and every other module reads them.
The models are public API for templates (``comment.md.j2`` etc.): a field renamed here is a
template change. They hold results only, never a token or an API key.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from enum import Enum, IntEnum
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from promptcanary.core.models import (
    Approval,
    CanaryRunResult,
    DriftReport,
    DriftSeverity,
    LLMResponse,
    ProbeComparison,
    ResultRef,
)
from promptcanary.core.spec import resolve_line
from promptcanary.core.verdict.served import ServedModelChange, served_ids
from promptcanary.core.verdict.usage import UsageComparison, UsageFinding
from promptcanary.core.words import plural
from promptcanary_action.links import suite_line_url
from promptcanary_action.settings import Settings
from promptcanary_action.trend import DEFAULT_TREND_POINTS, Trend, build_trend

Conclusion = Literal["success", "neutral", "failure", "cancelled"]


class ExitCode(IntEnum):
    """The step's exit codes, as ``action.yml`` documents them."""

    OK = 0
    GATE_FAILED = 1
    USAGE = 2
    """A configuration or usage error, or an unreadable baseline or recording."""
    UNTRUSTWORTHY = 3
    """Too many responses errored (``max-error-rate``) or credentials are missing."""
    CANCELLED = 4
    """SIGINT/SIGTERM (a cancelled job, ``timeout-minutes``): the results so far are reported,
    nothing is promoted."""


class Failure(NamedTuple):
    """Why the step fails, as an error annotation: its title (None: untitled) and message."""

    title: str | None
    message: str


class BaselineStatus(str, Enum):
    """What happened to the baseline of one (suite, model) pair in this run."""

    FOUND = "found"  # compared with an existing baseline
    CREATED = "created"  # none existed; this run became the baseline
    MISSING = "missing"  # none existed and this run may not create one
    UPDATED = "updated"  # compared, then promoted this run to be the new baseline
    UNREACHABLE = "unreachable"  # the store could not be reached: nothing compared or saved


class PairOutcome(BaseModel):
    """One suite run against one model, compared with its baseline when there is one."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    suite_name: str
    suite_file: str
    """Path of the suite file relative to the repository root (annotations point there)."""
    model: str
    run: CanaryRunResult
    drift: DriftReport | None = None
    baseline_run: CanaryRunResult | None = None
    baseline_status: BaselineStatus = BaselineStatus.MISSING
    baseline_location: str | None = None
    baseline_error: str | None = None
    """The baseline exists but cannot be read (named file and cause); the step exits 2. Or,
    with ``baseline_unreachable``, the store could not be reached; the step exits 3."""
    baseline_unreachable: bool = False
    notes: list[str] = Field(default_factory=list)
    """Plain-language remarks: re-scoring, stale baseline, promotion skipped and why."""
    prompt_lines: dict[str, int] = Field(default_factory=dict)
    """prompt id → line of the prompt entry in ``suite_file``."""
    probe_lines: dict[str, int] = Field(default_factory=dict)
    """``"<prompt id>/<probe key>"`` → line of a per-prompt probe entry in ``suite_file``."""
    prompt_rows: dict[str, tuple[str, int]] = Field(default_factory=dict)
    """prompt id → (dataset file relative to the repository root, line) of a templated
    prompt's row; its annotations point there."""
    conversations: dict[str, str] = Field(default_factory=dict)
    """prompt id → the last turns of a conversation prompt, shown before its answer."""
    prompt_tags: dict[str, list[str]] = Field(default_factory=dict)
    """prompt id → its tags in the suite (the report page filters comparisons by them)."""
    usage: UsageComparison | None = None
    """Latency, tokens and cost of the run and their change against the baseline."""
    usage_findings: list[UsageFinding] = Field(default_factory=list)
    """Usage gates (``max-*-increase``) that tripped: their own kind of finding."""
    history: list[dict[str, Any]] = Field(default_factory=list)
    """The newest promoted baselines of this pair (history records, oldest first)."""
    approved: list[ResultRef] = Field(default_factory=list)
    """Regressions of ``drift`` a reviewer approved (they neither fail the gate nor block
    a promotion)."""
    approval: Approval | None = None
    """The approval that covered ``approved`` (who, which pull request, the fingerprint)."""
    # The evaluation's decisions (pipeline.verdict_fields). A step.json of an older version
    # lacks them and still loads: re-judging and mode: merge judge its results again.
    gate_failed: bool = False
    """The evaluation's gate: ``fail-on`` or a usage gate fails this pair."""
    untrustworthy: bool = False
    """More responses errored than ``max-error-rate`` allows: this pair cannot gate."""
    unapproved: list[ResultRef] = Field(default_factory=list)
    """The regressions of ``drift`` nobody approved: the ones the gate judged."""
    gated_severity: DriftSeverity = DriftSeverity.NONE
    """The severity of ``drift`` with its approved regressions set aside."""
    served_change: ServedModelChange | None = None
    """The evaluation's served-model finding: an id or fingerprint the baseline never saw."""

    def is_approved(self, comparison: ProbeComparison) -> bool:
        return any(
            (r.prompt_id, r.probe_key) == (comparison.prompt_id, comparison.probe_key)
            for r in self.approved
        )

    @property
    def unreachable(self) -> bool:
        """The baseline store could not be reached for this pair."""
        return self.baseline_unreachable and self.baseline_error is not None

    @property
    def unapproved_count(self) -> int:
        return len(self.unapproved)

    def line_for(self, prompt_id: str, probe_key: str | None = None) -> int | None:
        return resolve_line(self.prompt_lines, self.probe_lines, prompt_id, probe_key)

    @property
    def severity(self) -> DriftSeverity:
        return self.drift.severity if self.drift else DriftSeverity.NONE

    @property
    def regression_count(self) -> int:
        return len(self.drift.regressions) if self.drift else 0

    @property
    def improvement_count(self) -> int:
        return len(self.drift.improvements) if self.drift else 0

    @property
    def inconclusive_count(self) -> int:
        return len(self.drift.inconclusive) if self.drift else 0

    @property
    def error_count(self) -> int:
        return self.run.error_count

    def response(self, prompt_id: str, *, baseline: bool = False) -> LLMResponse | None:
        """The first sample's response to a prompt, in this run or in the baseline."""
        run = self.baseline_run if baseline else self.run
        if run is None:
            return None
        return next((r for r in run.llm_responses if r.prompt_id == prompt_id), None)

    def response_text(self, prompt_id: str, *, baseline: bool = False) -> str | None:
        """What the model answered, as text to show or diff: content, then any tool calls."""
        response = self.response(prompt_id, baseline=baseline)
        if response is None:
            return None
        if response.error is not None:
            return f"(no response: {response.error})"
        calls = [
            f"→ tool call {call.name}({call.arguments_raw or json.dumps(call.arguments)})"
            for call in response.tool_calls
        ]
        return "\n".join([response.content, *calls] if response.content else calls)


class StepOutcome(BaseModel):
    """Everything one action step found, across all its (suite, model) pairs."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pairs: list[PairOutcome]
    fail_on: str
    gate_failed: bool
    untrustworthy: bool = False
    """The error rate exceeded ``max-error-rate``: exit 3 whatever the gate says."""
    verdict: str
    """One line, e.g. "❌ 3 regressions in 1 of 2 model runs (severity high)"."""
    warnings: list[str] = Field(default_factory=list)
    comment_id: str = "default"
    event_name: str = ""
    pr_number: int | None = None
    sha: str = ""
    run_url: str | None = None
    report_files: list[str] = Field(default_factory=list)
    repository: str = ""
    """``owner/name``, for links to the suite file."""
    server_url: str = ""
    """The runner's ``GITHUB_SERVER_URL`` (GitHub Enterprise Server too)."""
    trend_points: int = DEFAULT_TREND_POINTS

    @property
    def trends(self) -> list[Trend]:
        """One score trend per suite that has a history (models as lines), in suite order."""
        suites: dict[str, list[PairOutcome]] = {}
        for pair in self.pairs:
            suites.setdefault(pair.suite_name, []).append(pair)
        found = []
        for name, pairs in suites.items():
            trend = build_trend(
                name,
                {p.model: p.history for p in pairs},
                {p.model: p.run.overall_score for p in pairs},
                self.trend_points,
                {p.model: sorted(served_ids(p.run.llm_responses)) for p in pairs},
            )
            if trend is not None:
                found.append(trend)
        return found

    def prompt_url(self, pair: PairOutcome, prompt_id: str) -> str | None:
        """The prompt's line in the suite file at this run's commit."""
        return suite_line_url(
            self.server_url, self.repository, self.sha, pair.suite_file,
            pair.prompt_lines.get(prompt_id),
        )  # fmt: skip

    def row_url(self, pair: PairOutcome, prompt_id: str) -> str | None:
        """A templated prompt's dataset row at this run's commit."""
        row = pair.prompt_rows.get(prompt_id)
        if row is None:
            return None
        return suite_line_url(self.server_url, self.repository, self.sha, row[0], row[1])

    @property
    def usage_findings(self) -> list[UsageFinding]:
        return [f for p in self.pairs for f in p.usage_findings]

    @property
    def served_changes(self) -> list[ServedModelChange]:
        """The served-model findings of every pair (output ``served-model-changed``)."""
        return [p.served_change for p in self.pairs if p.served_change is not None]

    cancelled: str | None = None
    """Why the step stopped early (the job was cancelled); None when it ran to the end."""
    shard: str | None = None
    """``i/n`` on a matrix leg: it publishes nothing and its share does not decide the gate
    (the ``mode: merge`` job does, over every leg)."""
    approve_label: str | None = None
    """The approval label on a pull request with approvals on (the comment says how to approve
    and carries the record that binds an approval); None elsewhere."""
    approval: Approval | None = None
    """The approval in force for this pull request (kept in the comment's record)."""

    @property
    def unapproved_count(self) -> int:
        return sum(p.unapproved_count for p in self.pairs)

    @property
    def severity(self) -> DriftSeverity:
        worst = DriftSeverity.NONE
        for pair in self.pairs:
            if pair.severity.rank > worst.rank:
                worst = pair.severity
        return worst

    @property
    def regression_count(self) -> int:
        return sum(p.regression_count for p in self.pairs)

    @property
    def improvement_count(self) -> int:
        return sum(p.improvement_count for p in self.pairs)

    @property
    def inconclusive_count(self) -> int:
        return sum(p.inconclusive_count for p in self.pairs)

    @property
    def error_count(self) -> int:
        return sum(p.error_count for p in self.pairs)

    @property
    def drift_detected(self) -> bool:
        """Regressions nobody approved (approved ones are the intended new behaviour)."""
        return self.unapproved_count > 0

    @property
    def baseline_errors(self) -> list[str]:
        """Baselines that exist but cannot be read: a failure (exit 2), not "no baseline yet"."""
        return [
            p.baseline_error for p in self.pairs if p.baseline_error and not p.baseline_unreachable
        ]

    @property
    def unreachable_baselines(self) -> list[str]:
        """Stores that could not be reached (git's message and the remedy): nothing was compared,
        so the results cannot gate (exit 3), and they are not a first run either."""
        return [p.baseline_error for p in self.pairs if p.baseline_error and p.unreachable]

    def error_causes(self, limit: int = 3) -> list[tuple[str, int]]:
        """The first ``limit`` distinct reasons answers errored, with how many answers each:
        what the step log names when the run is untrustworthy."""
        causes = Counter(
            r.error or "unknown error" for p in self.pairs for r in p.run.llm_responses if r.errored
        )
        return causes.most_common(limit)

    @property
    def exit_code(self) -> ExitCode:
        if self.cancelled is not None:
            return ExitCode.CANCELLED
        if self.unreachable_baselines:
            return ExitCode.UNTRUSTWORTHY
        if self.shard is not None:
            return ExitCode.USAGE if self.baseline_errors else ExitCode.OK
        if self.untrustworthy:
            return ExitCode.UNTRUSTWORTHY
        if self.baseline_errors:
            return ExitCode.USAGE
        return ExitCode.GATE_FAILED if self.gate_failed else ExitCode.OK

    @property
    def conclusion(self) -> Conclusion:
        """The check run's conclusion: red whenever the step fails, so it never shows green."""
        if self.exit_code is ExitCode.CANCELLED:
            return "cancelled"
        if self.exit_code is not ExitCode.OK:
            return "failure"
        return "neutral" if self.drift_detected else "success"  # approved drift: success

    @property
    def failures(self) -> list[Failure]:
        """The error annotations that explain a failing exit code other than the gate's."""
        if self.cancelled is not None:
            return [Failure("PromptCanary: cancelled", self.verdict)]
        if self.untrustworthy and self.shard is None:
            return [Failure(None, self.verdict)]
        return [
            *(
                Failure("PromptCanary: baseline store unreachable", e)
                for e in self.unreachable_baselines
            ),
            *(Failure("PromptCanary: unreadable baseline", e) for e in self.baseline_errors),
        ]


def verdict(
    pairs: Sequence[PairOutcome],
    failed: bool,
    untrusted: bool,
    cancelled: str | None = None,
    *,
    baselines_off: bool = False,
) -> str:
    """The step's one-line verdict: why nothing can gate first, then drift, then the quiet ends."""
    return (
        _not_gating(pairs, untrusted, cancelled)
        or _drift_verdict(pairs, failed)
        or _quiet_verdict(pairs, failed, baselines_off)
    )


def _not_gating(pairs: Sequence[PairOutcome], untrusted: bool, cancelled: str | None) -> str:
    """A stopped, untrustworthy or uncompared-for-want-of-a-store step ("" otherwise)."""
    if cancelled is not None:
        answered = sum(not r.errored for p in pairs for r in p.run.llm_responses)
        return (
            f"⏹️ Stopped early: {cancelled}. {plural(answered, 'answer')} in "
            f"{plural(len(pairs), 'model run')} "
            "were kept and reported; nothing was promoted"
        )
    if untrusted:
        errors = sum(p.error_count for p in pairs)
        return (
            f"⚠️ Untrustworthy run: {plural(errors, 'response')} errored, above max-error-rate; "
            "the results cannot gate the merge"
        )
    unreachable = sum(1 for p in pairs if p.unreachable)
    if unreachable:
        return (
            f"⚠️ Not compared: the baseline store could not be reached for "
            f"{plural(unreachable, 'model run')}; the results cannot gate the merge"
        )
    return ""


def _drift_verdict(pairs: Sequence[PairOutcome], failed: bool) -> str:
    """Regressions, usage over its limit or another served model ("" when none)."""
    regressions = sum(p.unapproved_count for p in pairs)
    approved = _approved_phrase(pairs)
    gates = list(dict.fromkeys(f.gate for p in pairs for f in p.usage_findings))
    usage = f"usage above its limit ({', '.join(gates)})" if gates else ""
    served = _served_phrase(pairs)
    if regressions:
        drifted = sum(1 for p in pairs if p.unapproved_count)
        worst = max(
            (p.gated_severity for p in pairs), key=lambda s: s.rank, default=DriftSeverity.NONE
        )
        icon = "❌" if failed else "⚠️"
        more = f"; {approved}" if approved else ""
        return (
            f"{icon} {plural(regressions, 'regression')} in {drifted} of "
            f"{plural(len(pairs), 'model run')} "
            f"(severity {worst.value}{more})"
            + (f"; {usage}" if usage else "")
            + (f"; {served}" if served else "")
        )
    if usage:
        return (
            f"❌ No regression, but {usage}"
            + (f"; {served}" if served else "")
            + (f"; drift {approved}" if approved else "")
        )
    if served:
        icon = "❌" if failed else "⚠️"
        return f"{icon} No regression, but {served}" + (f"; drift {approved}" if approved else "")
    return ""


def _quiet_verdict(pairs: Sequence[PairOutcome], failed: bool, baselines_off: bool) -> str:
    """No drift to report: approved drift, failed probes, nothing compared, or no drift."""
    approved = _approved_phrase(pairs)
    if approved and not failed:
        return f"✅ Drift {approved}"
    if failed:
        return "❌ Probes failed (fail-on: failure)"
    compared = sum(1 for p in pairs if p.drift is not None)
    unreadable = sum(1 for p in pairs if p.baseline_error)
    if compared == 0 and unreadable:
        return f"⚠️ Not compared: the baseline of {plural(unreadable, 'model run')} cannot be read"
    if compared == 0 and baselines_off:
        return (
            f"✅ {plural(len(pairs), 'model run')} completed; baselines are off (`baseline: none`)"
        )
    if compared == 0:
        return f"✅ {plural(len(pairs), 'model run')} completed; no baseline to compare with yet"
    return f"✅ No drift in {plural(compared, 'compared model run')}"


def _served_phrase(pairs: Sequence[PairOutcome]) -> str:
    """ "the served model changed: …" for the first pair whose served model changed."""
    changes = [p.served_change for p in pairs if p.served_change is not None]
    if not changes:
        return ""
    more = f" (and {plural(len(changes) - 1, 'more model run')})" if len(changes) > 1 else ""
    return f"the served model changed: {changes[0].message}{more}"


def _approved_phrase(pairs: Sequence[PairOutcome]) -> str:
    """The verdict's "approved by @login: ..." phrase; "" when nothing was approved."""
    count = sum(len(p.approved) for p in pairs)
    approval = next((p.approval for p in pairs if p.approval is not None), None)
    if not count or approval is None:
        return ""
    return (
        f"approved by @{approval.approver}: {plural(count, 'regression')} accepted on pull request "
        f"#{approval.pr_number}"
    )


def build_outcome(
    pairs: list[PairOutcome], settings: Settings, *, warnings: list[str], **context: Any
) -> StepOutcome:
    """The step over its judged ``pairs``: one failing pair fails it, one untrustworthy pair
    makes it untrustworthy."""
    untrusted = any(p.untrustworthy for p in pairs)
    failed = any(p.gate_failed for p in pairs)
    cancelled = context.get("cancelled")
    return StepOutcome(
        pairs=pairs,
        fail_on=settings.fail_on,
        gate_failed=failed,
        untrustworthy=untrusted,
        verdict=verdict(
            pairs, failed, untrusted, cancelled, baselines_off=settings.baseline == "none"
        ),
        warnings=warnings,
        comment_id=settings.comment_id,
        repository=settings.github.repository,
        server_url=settings.github.server_url,
        trend_points=settings.trend_points,
        **context,
    )
