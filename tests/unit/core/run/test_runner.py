"""The concurrent runner, driven by small fake providers that implement BaseLLMProvider."""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import promptcanary
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.probes.format import KeywordPresenceProbe
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.pacing import FIRST_ANSWER_REASON, Pacing, Ticket
from promptcanary.core.run.progress import RunProgress
from promptcanary.core.run.provider import BaseLLMProvider, MissingCredentialsError, ProviderError
from promptcanary.core.run.runner import effective_config, run_suite
from promptcanary.core.run.session import (
    BACKOFF_BASE,
    RETRY_AFTER_CAP,
    STOPPED_ERROR,
    Job,
    Paced,
    RunSession,
    backoff_delay,
    plan,
)
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.replay import ReplayProvider
from tests.fakes.sleeps import AsyncSleeps
from tests.fakes.virtual_time import VirtualClock, run_virtual

Answer = Callable[[CanaryPrompt, int, int], Awaitable[str] | str]


@dataclass
class Calls:
    """State shared by a fake provider and its with_config() clones."""

    log: list[tuple[str, int, ProviderConfig, float | None]] = field(default_factory=list)
    attempts: dict[tuple[str, int], int] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    closed: int = 0


class FakeProvider(BaseLLMProvider):
    """Answers ``answer(prompt, sample, attempt)``; raises what the answer raises."""

    def __init__(
        self,
        answer: Answer | None = None,
        *,
        config: ProviderConfig | None = None,
        delay: Callable[[CanaryPrompt], float] | None = None,
    ) -> None:
        super().__init__(config or ProviderConfig(model_id="fake/model"))
        self.calls = Calls()
        self._answer = answer or (lambda prompt, sample, attempt: f"answer to {prompt.text}")
        self._delay = delay

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        raise AssertionError("the runner must use acomplete")

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        calls = self.calls
        key = (prompt.id, sample)
        attempt = calls.attempts.get(key, 0)
        calls.attempts[key] = attempt + 1
        calls.log.append((prompt.id, sample, self.config, timeout))
        calls.in_flight += 1
        calls.peak = max(calls.peak, calls.in_flight)
        try:
            if self._delay is not None:
                await asyncio.sleep(self._delay(prompt))
            text = self._answer(prompt, sample, attempt)
            if not isinstance(text, str):
                text = await text
        finally:
            calls.in_flight -= 1
        calls.finished.append(prompt.id)
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id=self.config.model_id, content=text, sample=sample
        )

    async def aclose(self) -> None:
        self.calls.closed += 1


def make_suite(n: int = 3, *, keyword: str = "answer") -> CanarySuite:
    prompts = [CanaryPrompt(id=f"p{i}", text=f"question {i}") for i in range(n)]
    return CanarySuite("runner-test", prompts, [KeywordPresenceProbe(required_keywords=[keyword])])


def run(
    suite: CanarySuite,
    provider: BaseLLMProvider,
    *,
    sleep: AsyncSleeps | None = None,
    rng: random.Random | None = None,
    **options: Any,
) -> Any:
    options.setdefault("show_progress", False)
    options.setdefault("samples", 1)  # these tests are about the requests, not about auto
    return asyncio.run(
        run_suite(
            suite,
            provider,
            RunOptions(**options),
            sleep=sleep or AsyncSleeps(),
            rng=rng or random.Random(0),
        )
    )


def http_error(status: int, *, retry_after: float | None = None) -> ProviderError:
    return ProviderError(f"HTTP {status} from fake", status_code=status, retry_after=retry_after)


# ── concurrency and order ────────────────────────────────────────────────────


def test_at_most_concurrency_requests_are_in_flight() -> None:
    provider = FakeProvider(delay=lambda prompt: 0.01)

    result = run(make_suite(24), provider, concurrency=4)

    assert provider.calls.peak == 4
    assert len(result.llm_responses) == 24


