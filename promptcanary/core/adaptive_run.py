"""``samples: auto`` in the runner: stages of requests until every comparison is decided.

Stage 1 asks every prompt for its minimum answers (one where the baseline pool held a single
answer text); each later stage asks only the prompts with an undecided comparison for about 25%
more, until :class:`promptcanary.core.adaptive.Sequencer` has nothing left to ask or
``max_samples`` is reached. One progress line per stage says what it asked and what is still open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from promptcanary.core.adaptive import Sequencer, record_of
from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryPrompt,
    LLMResponse,
    PoolEntry,
    ProbeResult,
)
from promptcanary.core.pool import pooled_prompts
from promptcanary.core.progress import RunProgress
from promptcanary.core.runner import Job
from promptcanary.core.scoring import score_responses
from promptcanary.core.sequential import Policy

if TYPE_CHECKING:
    from promptcanary.core.runner import RunSession
    from promptcanary.core.suite import CanarySuite


@dataclass(frozen=True)
class AdaptiveAnswers:
    """What an adaptive run collected: answers and scores in suite order, and its record."""

    responses: list[LLMResponse]
    results: list[ProbeResult]
    record: AdaptiveSampling


async def answer_adaptive(
    session: RunSession,
    suite: CanarySuite,
    policy: Policy,
    entries: Sequence[PoolEntry],
    *,
    stream: TextIO | None = None,
    show_progress: bool = True,
    stop: asyncio.Event | None = None,
    prompts: Sequence[CanaryPrompt] | None = None,
) -> AdaptiveAnswers:
    """Ask ``suite``'s prompts in stages, deciding against the pool ``entries`` after each.

    Once ``stop`` is set, the stage in flight ends (unanswered jobs errored) and none follows.
    """
    asking = list(suite.prompts if prompts is None else prompts)  # a leg: its shard
    ids = [p.id for p in asking]
    pooled = pooled_prompts(entries, suite.prompt_hashes, ids)
    sequencer = Sequencer(pooled, policy)
    targets = sequencer.first_targets(ids)
    asked: dict[str, int] = {}
    responses: list[LLMResponse] = []
    results: list[ProbeResult] = []
    stage = 0
    while targets:
        stage += 1
        jobs = [
            Job(p, i)
            for p in asking
            if p.id in targets
            for i in range(asked.get(p.id, 0), targets[p.id])
        ]
        new = await _stage(session, jobs, stage, stream=stream, bar=show_progress, stop=stop)
        responses.extend(new)
        results.extend(score_responses(suite, new))
        asked.update(targets)
        targets = {} if stop is not None and stop.is_set() else sequencer.look(results, responses)
        if show_progress:
            _stage_line(stream, stage, len(jobs), len(responses), len(targets))
    order = {pid: n for n, pid in enumerate(ids)}
    responses.sort(key=lambda r: (order.get(r.prompt_id, len(order)), r.sample))
    results.sort(key=lambda r: (order.get(r.prompt_id, len(order)), r.sample))
    record = record_of(
        policy,
        pool_runs=len(entries),
        stages=stage,
        prompts=len(ids),
        requests=len(responses),
        tokens=sum(r.total_tokens or 0 for r in responses),
    )
    return AdaptiveAnswers(responses, results, record)


async def _stage(
    session: RunSession,
    jobs: list[Job],
    stage: int,
    *,
    stream: TextIO | None,
    bar: bool,
    stop: asyncio.Event | None,
) -> list[LLMResponse]:
    """One stage's answers, with a progress bar for the first stage (later ones print a line)."""
    progress = RunProgress(
        len(jobs), stream=stream, enabled=bar and stage == 1, label=f"promptcanary stage {stage}"
    )
    try:
        return await session.answer(jobs, progress, stop=stop)
    finally:
        progress.finish()


def _stage_line(stream: TextIO | None, stage: int, asked: int, total: int, still_open: int) -> None:
    import sys

    out = stream if stream is not None else sys.stderr
    rest = (
        f"{still_open} prompt(s) undecided, asking again"
        if still_open
        else "every comparison decided or at max-samples"
    )
    print(
        f"promptcanary: stage {stage}: {asked} request(s), {total} so far; {rest}",
        file=out,
        flush=True,
    )
