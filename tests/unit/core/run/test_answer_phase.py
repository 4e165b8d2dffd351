"""The answer phase: batching, de-duplication, concurrency, retries, counts, broken vectors, and
the runner's use of it (vectors on the answers, served probes scored from its outputs)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import pytest

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult, ProviderConfig
from promptcanary.core.probes.served import (
    EMBEDDING,
    Served,
    ServedProbe,
    ServiceFailure,
    ServiceRequest,
    served_output,
)
from promptcanary.core.run.answer_phase import AnswerPhase, AnswerService, ServiceBatch
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.provider import BaseLLMProvider, ProviderError
from promptcanary.core.run.runner import run_suite
from promptcanary.core.spec import SemanticDriftSpec, SuiteSpec
from promptcanary.core.vectors import CHECK_TEXT, decode, dot
from tests.fakes.embedder_fake import FakeEmbedder, hashed_vector
from tests.fakes.sleeps import AsyncSleeps


def embed(*texts: str) -> list[ServiceRequest]:
    return [ServiceRequest(EMBEDDING, t) for t in texts]


def phase_of(embedder: FakeEmbedder, *, batch_size: int = 64, **knobs: Any) -> AnswerPhase:
    return AnswerPhase.of([EmbeddingService(embedder, batch_size=batch_size)], **knobs)


def test_equal_texts_are_embedded_once_per_run_across_calls() -> None:
    embedder = FakeEmbedder()
    phase = phase_of(embedder)
    asyncio.run(phase.serve(embed("a", "b", "a")))
    served = asyncio.run(phase.serve(embed("b", "c")))
    assert embedder.texts == ["a", "b", "c"]
    for text in "abc":
        vector = served_output(served, ServiceRequest(EMBEDDING, text))
        assert math.isclose(math.fsum(v * v for v in vector), 1.0)  # unit length
        raw = hashed_vector(text)
        assert dot(vector, raw) > 0.999 * math.sqrt(math.fsum(v * v for v in raw))
    (usage,) = phase.usage()
    assert (usage.service, usage.model_id, usage.requests, usage.items) == (
        "embedding",
        "fake/embed",
        2,
        3,
    )
    assert usage.tokens == 9 and usage.cost_usd == pytest.approx(0.002)


def test_batches_run_concurrently_within_the_concurrency() -> None:
    embedder = FakeEmbedder(delay=0.01)
    phase = phase_of(embedder, batch_size=2, concurrency=2)
    asyncio.run(phase.serve(embed(*(f"t{i}" for i in range(9)))))
    assert [len(c) for c in embedder.calls] == [2, 2, 2, 2, 1]
    assert embedder.peak == 2
    assert phase.usage()[0].requests == 5


def test_a_rate_limit_storm_is_retried_with_backoff_then_errored_not_raised() -> None:
    storm = [ProviderError("HTTP 429 slow down", status_code=429, retry_after=2.0)] * 3
    sleeps = AsyncSleeps()
    embedder = FakeEmbedder(script=list(storm))
    phase = phase_of(embedder, max_retries=2, sleep=sleeps)
    served = asyncio.run(phase.serve(embed("x")))
    failure = served_output(served, ServiceRequest(EMBEDDING, "x"))
    assert isinstance(failure, ServiceFailure)
    assert "429" in failure.reason and "after 2 retries" in failure.reason
    assert len(sleeps.delays) == 2 and min(sleeps.delays) >= 2.0  # Retry-After honoured
    usage = phase.usage()[0]
    assert (usage.requests, usage.errors, usage.tokens) == (3, 1, 0)


def test_a_transient_error_then_success_is_served() -> None:
    embedder = FakeEmbedder(script=[ProviderError("HTTP 503", status_code=503)])
    phase = phase_of(embedder, sleep=AsyncSleeps())
    served = asyncio.run(phase.serve(embed("x")))
    assert not isinstance(served_output(served, ServiceRequest(EMBEDDING, "x")), ServiceFailure)
    assert phase.usage()[0].requests == 2


def test_a_permanent_error_is_not_retried() -> None:
    embedder = FakeEmbedder(script=[ProviderError("HTTP 404 no such model", status_code=404)])
    phase = phase_of(embedder, sleep=AsyncSleeps())
    served = asyncio.run(phase.serve(embed("x")))
    failure = served_output(served, ServiceRequest(EMBEDDING, "x"))
    assert isinstance(failure, ServiceFailure) and "no such model" in failure.reason
    assert len(embedder.calls) == 1


def test_an_unexpected_exception_becomes_a_failure() -> None:
    embedder = FakeEmbedder(script=[RuntimeError("boom")])
    served = asyncio.run(phase_of(embedder).serve(embed("x")))
    failure = served_output(served, ServiceRequest(EMBEDDING, "x"))
    assert isinstance(failure, ServiceFailure) and "RuntimeError: boom" in failure.reason


@pytest.mark.parametrize(
    ("vectors", "expected"),
    [
        (lambda texts: [[float("nan")] * 4 for _ in texts], "NaN"),
        (lambda texts: [[] for _ in texts], "empty"),
        (lambda texts: [[0.0] * 4 for _ in texts], "all zeros"),
        (lambda texts: [[1.0] * 4], "returned 1 vector(s) for 2 text(s)"),
    ],
)
def test_broken_vectors_are_failures(vectors: object, expected: str) -> None:
    embedder = FakeEmbedder(script=[vectors])  # type: ignore[list-item]
    served = asyncio.run(phase_of(embedder).serve(embed("x", "y")))
    for text in ("x", "y"):
        failure = served_output(served, ServiceRequest(EMBEDDING, text))
        assert isinstance(failure, ServiceFailure) and expected in failure.reason


def test_a_vector_of_another_dimension_is_refused() -> None:
    embedder = FakeEmbedder(
        script=[lambda texts: [[1.0, 0.0, 0.0]], lambda texts: [[1.0, 0.0, 0.0, 0.0]]]
    )
    phase = phase_of(embedder)
    asyncio.run(phase.serve(embed("x")))
    served = asyncio.run(phase.serve(embed("y")))
    failure = served_output(served, ServiceRequest(EMBEDDING, "y"))
    assert isinstance(failure, ServiceFailure)
    assert "dimension 4 after vectors of dimension 3" in failure.reason


def test_an_empty_answer_is_not_sent() -> None:
    embedder = FakeEmbedder()
    served = asyncio.run(phase_of(embedder).serve(embed("  ", "z")))
    assert embedder.texts == ["z"]
    failure = served_output(served, ServiceRequest(EMBEDDING, "  "))
    assert isinstance(failure, ServiceFailure) and "empty" in failure.reason


def test_a_service_the_run_lacks_is_a_failure_that_says_so() -> None:
    served = asyncio.run(AnswerPhase.of([]).serve(embed("x")))
    failure = served_output(served, ServiceRequest(EMBEDDING, "x"))
    assert isinstance(failure, ServiceFailure) and "no embedding service" in failure.reason


class _Unpriced(AnswerService):
    name = "judge"

    @property
    def model_id(self) -> str:
        return "fake/judge"

    async def serve(self, payloads: Sequence[object], *, timeout: float) -> ServiceBatch:
        return ServiceBatch([f"verdict:{p}" for p in payloads], 5, None)


def test_services_are_counted_apart_and_an_unpriced_one_has_no_cost() -> None:
    phase = AnswerPhase.of([EmbeddingService(FakeEmbedder()), _Unpriced()])
    requests = [*embed("a"), ServiceRequest("judge", {"answer": "a"})]
    served = asyncio.run(phase.serve(requests))
    assert served_output(served, requests[1]) == "verdict:{'answer': 'a'}"
    usage = {u.service: u for u in phase.usage()}
    assert usage["embedding"].cost_usd == pytest.approx(0.001)
    assert usage["judge"].cost_usd is None and usage["judge"].tokens == 5


# ── through the runner ──


class _Echo(BaseLLMProvider):
    def __init__(self) -> None:
        super().__init__(ProviderConfig(model_id="fake/model"))

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(prompt_id=prompt.id, provider_model_id="fake/model", content=prompt.text)


class _LengthOfVector(ServedProbe):
    """Passes when the answer's embedding was served (a probe that reads the phase)."""

    probe_id = "test_served_vector"

    def requests_for(self, prompt: CanaryPrompt, response: LLMResponse) -> list[ServiceRequest]:
        return [ServiceRequest(EMBEDDING, response.content)]

    def evaluate_served(
        self, prompt: CanaryPrompt, response: LLMResponse, served: Served
    ) -> ProbeResult:
        output = served_output(served, self.requests_for(prompt, response)[0])
        if isinstance(output, ServiceFailure):
            return self.failed(prompt, output)
        return self._make_result(prompt.id, passed=True, score=1.0, details=f"d={len(output)}")