def test_results_follow_suite_order_when_completion_order_is_reversed() -> None:
    suite = make_suite(6)
    # The first request goes alone (its answer says the rate limit) and is answered at once;
    # the rest leave a few milliseconds apart (no rate-limit headers), and the earlier a
    # prompt, the slower: they finish in reverse order. On a virtual clock: exactly so.
    provider = FakeProvider(
        delay=lambda prompt: 0.0 if prompt.id == "p0" else 0.2 - 0.03 * int(prompt.id[1:])
    )
    clock = VirtualClock()
    options = RunOptions(concurrency=12, samples=2, show_progress=False)
    paced = run_suite(suite, provider, options, rng=random.Random(0), pacing=Pacing(clock=clock))

    result = run_virtual(paced, clock)

    # p0's second sample went first after p0's answer and took no time.
    assert provider.calls.finished[:2] == ["p0", "p0"]
    assert provider.calls.finished[2:4] == ["p5", "p5"]
    assert provider.calls.finished[-2:] == ["p1", "p1"]
    expected = [(f"p{i}", s) for i in range(6) for s in range(2)]
    assert [(r.prompt_id, r.sample) for r in result.llm_responses] == expected
    assert [(r.prompt_id, r.sample) for r in result.probe_results] == expected


# ── retries ──────────────────────────────────────────────────────────────────


def test_transient_error_is_retried_and_retry_after_is_honoured() -> None:
    def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p1" and attempt < 2:
            raise http_error(429, retry_after=7)
        return "answer ok"

    sleeps = AsyncSleeps()
    # A known budget with room (no rate search, whose pacing these sleeps would not move);
    # p1's 429 comes after p2 has gone: the 429's hold of new requests does not meet p2.
    config = ProviderConfig(model_id="fake/model", rpm=60_000)
    provider = FakeProvider(answer, config=config)
    result = run(make_suite(3), provider, sleep=sleeps, max_retries=3)

    p1 = result.responses_for("p1")[0]
    assert not p1.errored and p1.content == "answer ok"
    assert p1.retries == 2
    assert len(sleeps.delays) == 2 and all(d >= 7 for d in sleeps.delays)
    assert result.retry_count == 2


def test_retry_after_is_capped() -> None:
    assert backoff_delay(0, 3600, random.Random(1)) == RETRY_AFTER_CAP


def test_backoff_is_exponential_with_full_jitter() -> None:
    rng = random.Random(3)
    delays = [[backoff_delay(attempt, None, rng) for _ in range(200)] for attempt in range(4)]
    for attempt, values in enumerate(delays):
        assert all(0 <= d <= BACKOFF_BASE * 2**attempt for d in values)
    # jitter: the delays of one attempt are spread, not one value
    assert max(delays[3]) - min(delays[3]) > BACKOFF_BASE


def test_non_transient_error_is_not_retried() -> None:
    def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p0":
            raise http_error(401)
        return "answer"

    provider = FakeProvider(answer)
    sleeps = AsyncSleeps()
    result = run(make_suite(2), provider, sleep=sleeps, max_retries=3)

    assert provider.calls.attempts[("p0", 0)] == 1
    assert sleeps.delays == []
    p0 = result.responses_for("p0")[0]
    assert p0.errored and "401" in (p0.error or "") and p0.retries == 0


def test_persistent_transient_error_ends_errored_after_max_retries() -> None:
    def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p2":
            raise http_error(503)
        return "answer"

    provider = FakeProvider(answer)
    result = run(make_suite(4), provider, max_retries=3)

    assert provider.calls.attempts[("p2", 0)] == 4
    p2 = result.responses_for("p2")[0]
    assert p2.errored and p2.retries == 3
    assert "503" in (p2.error or "") and "3 retries" in (p2.error or "")
    errored = [r for r in result.probe_results if r.errored]
    assert [r.prompt_id for r in errored] == ["p2"]
    assert result.error_count == 1
    # the others were scored normally
    assert all(r.passed for r in result.probe_results if r.prompt_id != "p2")


def test_unexpected_exception_from_a_custom_provider_becomes_an_errored_response() -> None:
    def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p1":
            raise KeyError("boom")
        return "answer"

    provider = FakeProvider(answer)
    result = run(make_suite(3), provider, max_retries=2)

    p1 = result.responses_for("p1")[0]
    assert p1.errored and "KeyError" in (p1.error or "")
    assert provider.calls.attempts[("p1", 0)] == 1
    assert [r.errored for r in result.responses_for("p0") + result.responses_for("p2")] == [
        False,
        False,
    ]


