"""The runner: every prompt of a suite against one provider, answered, scored and recorded.

A fixed number of answers per prompt (``samples: N``), or ``samples: auto``: stage 1 asks every
prompt for its minimum answers (one where the pool shows the prompt deterministic; the first
building stage where there is no pool); each later stage asks only the prompts with an undecided
comparison for about 25% more, and the prompts whose pool is being built (no pool, or a run that
may be promoted on a pool too small to show a drop) up to ``baseline_samples``, until the
:class:`~promptcanary.core.sampling.sequencer.Sequencer` has nothing left to ask. One progress
line per stage says what it asked and what is still open.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

import promptcanary
from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    Provenance,
    ProviderConfig,
)
from promptcanary.core.redact import redact_params
from promptcanary.core.run.answer_phase import AnswerPhase, AnswerService
from promptcanary.core.run.judge import JudgeService
from promptcanary.core.run.judging import canary_requests, judge_info
from promptcanary.core.run.meaning import embedding_info, stage_requests, with_vectors
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.pacing import Pacing
from promptcanary.core.run.progress import RunProgress
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.recording import write_recording
from promptcanary.core.run.scoring import score_responses
from promptcanary.core.run.session import STOPPED_ERROR, Job, RunSession, Sleep, plan
from promptcanary.core.sampling.meaning import MeaningComparisons, meaning_for
from promptcanary.core.sampling.pool import Baseline
from promptcanary.core.sampling.sequencer import Sequencer, pooled_baseline, record_of
from promptcanary.core.spec import SuiteSpec
from promptcanary.core.words import plural


def effective_config(config: ProviderConfig, options: RunOptions) -> ProviderConfig:
    """The provider's configuration with the run's overrides applied."""
    update = {
        name: value
        for name in ("temperature", "max_tokens", "seed")
        if (value := getattr(options, name)) is not None
    }
    # Validated (model_copy is not): a temperature of 5 is refused like in ProviderConfig(...).
    return ProviderConfig.model_validate({**config.model_dump(), **update}) if update else config


def run_suite_blocking(
    suite: SuiteSpec,
    provider: BaseLLMProvider,
    options: RunOptions,
    *,
    baseline: Baseline | None = None,
    services: Sequence[AnswerService] = (),
    pacing: Pacing | None = None,
) -> CanaryRunResult:
    """:func:`run_suite` for synchronous callers, inside or outside a running event loop."""

    def run_in_new_loop() -> CanaryRunResult:
        return asyncio.run(
            run_suite(suite, provider, options, baseline=baseline, services=services, pacing=pacing)
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_in_new_loop()
    # Called from a running event loop (a notebook, an async handler), where asyncio.run()
    # refuses to start: the run gets its own loop in a worker thread.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="promptcanary-run") as pool:
        return pool.submit(run_in_new_loop).result()


# long: one run's path in order (configure, ask, close, record, the result) + the public docstring
async def run_suite(
    suite: SuiteSpec,
    provider: BaseLLMProvider,
    options: RunOptions,
    *,
    baseline: Baseline | None = None,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    progress_stream: TextIO | None = None,
    stop: asyncio.Event | None = None,
    pacing: Pacing | None = None,
    services: Sequence[AnswerService] = (),
) -> CanaryRunResult:
    """Run every prompt of ``suite`` against ``provider``, score the answers, return the run.

    ``services`` (an embedding model, …) serve the answer phase of each stage (see
    :mod:`promptcanary.core.run.answer_phase`), each counted in the run's ``services``.
    ``options`` override the suite's ``defaults:``, which override the provider's configuration.
    With ``samples: auto`` the answers come in stages decided against ``baseline`` (a snapshot,
    whose stored pool counts, or a list of snapshots, newest first); without a baseline every
    prompt is asked enough answers to build a pool that can show a drop (``baseline_samples``,
    fewer for prompts that answer one text every time).

    Once ``stop`` is set no further request is sent; the run is returned with the answers it
    has, the rest errored, and :attr:`CanaryRunResult.incomplete` saying so.

    Raises:
        MissingCredentialsError: from ``provider.check_environment()``, before any request.
    """
    options = options.over(suite.defaults)
    config = effective_config(provider.config, options)
    run_provider = provider.with_config(config) if config != provider.config else provider
    run_provider.check_environment()
    # ``pacing`` shared by several runs paces them to one budget per key (a fresh one otherwise).
    session = RunSession(suite, run_provider, options, sleep=sleep, rng=rng, pacing=pacing)
    phase = _answer_phase(services, options, sleep, rng)
    # A matrix leg answers its shard only; the run still records the whole suite's hashes.
    prompts = options.shard.select(suite.prompts) if options.shard else suite.prompts
    started_at = datetime.now(UTC)
    asking = _Asking(session, suite, prompts, options, progress_stream, stop, phase)
    try:
        responses, results, record = await _answer(asking, baseline)
    finally:
        await session.aclose()
        await phase.aclose()
    finished_at = datetime.now(UTC)
    session.pacing.log(config.model_id, progress_stream, enabled=options.show_progress)
    kept = [response.bounded() for response in responses]  # what is stored
    if options.record is not None:
        write_recording(options.record, kept)
    return CanaryRunResult(
        suite_name=suite.name,
        provider=config.model_copy(update={"extra_params": redact_params(config.extra_params)}),
        probe_results=results,
        llm_responses=kept,
        started_at=started_at,
        finished_at=finished_at,
        provenance=_served_provenance(
            provenance(suite, options, record, responses), suite, responses, phase
        ),
        services=phase.usage(),
        incomplete=STOPPED_ERROR if stop is not None and stop.is_set() else None,
        rate_limited=session.pacing.rate_limited,
        paced_seconds=round(session.pacing.waited, 3),
    )


def _answer_phase(
    services: Sequence[AnswerService],
    options: RunOptions,
    sleep: Sleep,
    rng: random.Random | None,
) -> AnswerPhase:
    """The run's answer phase: its services, within the run's concurrency, timeout and retries."""
    for service in services:
        service.check_environment()
    return AnswerPhase.of(
        services,
        concurrency=options.concurrency,
        timeout=options.timeout,
        max_retries=options.max_retries,
        sleep=sleep,
        rng=rng or random.Random(),
    )


def _served_provenance(
    base: Provenance, suite: SuiteSpec, responses: Sequence[LLMResponse], phase: AnswerPhase
) -> Provenance:
    """``base`` with what the answer services add: the embedding model, the judge."""
    judge = next((s for s in phase.services.values() if isinstance(s, JudgeService)), None)
    capped = judge.capped if judge is not None else 0  # requests the judge's cap refused
    return base.model_copy(
        update={
            "embedding": embedding_info(suite, responses, phase.served),
            "judge": judge_info(suite, phase.served, capped),
        }
    )


@dataclass(frozen=True)
class _Asking:
    """What every part of one run's asking shares: the session, the suite, the prompts it asks
    (a leg: its shard), the options, where progress goes, and the stop signal."""

    session: RunSession
    suite: SuiteSpec
    prompts: Sequence[CanaryPrompt]
    options: RunOptions
    stream: TextIO | None
    stop: asyncio.Event | None
    phase: AnswerPhase

    async def answer(self, jobs: Iterable[Job], progress: RunProgress) -> list[LLMResponse]:
        try:
            return await self.session.answer(jobs, progress, stop=self.stop)
        finally:
            progress.finish()

    async def scored(
        self, responses: list[LLMResponse]
    ) -> tuple[list[LLMResponse], list[ProbeResult]]:
        """The answer phase, then scoring: the answers (with their vectors) and their results."""
        # The judge's canaries ride with the first stage (later stages find them served), and
        # go first: a request cap must leave the judge checked before it judges answers.
        requests = canary_requests(self.suite) + stage_requests(self.suite, responses)
        served = await self.phase.serve(requests) if requests else self.phase.served
        responses = with_vectors(self.suite, responses, served)
        return responses, score_responses(self.suite, responses, served)


async def _answer(
    asking: _Asking, baseline: Baseline | None
) -> tuple[list[LLMResponse], list[ProbeResult], AdaptiveSampling | None]:
    """The answers and their scores: in stages (``samples: auto``) or a fixed number each."""
    options = asking.options
    if not options.adaptive:
        # ``samples: N``: every prompt N times, one progress bar.
        jobs = plan(asking.prompts, options.sample_count)
        total = len(asking.prompts) * options.sample_count
        progress = RunProgress(total, stream=asking.stream, enabled=options.show_progress)
        responses, results = await asking.scored(await asking.answer(jobs, progress))
        return responses, results, None
    answers = await answer_adaptive(asking, baseline)
    return answers.responses, answers.results, answers.record


def provenance(
    suite: SuiteSpec,
    options: RunOptions,
    adaptive: AdaptiveSampling | None = None,
    responses: Sequence[LLMResponse] = (),
) -> Provenance:
    """Where a run came from: the suite's hashes, the engine, the samples and the commit.

    For an adaptive run ``samples`` is the most answers any prompt got.
    """
    if adaptive is not None:
        per_prompt = Counter(r.prompt_id for r in responses)
        samples = max(per_prompt.values(), default=adaptive.min_samples)
    else:
        samples = options.sample_count
    return Provenance(
        suite_hash=suite.suite_hash,
        probe_config_hash=suite.probe_config_hash,
        engine_version=promptcanary.__version__,
        samples=samples,
        adaptive=adaptive,
        git_sha=options.git_sha,
        git_ref=options.git_ref,
        prompt_hashes=suite.prompt_hashes,
        shard=str(options.shard) if options.shard else None,
    )


# ── samples: auto, in stages ──


@dataclass(frozen=True)
class AdaptiveAnswers:
    """What an adaptive run collected: answers and scores in suite order, and its record."""

    responses: list[LLMResponse]
    results: list[ProbeResult]
    record: AdaptiveSampling


async def answer_adaptive(asking: _Asking, baseline: Baseline | None) -> AdaptiveAnswers:
    """Ask the prompts in stages, deciding after each against the pool of
    ``baseline`` (at most ``options.baseline_pool`` runs), read once.

    Once ``stop`` is set, the stage in flight ends (unanswered jobs errored) and none follows.
    """
    suite, prompts, options, stop = asking.suite, asking.prompts, asking.options, asking.stop
    ids = [p.id for p in prompts]
    pooled = pooled_baseline(baseline, options.baseline_pool, suite.prompt_hashes, ids)
    # The whole suite sets it (a matrix leg asks its shard only; every leg must agree).
    comparisons = sum(len(suite.bindings_for(p)) for p in suite.prompts)
    policy = options.policy(comparisons)
    sequencer = Sequencer(pooled.prompts, policy, _meaning_of(asking, baseline))
    targets = sequencer.first_targets(ids)
    asked: dict[str, int] = {}
    responses: list[LLMResponse] = []
    results: list[ProbeResult] = []
    bar = options.show_progress
    while targets:
        stage = sequencer.stages  # the one stage counter: the sequencer's, which plans them
        jobs = [
            Job(p, i)
            for p in prompts
            if p.id in targets
            for i in range(asked.get(p.id, 0), targets[p.id])
        ]
        progress = RunProgress(
            len(jobs),
            stream=asking.stream,
            enabled=bar and stage == 1,  # later stages print a line each
            label=f"promptcanary stage {stage}",
        )
        new, scored = await asking.scored(await asking.answer(jobs, progress))
        responses.extend(new)
        results.extend(scored)
        asked.update(targets)
        today = embedding_info(suite, responses, asking.phase.served)
        # The canaries answered with stage 1: how much of a drop the judged comparisons show.
        judge = judge_info(suite, asking.phase.served)
        shrunk = judge.attenuation if judge is not None else None
        stopped = stop is not None and stop.is_set()
        targets = {} if stopped else sequencer.look(results, responses, today, shrunk)
        if bar:
            _stage_line(asking.stream, stage, len(jobs), len(responses), len(targets))
    order = {pid: n for n, pid in enumerate(ids)}
    responses.sort(key=lambda r: (order.get(r.prompt_id, len(order)), r.sample))
    results.sort(key=lambda r: (order.get(r.prompt_id, len(order)), r.sample))
    record = record_of(
        policy,
        pool_runs=pooled.runs,
        stages=sequencer.stages,
        prompts=len(ids),
        requests=len(responses),
        tokens=sum(r.total_tokens or 0 for r in responses),
    )
    return AdaptiveAnswers(responses, results, record)


def _meaning_of(asking: _Asking, baseline: Baseline | None) -> MeaningComparisons | None:
    """The meaning comparisons of the prompts ``semantic_drift:`` applies to (None without it)."""
    suite, spec = asking.suite, asking.suite.semantic_drift
    if spec is None:
        return None
    compared = [p.id for p in asking.prompts if suite.compares_meaning(p)]
    return meaning_for(
        baseline, asking.options.baseline_pool, compared, suite.prompt_hashes,
        spec.embedding_model, spec.min_shift,
    )  # fmt: skip


def _stage_line(stream: TextIO | None, stage: int, asked: int, total: int, still_open: int) -> None:
    out = stream if stream is not None else sys.stderr
    rest = (
        f"{plural(still_open, 'prompt')} undecided, asking again"
        if still_open
        else "every comparison decided or at max-samples"
    )
    print(
        f"promptcanary: stage {stage}: {plural(asked, 'request')}, {total} so far; {rest}",
        file=out,
        flush=True,
    )
