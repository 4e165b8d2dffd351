"""The judge's own canaries, and what a run records about its judge.

``judge_checks:`` are fixed (prompt, answer, expected verdict) cases; every run asks the judge
each of them ``check_votes`` times (distinct seeds; cached like any verdict, so an unchanged
judge costs them once per pull request). :func:`judge_info` records, with the run and so with
the baseline it may become, the judge models and ``system_fingerprint`` s that answered, the
canaries' verdicts, the tolerance, how many requests the cap refused and how much of a drop
the judged comparisons show (:mod:`promptcanary.core.run.judge_noise`); the verdict stage
(:mod:`promptcanary.core.verdict.judging`) compares it with the baseline's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcanary.core.models import DEFAULT_JUDGE_TOLERANCE, JudgeCheckResult, JudgeInfo
from promptcanary.core.probes.llm_judge import JUDGE, LLMJudgeProbe, judge_payload
from promptcanary.core.probes.served import (
    Served,
    ServiceFailure,
    ServiceRequest,
    served_output,
)
from promptcanary.core.run.judge_noise import judged_attenuation
from promptcanary.core.spec import JudgeCheck, JudgeSpec, SuiteSpec


def check_requests(judge: JudgeSpec, check: JudgeCheck) -> list[ServiceRequest]:
    """The votes asked of one canary."""
    return [
        ServiceRequest(
            JUDGE,
            judge_payload(
                mode="rubric",
                model=judge.model,
                api_base=judge.api_base,
                rubric=check.rubric,
                prompt=check.prompt,
                answer=check.answer,
                context=check.context,
                vote=vote,
            ),
        )
        for vote in range(judge.check_votes)
    ]


def canary_requests(suite: SuiteSpec) -> list[ServiceRequest]:
    """Every vote of every canary of ``suite`` (none without ``judge_checks:``)."""
    judge = suite.judge
    if judge is None:
        return []
    return [r for check in judge.checks for r in check_requests(judge, check)]


def judges(suite: SuiteSpec) -> bool:
    """Whether a run of ``suite`` asks a judge (an ``llm_judge`` probe, or canaries)."""
    has_probe = any(isinstance(b.probe, LLMJudgeProbe) for b in suite.bindings)
    return has_probe or bool(suite.judge and suite.judge.checks)


def judge_endpoints(suite: SuiteSpec) -> list[tuple[str, str | None]]:
    """The (judge model, ``api_base``) pairs the suite names: its ``judge:`` block, its probes."""
    found = {
        (b.probe.judge_model, b.probe.api_base)
        for b in suite.bindings
        if isinstance(b.probe, LLMJudgeProbe)
    }
    if suite.judge is not None:
        found.add((suite.judge.model, suite.judge.api_base))
    return sorted(found, key=lambda e: (e[0], e[1] or ""))


def _verdict_outputs(served: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [v for v in served.values() if isinstance(v, dict) and "fingerprint" in v]


def judge_info(suite: SuiteSpec, served: Served, capped: int = 0) -> JudgeInfo | None:
    """What the run records about its judge; ``None`` when the suite asks none."""
    if not judges(suite):
        return None
    outputs = _verdict_outputs(served)
    judge = suite.judge
    checks = [_check(judge, i, c, served) for i, c in enumerate(judge.checks)] if judge else []
    return JudgeInfo(
        models=sorted({str(o["model"]) for o in outputs if o.get("model")}),
        fingerprints=sorted({str(o["fingerprint"]) for o in outputs if o.get("fingerprint")}),
        checks=checks,
        tolerance=judge.tolerance if judge else DEFAULT_JUDGE_TOLERANCE,
        capped=capped,
        attenuation=judged_attenuation(suite, checks),
    )


def _check(judge: JudgeSpec, index: int, check: JudgeCheck, served: Served) -> JudgeCheckResult:
    votes = [served_output(served, r) for r in check_requests(judge, check)]
    return JudgeCheckResult(
        index=index,
        expected=check.expected,
        verdicts=[str(v["verdict"]) for v in votes if isinstance(v, dict)],
        errors=sorted({v.reason for v in votes if isinstance(v, ServiceFailure)}),
    )
