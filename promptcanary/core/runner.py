"""The concurrent runner: every (prompt, sample) of a suite against one provider.

Requests run concurrently, at most ``concurrency`` in flight. A transient provider error (429, 5xx,
connection error, timeout) is retried with exponential backoff and full jitter, waiting at least the
server's ``Retry-After``; a non-transient one is not. A request that still fails is recorded as an
*errored* response and the run goes on: one bad prompt never aborts a run. Results come out in
suite order (prompt, then sample) whatever order the requests finish in.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import promptcanary
from promptcanary.core.models import (
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    Provenance,
    ProviderConfig,
)
from promptcanary.core.progress import RunProgress
from promptcanary.core.redact import redact_params
from promptcanary.providers.base import BaseLLMProvider, ProviderError

if TYPE_CHECKING:
    from typing import TextIO

    from promptcanary.core.suite import CanarySuite, RunOptions

Sleep = Callable[[float], Awaitable[object]]

BACKOFF_BASE = 0.5
"""Seconds before the first retry (upper bound of the jittered delay)."""
BACKOFF_CAP = 30.0
"""Upper bound of the exponential part of the delay."""
RETRY_AFTER_CAP = 60.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""


def effective_config(config: ProviderConfig, options: RunOptions) -> ProviderConfig:
    """The provider's configuration with the run's overrides applied."""
    update = {
        name: value
        for name in ("temperature", "max_tokens", "seed")
        if (value := getattr(options, name)) is not None
    }
    return config.model_copy(update=update) if update else config


def timeout_slack(timeout: float) -> float:
    """Grace period over the provider's own timeout before the runner gives up on a call."""
    return min(5.0, max(0.5, timeout * 0.1))


def backoff_delay(attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Delay before retry number ``attempt + 1``: full jitter, at least the server's wish."""
    delay = rng.uniform(0.0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(retry_after, RETRY_AFTER_CAP))
    return delay


async def run_suite(
    suite: CanarySuite,
    provider: BaseLLMProvider,
    options: RunOptions,
    *,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
    progress_stream: TextIO | None = None,
) -> CanaryRunResult:
    """Run every prompt of ``suite`` ``options.samples`` times against ``provider`` and score it.

    Raises:
        MissingCredentialsError: from ``provider.check_environment()``, before any request.
    """
    config = effective_config(provider.config, options)
    run_provider = provider.with_config(config) if config != provider.config else provider
    run_provider.check_environment()

    samples = max(1, options.samples)
    # One provider per sample index: sample i uses seed + i, so repeated samples differ where the
    # provider honours seeds. Cloning is a shallow copy; connections stay shared.
    sample_providers = [
        run_provider
        if i == 0 or config.seed is None
        else run_provider.with_config(config.model_copy(update={"seed": config.seed + i}))
        for i in range(samples)
    ]
    jobs = [(prompt, i) for prompt in suite.prompts for i in range(samples)]
    responses: list[LLMResponse | None] = [None] * len(jobs)
    scores: list[list[ProbeResult]] = [[] for _ in jobs]
    progress = RunProgress(len(jobs), stream=progress_stream, enabled=options.show_progress)
    call = _Caller(
        model_id=config.model_id,
        timeout=options.timeout,
        max_retries=max(0, options.max_retries),
        sleep=sleep,
        rng=rng or random.Random(),
    )
    semaphore = asyncio.Semaphore(max(1, options.concurrency))

    async def one(index: int, prompt: CanaryPrompt, sample: int) -> None:
        # The slot is held through backoff sleeps: under a rate limit, freeing it would only
        # let another request hit the same limit.
        async with semaphore:
            response = await call(
                sample_providers[sample], prompt, suite.system_prompt_for(prompt), sample
            )
        scores[index] = suite.score(prompt, response)  # the whole text
        responses[index] = response.bounded()  # what is kept
        progress.advance(errored=response.errored, retries=response.retries)

    started_at = datetime.now(UTC)
    try:
        await asyncio.gather(*(one(n, prompt, i) for n, (prompt, i) in enumerate(jobs)))
    finally:
        progress.finish()
        await run_provider.aclose()
    finished_at = datetime.now(UTC)

    done = [r for r in responses if r is not None]
    if options.record is not None:
        from promptcanary.providers.replay import write_recording

        write_recording(options.record, done)
    return CanaryRunResult(
        suite_name=suite.name,
        provider=config.model_copy(update={"extra_params": redact_params(config.extra_params)}),
        probe_results=[result for results in scores for result in results],
        llm_responses=done,
        started_at=started_at,
        finished_at=finished_at,
        provenance=Provenance(
            suite_hash=suite.suite_hash,
            probe_config_hash=suite.probe_config_hash,
            engine_version=promptcanary.__version__,
            samples=samples,
            git_sha=options.git_sha,
            git_ref=options.git_ref,
            prompt_hashes=suite.prompt_hashes,
        ),
    )


class _Caller:
    """One (prompt, sample): the call, its timeout guard, its retries, its errored fallback."""

    def __init__(
        self,
        *,
        model_id: str,
        timeout: float,
        max_retries: int,
        sleep: Sleep,
        rng: random.Random,
    ) -> None:
        self.model_id = model_id
        self.timeout = timeout
        self.max_retries = max_retries
        self.sleep = sleep
        self.rng = rng

    async def __call__(
        self, provider: BaseLLMProvider, prompt: CanaryPrompt, system: str | None, sample: int
    ) -> LLMResponse:
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                response = await asyncio.wait_for(
                    provider.acomplete(
                        prompt, system_prompt=system, sample=sample, timeout=self.timeout
                    ),
                    self.timeout + timeout_slack(self.timeout),
                )
                if not isinstance(response, LLMResponse):
                    raise TypeError(f"acomplete() returned {type(response).__name__}")
            except ProviderError as exc:
                error = exc
            except TimeoutError:
                error = ProviderError(
                    f"request timed out after {self.timeout:g} s",
                    model_id=self.model_id,
                    transient=True,
                )
            except Exception as exc:  # a custom provider may raise anything; the run goes on
                return self._errored(prompt, sample, attempt, f"{type(exc).__name__}: {exc}")
            else:
                return self._finish(response, prompt, sample, attempt, started)
            if not error.transient or attempt >= self.max_retries:
                return self._errored(prompt, sample, attempt, describe(error, attempt))
            await self.sleep(backoff_delay(attempt, error.retry_after, self.rng))
            attempt += 1

    def _finish(
        self,
        response: LLMResponse,
        prompt: CanaryPrompt,
        sample: int,
        retries: int,
        started: float,
    ) -> LLMResponse:
        update: dict[str, object] = {}
        if response.prompt_id != prompt.id:
            update["prompt_id"] = prompt.id
        if response.sample != sample:
            update["sample"] = sample
        if response.retries != retries:
            update["retries"] = retries
        if response.latency_ms is None:
            update["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
        return response.model_copy(update=update) if update else response

    def _errored(self, prompt: CanaryPrompt, sample: int, retries: int, reason: str) -> LLMResponse:
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.model_id,
            error=reason,
            retries=retries,
            sample=sample,
        )


def describe(error: ProviderError, retries: int) -> str:
    """The errored response's reason: the provider's message, its status and the retries spent."""
    reason = str(error) or type(error).__name__
    if error.status_code is not None and str(error.status_code) not in reason:
        reason = f"HTTP {error.status_code}: {reason}"
    if retries:
        reason += f" (after {retries} {'retry' if retries == 1 else 'retries'})"
    return reason