def _suite(tags: tuple[str, ...] = ()) -> SuiteSpec:
    prompts = [
        CanaryPrompt(id="free", text="Tell me about plans", tags=["free-text"]),
        CanaryPrompt(id="other", text="Say hi"),
    ]
    return SuiteSpec(
        "meaning",
        prompts,
        [_LengthOfVector()],
        semantic_drift=SemanticDriftSpec("fake/embed", apply_to_tags=tags),
    )


def test_the_runner_embeds_compared_answers_and_scores_served_probes() -> None:
    embedder = FakeEmbedder()
    run = asyncio.run(
        run_suite(
            _suite(("free-text",)),
            _Echo(),
            RunOptions(samples=2, show_progress=False),
            services=[EmbeddingService(embedder)],
        )
    )
    # Each distinct text once: two prompts' texts and the check text, in one request.
    assert sorted(embedder.texts) == sorted(["Tell me about plans", "Say hi", CHECK_TEXT])
    assert len(embedder.calls) == 1
    free = [r for r in run.llm_responses if r.prompt_id == "free"]
    other = [r for r in run.llm_responses if r.prompt_id == "other"]
    assert all(r.embedding for r in free) and not any(r.embedding for r in other)
    vector = decode(free[0].embedding or "")
    assert dot(vector, hashed_vector("Tell me about plans")) > 0  # the text's own vector
    assert run.provenance.embedding is not None
    assert (run.provenance.embedding.model_id, run.provenance.embedding.dimension) == (
        "fake/embed",
        16,
    )
    assert all(r.passed and r.details == "d=16" for r in run.probe_results)
    (usage,) = run.services
    assert (usage.service, usage.requests, usage.items) == ("embedding", 1, 3)


def test_without_an_embedding_service_served_probes_are_errored_not_crashed() -> None:
    run = asyncio.run(run_suite(_suite(), _Echo(), RunOptions(samples=1, show_progress=False)))
    assert all(r.errored and "no embedding service" in r.details for r in run.probe_results)
    assert not any(r.embedding for r in run.llm_responses)
    assert run.provenance.embedding is not None
    assert "no embedding service" in run.provenance.embedding.errors[0]