def test_a_hanging_call_is_cut_by_the_timeout_guard_and_retried() -> None:
    async def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p0":
            await asyncio.sleep(30)
        return "answer"

    provider = FakeProvider(answer)
    # A 30 s answer that came back would not be errored: the timeout cut it (pytest-timeout
    # guards the wall clock; speed is bench/'s business).
    result = run(make_suite(2), provider, timeout=0.05, max_retries=1)

    p0 = result.responses_for("p0")[0]
    assert p0.errored and "timed out" in (p0.error or "") and p0.retries == 1
    assert provider.calls.attempts[("p0", 0)] == 2
    assert provider.calls.log[0][3] == 0.05  # the provider was told the timeout too


def test_provider_returning_a_non_response_is_errored() -> None:
    class Broken(FakeProvider):
        async def acomplete(self, prompt: CanaryPrompt, **kwargs: Any) -> Any:
            return {"content": "not a response"}

    result = run(make_suite(1), Broken())

    assert result.llm_responses[0].errored
    assert "dict" in (result.llm_responses[0].error or "")


def test_missing_credentials_propagate_before_any_call() -> None:
    class NoKey(FakeProvider):
        def check_environment(self) -> None:
            raise MissingCredentialsError("model 'fake/model' needs FAKE_API_KEY")

    provider = NoKey()
    with pytest.raises(MissingCredentialsError, match="FAKE_API_KEY"):
        run(make_suite(2), provider)
    assert provider.calls.log == []


# ── configuration ────────────────────────────────────────────────────────────


def test_run_overrides_reach_the_provider_call() -> None:
    base = ProviderConfig(model_id="fake/model", temperature=0.9, max_tokens=999, seed=1)
    provider = FakeProvider(config=base)

    result = run(make_suite(2), provider, temperature=0.0, max_tokens=50, seed=7)

    seen = {(c.temperature, c.max_tokens, c.seed) for _, _, c, _ in provider.calls.log}
    assert seen == {(0.0, 50, 7)}
    assert (result.provider.temperature, result.provider.max_tokens, result.provider.seed) == (
        0.0,
        50,
        7,
    )
    assert provider.config == base  # the caller's provider is not modified


def test_effective_config_keeps_what_is_not_overridden() -> None:
    base = ProviderConfig(model_id="m", temperature=0.5, max_tokens=10, seed=None)
    assert effective_config(base, RunOptions(max_tokens=20)) == base.model_copy(
        update={"max_tokens": 20}
    )
    assert effective_config(base, RunOptions()) is base


def test_each_sample_gets_its_own_seed_and_index() -> None:
    provider = FakeProvider(config=ProviderConfig(model_id="fake/model", seed=10))

    result = run(make_suite(2), provider, samples=3)

    seeds = sorted((pid, sample, c.seed) for pid, sample, c, _ in provider.calls.log)
    assert seeds == [(p, s, 10 + s) for p in ("p0", "p1") for s in range(3)]
    assert [(r.prompt_id, r.sample) for r in result.llm_responses] == [
        (p, s) for p in ("p0", "p1") for s in range(3)
    ]
    assert result.provenance.samples == 3
    assert result.provider.seed == 10


def test_samples_without_a_seed_send_no_seed() -> None:
    provider = FakeProvider(config=ProviderConfig(model_id="fake/model", seed=None))
    run(make_suite(1), provider, samples=2)
    assert [c.seed for _, _, c, _ in provider.calls.log] == [None, None]


def test_secrets_are_redacted_from_the_run_but_reach_the_provider() -> None:
    config = ProviderConfig(
        model_id="fake/model",
        extra_params={
            "api_key": "sk-live-secret",
            "api_base": "http://127.0.0.1:9/v1",
            "extra_headers": {"Authorization": "Bearer abc", "X-Trace": "t1"},
        },
    )
    provider = FakeProvider(config=config)

    result = run(make_suite(1), provider)

    params = result.provider.extra_params
    assert params["api_key"] == "***"
    assert params["extra_headers"] == {"Authorization": "***", "X-Trace": "t1"}
    assert params["api_base"] == "http://127.0.0.1:9/v1"
    assert "sk-live-secret" not in result.model_dump_json()
    assert provider.calls.log[0][2].extra_params["api_key"] == "sk-live-secret"


def test_provenance_and_timing_are_recorded() -> None:
    suite = make_suite(2)
    result = run(suite, FakeProvider(), git_sha="abc123", git_ref="refs/heads/main")

    prov = result.provenance
    assert (prov.suite_hash, prov.probe_config_hash) == (suite.suite_hash, suite.probe_config_hash)
    assert prov.engine_version == promptcanary.__version__
    assert (prov.git_sha, prov.git_ref) == ("abc123", "refs/heads/main")
    assert result.finished_at is not None and result.finished_at >= result.started_at
    assert all(r.latency_ms is not None for r in result.llm_responses)
    assert result.suite_name == "runner-test"


