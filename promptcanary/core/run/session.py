"""The requests of one run: concurrency, retries with backoff, timeouts, per-sample seeds.

Requests run concurrently, at most ``concurrency`` in flight. A transient provider error (429, 5xx,
connection error, timeout) is retried with exponential backoff and full jitter, waiting at least the
server's ``Retry-After``; a non-transient one is not. A request that still fails is recorded as an
*errored* response and the run goes on: one bad prompt never aborts a run. Answers come out in the
jobs' order whatever order the requests finish in.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from promptcanary.core.models import CanaryPrompt, LLMResponse
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.pacing import FIRST_ANSWER_REASON, Limiter, Pacing, Ticket
from promptcanary.core.run.progress import RunProgress
from promptcanary.core.run.provider import BaseLLMProvider, ProviderError
from promptcanary.core.run.rate_headers import RateLimitHeaders, parse_rate_limit_headers
from promptcanary.core.run.rate_start import RAMP_REASON
from promptcanary.core.spec import SuiteSpec

Sleep = Callable[[float], Awaitable[object]]

BACKOFF_BASE = 0.5
"""Seconds before the first retry (upper bound of the jittered delay)."""
BACKOFF_CAP = 30.0
"""Upper bound of the exponential part of the delay."""
PACING_LOG_SECONDS = 1.0
"""Waits for the rate limit shorter than this in a whole run are not worth a log line."""
RETRY_AFTER_CAP = 60.0
"""A server's ``Retry-After`` is honoured up to this many seconds."""


STOPPED_ERROR = "stopped before an answer: the run was stopped"
"""The error of a job the run stopped before answering (see ``run_suite``'s ``stop``)."""


def timeout_slack(timeout: float) -> float:
    """Grace period over the provider's own timeout before the runner gives up on a call."""
    return min(5.0, max(0.5, timeout * 0.1))


def timed_out(timeout: float, model_id: str) -> ProviderError:
    """The transient error of a call that outlived its timeout and slack (retried like others)."""
    message = f"request timed out after {timeout:g} s"
    return ProviderError(message, model_id=model_id, transient=True)


def backoff_delay(attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Delay before retry number ``attempt + 1``: full jitter, at least the server's wish."""
    delay = rng.uniform(0.0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(retry_after, RETRY_AFTER_CAP))
    return delay


@dataclass(frozen=True)
class Job:
    """One request of a run: a prompt and the index of the sample it produces."""

    prompt: CanaryPrompt
    sample: int


CANCEL_REPEAT = 1.0
"""Seconds a stopping run waits for its cancelled workers before cancelling them again."""


def plan(prompts: Sequence[CanaryPrompt], samples: int) -> Iterator[Job]:
    """Samples 0 … ``samples - 1`` of every prompt, in suite order, made as they are asked for."""
    return (Job(p, i) for p in prompts for i in range(samples))


async def _until_done_or_stopped(
    workers: set[asyncio.Task[None]], stop: asyncio.Event | None
) -> None:
    """Wait until every worker is done (a worker's exception is raised) or ``stop`` is set."""
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    running = set(workers)
    try:
        while running:
            watched = running | ({stopped} if stopped is not None else set())
            done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            for task in done & running:
                running.discard(task)
                task.result()
            if stopped is not None and stopped in done:
                return
    finally:
        if stopped is not None:
            stopped.cancel()
            await asyncio.gather(stopped, return_exceptions=True)


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> None:
    """Cancel every task and wait for it; a cancellation that was swallowed (see
    :meth:`RunSession.answer`) is sent again until the task ends."""
    pending = set(tasks)
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=CANCEL_REPEAT)
    # Every worker's outcome is retrieved, so a stopped run logs no stray traceback.
    await asyncio.gather(*tasks, return_exceptions=True)


