"""Re-judging a pull request's previous results when only its approval label changed.

A ``labeled`` or ``unlabeled`` event of the approval label changes what is approved, not what
the models answer. When the report folder still holds the previous step's ``step.json`` for the
same pull request and head commit (the workflow restores it, e.g. with ``actions/cache`` keyed
by the head SHA), the step re-judges those results under the approval in force and calls no
model. This is safe because nothing that produced them changed: same commit (so the same suite
files and action inputs), and the approval is bound to the keys the comment showed, not to any
run's findings. Without such a file the suite simply runs again; either way the approval covers
the same keys.
"""

from __future__ import annotations

from pathlib import Path

from promptcanary.core.models import Approval
from promptcanary.core.verdict.evaluate import decide
from promptcanary_action.activity import Activity
from promptcanary_action.context import EventContext
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.pipeline import policy_for, verdict_fields
from promptcanary_action.report_dir import STEP_FILE
from promptcanary_action.settings import Settings

LABEL_ACTIONS = frozenset({"labeled", "unlabeled"})


def reusable_outcome(report_dir: Path, ctx: EventContext, label: str | None) -> StepOutcome | None:
    """The previous step's outcome when this event only changed the approval label, else None."""
    if label is None or not ctx.is_pull_request or ctx.pr_number is None:
        return None
    if ctx.action not in LABEL_ACTIONS or ctx.event_label != label:
        return None
    try:
        previous = StepOutcome.model_validate_json((report_dir / STEP_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None  # absent or unreadable: run the suite
    same_commit = previous.sha == (ctx.head_sha or ctx.sha) and previous.pr_number == ctx.pr_number
    # An untrustworthy run or an unreadable baseline decided nothing worth keeping: run again.
    broken = previous.untrustworthy or any(p.baseline_error for p in previous.pairs)
    return previous if same_commit and not broken else None


def rejudge(
    pair: PairOutcome, settings: Settings, activity: Activity, approval: Approval | None
) -> PairOutcome:
    """``pair``'s stored results judged under ``approval`` by the engine's :func:`decide`, the
    function every fresh evaluation ends in (nothing is run, compared or measured again).

    It reads the stored run, comparison and usage only, so a ``step.json`` written before the
    pairs kept their decisions is judged alike."""
    policy = policy_for(settings, activity, approval)
    evaluation = decide(
        pair.run, pair.drift, policy, usage=pair.usage, baseline_run=pair.baseline_run
    )
    return pair.model_copy(update=verdict_fields(evaluation))