def test_provider_is_closed_once_after_the_run() -> None:
    provider = FakeProvider()
    run(make_suite(3), provider, samples=2)
    assert provider.calls.closed == 1


# ── recording ────────────────────────────────────────────────────────────────


def test_record_writes_a_file_that_replays_to_identical_scores(tmp_path: Path) -> None:
    def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p2":
            raise http_error(400)
        return "answer" if (int(prompt.id[1:]) + sample) % 2 == 0 else "something else"

    suite = make_suite(4)
    recording = tmp_path / "sub" / "rec.jsonl"
    original = run(suite, FakeProvider(answer), samples=2, record=recording)

    assert recording.exists()
    assert not [p for p in recording.parent.iterdir() if p.name != "rec.jsonl"]  # no temp file left
    replayed = run(suite, ReplayProvider(recording), samples=2)

    def summary(result: Any) -> list[tuple[str, int, float, bool, bool]]:
        return [(r.prompt_id, r.sample, r.score, r.passed, r.errored) for r in result.probe_results]

    assert summary(replayed) == summary(original)
    assert {r.score for r in original.probe_results} == {0.0, 1.0}  # both outcomes covered
    assert replayed.responses_for("p2")[0].errored


# ── progress ─────────────────────────────────────────────────────────────────


def test_progress_reports_counts_but_never_model_text() -> None:
    stream = io.StringIO()
    provider = FakeProvider(lambda prompt, sample, attempt: "SECRET MODEL TEXT")
    asyncio.run(
        run_suite(
            make_suite(5),
            provider,
            RunOptions(show_progress=True, samples=1),
            sleep=AsyncSleeps(),
            progress_stream=stream,
        )
    )
    out = stream.getvalue()
    assert "5/5 responses (0 errored, 0 retries)" in out
    assert "SECRET" not in out


class SyncOnlyProvider(BaseLLMProvider):
    """A provider written the way the spec shows: only ``complete``."""

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        if prompt.id == "p1":
            raise RuntimeError("custom provider bug")
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id="sync", content=f"answer ({system_prompt})"
        )


def test_a_provider_with_only_complete_works_and_its_exceptions_are_errored() -> None:
    prompts = [CanaryPrompt(id=f"p{i}", text=f"q{i}") for i in range(3)]
    suite = CanarySuite(
        "sync",
        prompts,
        [KeywordPresenceProbe(required_keywords=["answer"])],
        default_system_prompt="be nice",
    )

    result = run(suite, SyncOnlyProvider(ProviderConfig(model_id="sync")), samples=2)

    p0 = result.responses_for("p0")
    assert [r.content for r in p0] == ["answer (be nice)", "answer (be nice)"]
    assert [r.sample for r in p0] == [0, 1]
    p1 = result.responses_for("p1")
    assert all(r.errored and "RuntimeError: custom provider bug" in (r.error or "") for r in p1)


# ── a session can run more samples for some prompts (adaptive sampling's hook) ──


def test_a_later_round_runs_further_samples_for_a_subset_of_prompts() -> None:
    provider = FakeProvider(config=ProviderConfig(model_id="fake/model", seed=10))
    suite = make_suite(3)
    session = RunSession(suite, provider, RunOptions(), sleep=AsyncSleeps(), rng=random.Random(0))
    progress = RunProgress(0, enabled=False)

    async def two_rounds() -> list[LLMResponse]:
        first = await session.answer(plan(suite.prompts, 2), progress)
        later = [Job(p, sample) for p in suite.prompts[1:2] for sample in (2, 3)]
        more = await session.answer(later, progress)
        return first + more

    responses = asyncio.run(two_rounds())
    assert [(r.prompt_id, r.sample) for r in responses[6:]] == [("p1", 2), ("p1", 3)]
    seeds = {(pid, sample): c.seed for pid, sample, c, _ in provider.calls.log}
    assert seeds[("p1", 2)] == 12 and seeds[("p1", 3)] == 13
    assert len(provider.calls.log) == 8