class RunSession:
    """The requests of one run against one provider: concurrency, retries, per-sample seeds.

    ``answer`` may be called more than once (e.g. extra samples for some prompts); every call
    shares the concurrency limit and the provider clones.
    """

    def __init__(
        self,
        suite: SuiteSpec,
        provider: BaseLLMProvider,
        options: RunOptions,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        pacing: Pacing | None = None,
    ) -> None:
        self.suite = suite
        self.config = provider.config
        self._provider = provider
        self._clones: dict[int, BaseLLMProvider] = {}
        # Models on one key and endpoint share one limiter (when the caller shares the Pacing).
        self.limiter = (pacing or Pacing()).limiter(
            provider.rate_limit_scope(), rpm=self.config.rpm, tpm=self.config.tpm
        )
        self._call = _Caller(
            model_id=self.config.model_id,
            timeout=options.timeout,
            max_retries=max(0, options.max_retries),
            sleep=sleep,
            rng=rng or random.Random(),
            limiter=self.limiter,
            first_burst=max(1, options.concurrency),
        )
        self._workers = max(1, options.concurrency)
        self._semaphore = asyncio.Semaphore(self._workers)

    def provider_for(self, sample: int) -> BaseLLMProvider:
        """Sample i asks with seed + i, so repeated samples differ where seeds are honoured.

        Cloning is a shallow copy; connections stay shared.
        """
        seed = self.config.seed
        if sample == 0 or seed is None:
            return self._provider
        if sample not in self._clones:
            clone = self.config.model_copy(update={"seed": seed + sample})
            self._clones[sample] = self._provider.with_config(clone)
        return self._clones[sample]

    async def answer(
        self, jobs: Iterable[Job], progress: RunProgress, *, stop: asyncio.Event | None = None
    ) -> list[LLMResponse]:
        """One response per job, in the jobs' order whatever order they finish in; once ``stop``
        is set, no more requests: unanswered jobs are errored (:data:`STOPPED_ERROR`).

        ``concurrency`` workers pull the jobs one at a time, so what is alive before the answers
        arrive does not grow with the number of jobs (``samples``)."""
        pending = enumerate(jobs)
        answered: dict[int, LLMResponse] = {}
        asked: dict[int, Job] = {}
        stopping = False

        async def worker() -> None:
            for index, job in pending:
                asked[index] = job
                response = await self._one(job, progress)
                # A cancellation can be swallowed (Python 3.11's wait_for returns a result that
                # arrived with it; a client may turn it into its own error): once stopping, an
                # errored job stays unanswered and the worker pulls no other job.
                if not (stopping and response.errored):
                    answered[index] = response
                    del asked[index]
                if stopping:
                    return

        workers = {asyncio.ensure_future(worker()) for _ in range(self._workers)}
        try:
            await _until_done_or_stopped(workers, stop)
        finally:
            stopping = True
            await _cancel_all(workers)
        # Stopped: in-flight requests were abandoned; they and the jobs never pulled become
        # errored responses, so what was answered is kept.
        unanswered = {**asked, **dict(pending)}
        total = len(answered) + len(unanswered)
        return [
            answered[i]
            if i in answered
            else self._call.errored(unanswered[i].prompt, unanswered[i].sample, 0, STOPPED_ERROR)
            for i in range(total)
        ]

    async def _one(self, job: Job, progress: RunProgress) -> LLMResponse:
        # The slot is held through backoff sleeps: under a rate limit, freeing it would only
        # let another request hit the same limit.
        async with self._semaphore:
            response = await self._call(
                self.provider_for(job.sample),
                job.prompt,
                self.suite.system_prompt_for(job.prompt),
                job.sample,
            )
        progress.advance(errored=response.errored, retries=response.retries)
        return response

    @property
    def pacing(self) -> Paced:
        """What pacing did to this session's requests."""
        return self._call.paced

    async def aclose(self) -> None:
        await self._provider.aclose()


