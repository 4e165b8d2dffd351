"""LiteLLMEmbedder against the fake OpenAI-compatible server's /v1/embeddings, through LiteLLM:
vectors in order, tokens counted, a 429 storm retried then errored, broken vectors refused."""

from __future__ import annotations

import asyncio
import math

import pytest

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure, ServiceRequest, served_output
from promptcanary.core.run.answer_phase import AnswerPhase
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.provider import ProviderError
from promptcanary.providers.errors import ModelConfigError
from promptcanary.providers.litellm import LiteLLMEmbedder
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.sleeps import AsyncSleeps


def _embedder(server: FakeLLMServer) -> LiteLLMEmbedder:
    return LiteLLMEmbedder("openai/fake-embed", api_base=server.url)


def test_vectors_come_back_in_the_texts_order_with_their_tokens(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_of = lambda text: [float(len(text)), 1.0, 0.0]
    batch = asyncio.run(_embedder(llm_server).aembed(["a", "bbb", "cc"], timeout=10))
    assert [v[0] for v in batch.vectors] == [1.0, 3.0, 2.0]
    assert batch.prompt_tokens is not None and batch.prompt_tokens > 0
    (request,) = llm_server.embedding_requests
    assert request["input"] == ["a", "bbb", "cc"] and request["model"] == "fake-embed"


def test_a_429_is_a_transient_error_with_its_retry_after(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_errors = [(429, {"Retry-After": "3"})]
    with pytest.raises(ProviderError) as caught:
        asyncio.run(_embedder(llm_server).aembed(["a"], timeout=10))
    assert caught.value.transient and caught.value.status_code == 429
    assert caught.value.retry_after == pytest.approx(3.0)


def test_a_429_storm_is_retried_then_each_text_errored(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_errors = [(429, {"Retry-After": "1"})] * 10
    sleeps = AsyncSleeps()
    phase = AnswerPhase.of([EmbeddingService(_embedder(llm_server))], max_retries=2, sleep=sleeps)
    served = asyncio.run(
        phase.serve([ServiceRequest(EMBEDDING, "a"), ServiceRequest(EMBEDDING, "b")])
    )
    for text in "ab":
        failure = served_output(served, ServiceRequest(EMBEDDING, text))
        assert isinstance(failure, ServiceFailure) and "429" in failure.reason
    assert len(llm_server.embedding_requests) == 3 and len(sleeps.delays) == 2
    assert phase.usage()[0].errors == 2


def test_the_storm_passing_serves_the_vectors(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_errors = [(503, {})]
    phase = AnswerPhase.of([EmbeddingService(_embedder(llm_server))], sleep=AsyncSleeps())
    served = asyncio.run(phase.serve([ServiceRequest(EMBEDDING, "a")]))
    vector = served_output(served, ServiceRequest(EMBEDDING, "a"))
    assert not isinstance(vector, ServiceFailure)
    assert math.isclose(math.fsum(v * v for v in vector), 1.0)


def test_a_server_whose_vectors_change_length_is_refused(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_of = lambda text: [1.0] * (3 if text == "first" else 5)
    phase = AnswerPhase.of([EmbeddingService(_embedder(llm_server))])
    asyncio.run(phase.serve([ServiceRequest(EMBEDDING, "first")]))
    served = asyncio.run(phase.serve([ServiceRequest(EMBEDDING, "second")]))
    failure = served_output(served, ServiceRequest(EMBEDDING, "second"))
    assert isinstance(failure, ServiceFailure)
    assert "dimension 5 after vectors of dimension 3" in failure.reason


def test_null_values_are_refused_not_used(llm_server: FakeLLMServer) -> None:
    llm_server.embedding_of = lambda text: [None, None]
    phase = AnswerPhase.of([EmbeddingService(_embedder(llm_server))])
    served = asyncio.run(phase.serve([ServiceRequest(EMBEDDING, "a")]))
    failure = served_output(served, ServiceRequest(EMBEDDING, "a"))
    assert isinstance(failure, ServiceFailure)


def test_an_unknown_embedding_model_is_refused_before_any_request() -> None:
    with pytest.raises(ModelConfigError, match="not a model string LiteLLM knows"):
        LiteLLMEmbedder("no-such-embedder-xyz").check_environment()
