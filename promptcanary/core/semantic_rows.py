"""compare()'s meaning rows: one :class:`ProbeComparison` (probe key ``semantic``) per prompt that
``semantic_drift:`` compares, built from the run's meaning decisions (pure).

A row's verdict is *changed* (a regression: gated, approved and reported like any other),
*same* or *inconclusive* (with the reason when the answers could not be compared). Its score is
on the meaning scale ``1 − ‖Δμ‖²`` (the baseline's is 1), so the drift report's severity grows
with the size of the change: ``‖Δμ‖² = 2 · shift`` is the squared distance between the two
centroids of unit answer vectors. A changed row shows today's answer farthest from the
baseline's answers and the baseline answer nearest to it (from the newest snapshot, whose
answers are stored with their text).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    MeaningShift,
    ProbeCategory,
    ProbeComparison,
    ResultRef,
)
from promptcanary.core.sampling.meaning import SEMANTIC_KEY, MeaningComparisons, meaning_for
from promptcanary.core.sampling.pool import DEFAULT_POOL, Baseline
from promptcanary.core.sampling.sequential import Decision, Policy, Verdict
from promptcanary.core.vectors import Vector, VectorError, decode, dot

MEANING_PROBE_ID = "semantic_drift"
VERDICTS = {Verdict.REGRESSED: "changed", Verdict.SAME: "same", Verdict.UNDECIDED: "inconclusive"}


def meaning_rows(
    meaning: MeaningComparisons,
    decisions: dict[tuple[str, str], Decision],
    baseline: BaselineSnapshot,
    current: CanaryRunResult,
) -> tuple[list[ProbeComparison], list[ResultRef]]:
    """The rows of every compared prompt, and the prompts whose pool held no vector yet (listed
    as new comparisons: there is nothing to compare until a run with vectors is promoted)."""
    today = current.provenance.embedding
    wanted = today.prompts if today is not None else []
    rows = [
        _row(pid, decision, meaning, baseline, current)
        for pid in meaning.ids
        if (decision := decisions.get((pid, SEMANTIC_KEY))) is not None
    ]
    new = [
        ResultRef(prompt_id=pid, probe_key=SEMANTIC_KEY) for pid in wanted if pid not in meaning.ids
    ]
    return rows, new


def fixed_meaning_rows(
    baseline: Baseline, current: CanaryRunResult, alpha: float, others: int
) -> tuple[list[ProbeComparison], list[ResultRef]]:
    """The meaning rows of a run with a fixed number of samples (``samples: N``): one look at its
    N answers per prompt against the pool. There is one look and no sequential family, so a row
    is *changed* when its e-value reaches ``m / alpha``, ``m`` counting the meaning rows and the
    report's ``others`` statistical comparisons (Bonferroni on e-values: by Markov's inequality
    each no-change row reaches it with probability at most ``alpha / m``); *same* when the shift's
    upper bound is below the margin; else *inconclusive*."""
    today = current.provenance.embedding
    if today is None:
        return [], []
    hashes = current.provenance.prompt_hashes
    meaning = meaning_for(
        baseline, DEFAULT_POOL, today.prompts, hashes, today.model_id, today.min_shift
    )
    if meaning is None:
        return [], []
    family = max(1, meaning.size + others)
    samples = max(1, current.provenance.samples)
    ceiling = max(samples, Policy().max_samples)
    policy = Policy(alpha=alpha, min_samples=samples, max_samples=ceiling)
    meaning.look(current.llm_responses, today, family / alpha, policy)
    decisions = {
        (pid, SEMANTIC_KEY): dataclasses.replace(
            decision,
            p_adjusted=min(1.0, family / decision.e_worse) if decision.e_worse > 0 else 1.0,
        )
        for pid, decision in zip(meaning.ids, meaning.decisions(), strict=True)
    }
    snapshot = baseline if isinstance(baseline, BaselineSnapshot) else baseline[0]
    return meaning_rows(meaning, decisions, snapshot, current)


def _row(
    pid: str,
    decision: Decision,
    meaning: MeaningComparisons,
    baseline: BaselineSnapshot,
    current: CanaryRunResult,
) -> ProbeComparison:
    outcome = meaning.outcomes.get(pid)
    size = outcome.shift if outcome is not None else None
    reason = outcome.reason if outcome is not None else "no answer was compared"
    changed = decision.verdict is Verdict.REGRESSED
    distance = min(1.0, 2.0 * max(0.0, size.estimate)) if size is not None else 0.0
    detail = MeaningShift(
        embedding_model=meaning.model_id,
        min_shift=meaning.min_shift,
        shift=size.estimate if size is not None else None,
        shift_ci=size.interval() if size is not None else None,
        reason=reason,
    )
    if changed:
        detail = detail.model_copy(update=_moved(pid, baseline.run_result.llm_responses, current))
    evidence = decision.e_worse
    return ProbeComparison(
        probe_id=MEANING_PROBE_ID,
        probe_key=SEMANTIC_KEY,
        probe_name="Meaning",
        category=ProbeCategory.SEMANTIC,
        prompt_id=pid,
        baseline_score=1.0,
        current_score=1.0 - distance,
        score_delta=-distance,
        baseline_passed=True,
        current_passed=not changed,
        regression=changed,
        current_details=_details(detail),
        baseline_samples=decision.baseline.n,
        current_samples=decision.current.n,
        verdict=VERDICTS[decision.verdict],
        e_value=evidence if reason is None else None,
        p_value=(min(1.0, 1.0 / evidence) if evidence > 0 else 1.0) if reason is None else None,
        p_adjusted=decision.p_adjusted if reason is None else None,
        semantic=detail,
    )


def _details(detail: MeaningShift) -> str:
    if detail.reason is not None:
        return f"not compared: {detail.reason}"
    if detail.shift is None or detail.shift_ci is None:
        return "too few answers with vectors so far"
    low, high = detail.shift_ci
    return (
        f"meaning shift {detail.shift:.3f} (95% interval {low:.3f}–{high:.3f}; "
        f"min_shift {detail.min_shift:g})"
    )


def _vectors(responses: Sequence[LLMResponse], pid: str) -> list[tuple[LLMResponse, Vector]]:
    out = []
    for response in responses:
        if response.prompt_id == pid and response.embedding and not response.errored:
            try:
                out.append((response, decode(response.embedding)))
            except VectorError:
                continue
    return out


def _moved(
    pid: str, baseline: Sequence[LLMResponse], current: CanaryRunResult
) -> dict[str, object]:
    """Today's answer least like any baseline answer, and that nearest baseline answer."""
    theirs = _vectors(baseline, pid)
    ours = _vectors(current.llm_responses, pid)
    if not theirs or not ours or len(theirs[0][1]) != len(ours[0][1]):
        return {}
    best: tuple[float, LLMResponse, LLMResponse] | None = None
    for answer, vector in ours:
        similarity, nearest = max(
            ((dot(vector, v), r) for r, v in theirs), key=lambda pair: pair[0]
        )
        if best is None or similarity < best[0]:
            best = (similarity, answer, nearest)
    assert best is not None
    similarity, answer, nearest = best
    return {
        "moved_answer": answer.content,
        "moved_sample": answer.sample,
        "nearest_baseline_answer": nearest.content,
        "similarity": similarity,
    }