@dataclass
class Paced:
    """One session's pacing: 429 answers, seconds waited, and why (the longest waits' reason)."""

    rate_limited: int = 0
    waited: float = 0.0
    """Seconds waited for the budget (``paced_seconds``; the waits for the key's first answers
    are not counted: a round trip or two at the start, which every run has)."""
    starting: float = 0.0
    """Seconds waited for the key's first answers (:mod:`.rate_start`)."""
    reasons: dict[str, float] | None = None
    started: float | None = None
    """When the first request was asked for (the limiter's clock)."""
    slowed: float | None = None
    """Seconds into the run when pacing first made a request wait."""

    def log(self, model: str, stream: TextIO | None, *, enabled: bool = True) -> None:
        """One line when pacing slowed the run (a second or more) or the provider said 429:
        how long, from when, and every reason with its share."""
        total = self.waited + self.starting
        if not enabled or (total < PACING_LOG_SECONDS and not self.rate_limited):
            return
        line = f"promptcanary: {model}: requests waited {total:.1f} s for the rate limit"
        if self.slowed is not None:
            line += f" (from {self.slowed:.1f} s into the run)"
        parts = [line]
        if self.reasons:
            ranked = sorted(self.reasons.items(), key=lambda r: -r[1])
            parts.append("mostly for " + ", ".join(f"{why} ({s:.1f} s)" for why, s in ranked))
        if self.rate_limited:
            parts.append(f"{self.rate_limited} answer(s) were HTTP 429")
        print("; ".join(parts), file=stream if stream is not None else sys.stderr, flush=True)

    def add(self, ticket: Ticket) -> None:
        asked = ticket.sent_at - ticket.waited
        if self.started is None:
            self.started = asked
        if ticket.waits and self.slowed is None:
            self.slowed = max(0.0, asked - self.started)
        for reason, seconds in ticket.waits.items():
            if reason in (FIRST_ANSWER_REASON, RAMP_REASON):
                self.starting += seconds
            else:
                self.waited += seconds
            self.reasons = self.reasons or {}
            self.reasons[reason] = self.reasons.get(reason, 0.0) + seconds


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
        limiter: Limiter,
        first_burst: int | None = None,
    ) -> None:
        self.model_id = model_id
        self.timeout = timeout
        self.max_retries = max_retries
        self.sleep = sleep
        self.rng = rng
        self.limiter = limiter
        self.first_burst = first_burst
        self.paced = Paced()

    async def __call__(
        self, provider: BaseLLMProvider, prompt: CanaryPrompt, system: str | None, sample: int
    ) -> LLMResponse:
        attempt = 0
        chars = len(prompt.text) + len(system or "")
        while True:
            estimate = self.limiter.tokens.estimate(chars, provider.config.max_tokens)
            ticket = await self.limiter.acquire(
                estimate, self.sleep, retry=attempt > 0, first_burst=self.first_burst
            )
            self.paced.add(ticket)
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
                error = timed_out(self.timeout, self.model_id)
            except Exception as exc:  # a custom provider may raise anything; the run goes on
                self.limiter.settle(ticket)
                return self.errored(prompt, sample, attempt, f"{type(exc).__name__}: {exc}")
            except BaseException:  # cancelled: the request no longer counts as in flight
                self.limiter.settle(ticket)
                raise
            else:
                self._settle_answer(ticket, response, chars)
                return self._finish(response, prompt, sample, attempt, started)
            self._settle_error(ticket, error)
            if not error.transient or attempt >= self.max_retries:
                return self.errored(prompt, sample, attempt, describe(error, attempt))
            await self.sleep(backoff_delay(attempt, error.retry_after, self.rng))
            attempt += 1

    def _settle_answer(self, ticket: Ticket, response: LLMResponse, chars: int) -> None:
        self.limiter.tokens.learn(chars, response.prompt_tokens, response.completion_tokens)
        used = response.total_tokens
        if used is None and response.prompt_tokens is not None:
            used = response.prompt_tokens + (response.completion_tokens or 0)
        self.limiter.settle(ticket, headers=_headers(response.rate_limit_headers), used_tokens=used)

    def _settle_error(self, ticket: Ticket, error: ProviderError) -> None:
        limited = error.status_code == 429
        self.paced.rate_limited += limited
        self.limiter.settle(
            ticket,
            headers=_headers(error.rate_limit_headers),
            rate_limited=limited,
            retry_after=error.retry_after,
        )

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

    def errored(self, prompt: CanaryPrompt, sample: int, retries: int, reason: str) -> LLMResponse:
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.model_id,
            error=reason,
            retries=retries,
            sample=sample,
        )


def _headers(headers: dict[str, str] | None) -> RateLimitHeaders | None:
    return parse_rate_limit_headers(headers, now=time.time()) if headers else None


def describe(error: ProviderError, retries: int) -> str:
    """The errored response's reason: the provider's message, its status and the retries spent."""
    reason = str(error) or type(error).__name__
    if error.status_code is not None and str(error.status_code) not in reason:
        reason = f"HTTP {error.status_code}: {reason}"
    if retries:
        reason += f" (after {retries} {'retry' if retries == 1 else 'retries'})"
    return reason