def test_tasks_alive_stay_bounded_by_concurrency_whatever_the_samples() -> None:
    alive: list[int] = []

    async def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        alive.append(len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        return "answer"

    provider = FakeProvider(answer)

    result = run(make_suite(3), provider, concurrency=2, samples=200)

    assert len(result.llm_responses) == 600
    assert [(r.prompt_id, r.sample) for r in result.llm_responses] == [
        (f"p{p}", i) for p in range(3) for i in range(200)
    ]
    # Workers and their requests' timeout guards, plus the run itself: never one per job.
    assert len(alive) == 600
    assert max(alive) <= 2 * 2 + 4


def test_samples_above_the_cap_are_refused() -> None:
    assert RunOptions(samples=1000).samples == 1000
    with pytest.raises(ValueError, match="≤ 1000, got 1000000"):
        RunOptions(samples=1000000)


# ── stopping ─────────────────────────────────────────────────────────────────


def _stopped_during_a_retry(hanging: str) -> tuple[Any, FakeProvider]:
    """One worker, prompts p0, p1, p2. p1 errors once; the stop comes during its backoff sleep,
    and the sleep swallows the cancellation (as Python 3.11's wait_for does when a result arrives
    with it). ``hanging``: the request that never answers (p1's retry, or p2)."""
    never = asyncio.Event()
    stop = asyncio.Event()

    async def answer(prompt: CanaryPrompt, sample: int, attempt: int) -> str:
        if prompt.id == "p1" and attempt == 0:
            raise http_error(503)
        if (prompt.id, attempt) == (hanging, 1 if hanging == "p1" else 0):
            await never.wait()
        return "answer"

    async def swallowing_sleep(delay: float) -> None:
        if not stop.is_set():
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await never.wait()

    provider = FakeProvider(answer)
    options = RunOptions(samples=1, concurrency=1, max_retries=1, show_progress=False)

    async def stopped_run() -> Any:
        run_ = run_suite(make_suite(3), provider, options, sleep=swallowing_sleep,
                         rng=random.Random(0), stop=stop)  # fmt: skip
        return await asyncio.wait_for(run_, 60)  # the hang guard

    return asyncio.run(stopped_run()), provider


def test_a_stopped_run_pulls_no_job_after_a_swallowed_cancellation() -> None:
    # p2 never answers: a worker that pulled it after the stop would be sent and hang the run.
    result, provider = _stopped_during_a_retry(hanging="p2")

    assert result.incomplete is not None
    assert [c[0] for c in provider.calls.log] == ["p0", "p1", "p1"]  # p2 was never sent
    by_prompt = {r.prompt_id: r for r in result.llm_responses}
    assert by_prompt["p1"].content == "answer"  # the answer that came with the stop is kept
    assert by_prompt["p2"].error == STOPPED_ERROR


def test_a_stopped_run_cancels_again_a_worker_that_swallowed_the_cancellation() -> None:
    # p1's retry never answers: the swallowed cancellation left the worker in a request of its
    # own, which only a second cancellation ends.
    result, provider = _stopped_during_a_retry(hanging="p1")

    by_prompt = {r.prompt_id: r for r in result.llm_responses}
    assert by_prompt["p1"].error == STOPPED_ERROR
    assert by_prompt["p2"].error == STOPPED_ERROR
    assert [c[0] for c in provider.calls.log] == ["p0", "p1", "p1"]


def test_the_pacing_line_says_how_long_from_when_and_every_reason() -> None:
    paced = Paced()
    paced.add(Ticket(sent_at=10.0, tokens=1))
    paced.add(Ticket(sent_at=14.0, tokens=1, waits={FIRST_ANSWER_REASON: 0.5}))
    paced.add(Ticket(sent_at=15.0, tokens=1, waits={"the requests budget": 2.0}))
    paced.rate_limited = 3
    # The first answer's wait is logged, but run.json's paced_seconds counts the budget's only.
    assert (paced.waited, paced.starting) == (2.0, 0.5)
    stream = io.StringIO()
    paced.log("openai/m", stream)
    assert stream.getvalue() == (
        "promptcanary: openai/m: requests waited 2.5 s for the rate limit (from 3.5 s into the "
        f"run); mostly for the requests budget (2.0 s), {FIRST_ANSWER_REASON} (0.5 s); "
        "3 answer(s) were HTTP 429\n"
    )
    quiet = io.StringIO()
    Paced(waited=0.5).log("openai/m", quiet)  # under a second and no 429: not worth a line
    assert quiet.getvalue() == ""
