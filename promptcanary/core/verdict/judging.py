"""Whether the judge itself changed, and what that makes of the judged comparisons.

An LLM judge is a model too: when its provider updates it, every judged score moves and a gate
would blame the model under test. A run's judge changed when

* its canaries (``judge_checks:``) expected to pass, or those expected to fail, disagree with
  that verdict on more than the tolerance's share of their votes, or none of them got a
  verdict (the judge is unchecked);
* the judge models that answered differ from the baseline's;
* its answers' ``system_fingerprint`` s share none with the baseline's (hosted models rotate a
  few fingerprints; a set with none in common is a new deployment).

Then every comparison of an ``llm_judge`` probe is *inconclusive: the judge changed* — neither a
regression nor an improvement — and :func:`~promptcanary.core.verdict.evaluate.decide` promotes
nothing (the decision is made there, once). ``bench/judge_drift.py`` measures how often a noisy
but unchanged judge is called changed, and how often an updated one is missed.
"""

from __future__ import annotations

from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, DriftReport, JudgeInfo
from promptcanary.core.probes.llm_judge import LLMJudgeProbe

JUDGED_PROBE = LLMJudgeProbe.probe_id


def _canaries(judge: JudgeInfo) -> str | None:
    """Why the canaries say the judge changed: in the canaries expected to pass, or in those
    expected to fail, more than the tolerance's share of the votes disagree (a stricter judge
    shows in the first, a more lenient one in the second)."""
    if not judge.checks:
        return None
    if not judge.votes:
        return "none of the judge's canaries (judge_checks) got a verdict"
    for expected in ("pass", "fail"):
        votes = [v for c in judge.checks if c.expected == expected for v in c.verdicts]
        wrong = sum(1 for v in votes if v != expected)
        if votes and wrong / len(votes) > judge.tolerance:
            return (
                f"the judge disagrees with {wrong} of {len(votes)} votes on its canaries "
                f"(judge_checks) expected to {expected}, above the tolerance of "
                f"{judge.tolerance:.0%}"
            )
    return None


def judge_change(run: CanaryRunResult, baseline: BaselineSnapshot | None) -> str | None:
    """Why the run's judge is not the one its comparisons can trust; ``None`` when it is."""
    current = run.provenance.judge
    if current is None:
        return None
    reason = _canaries(current)
    if reason is not None:
        return reason
    before = baseline.run_result.provenance.judge if baseline is not None else None
    if before is None:
        return None
    if before.models and current.models and before.models != current.models:
        return f"the judge model changed: {', '.join(before.models)} → {', '.join(current.models)}"
    old, new = set(before.fingerprints), set(current.fingerprints)
    if old and new and not old & new:
        return (
            f"the judge's system_fingerprint changed: {', '.join(sorted(old))} → "
            f"{', '.join(sorted(new))}"
        )
    return None


def judged_inconclusive(drift: DriftReport | None, reason: str) -> DriftReport | None:
    """``drift`` with every judged comparison inconclusive because the judge changed."""
    if drift is None:
        return None
    comparisons = [
        c.model_copy(update={"regression": False, "improvement": False, "verdict": "inconclusive"})
        if c.probe_id == JUDGED_PROBE
        else c
        for c in drift.comparisons
    ]
    warning = f"Judged comparisons are inconclusive: the judge changed ({reason})."
    return drift.model_copy(
        update={"comparisons": comparisons, "warnings": [*drift.warnings, warning]}
    )


def capped_note(run: CanaryRunResult) -> str | None:
    """The note on answers the judge's request cap left unjudged."""
    judge = run.provenance.judge
    if judge is None or not judge.capped:
        return None
    return (
        f"Judging stopped at max-judge-requests: {judge.capped} judge request(s) not sent; "
        "those answers were not judged (errored results, neither a pass nor a failure)."
    )
