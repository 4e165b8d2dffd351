"""The real-model layer's embedding server: llama.cpp (llama-cpp-python's server with
``--embedding True``) serving ``/v1/embeddings`` with the Gemma 3 270M GGUF beside the chat server,
reached through LiteLLM and the answer phase. Gemma is a generative model and the server pools
nothing: it answers one vector per *token*. The engine must refuse that shape with a clear reason
(every text errored, no vector stored, no verdict), never crash or guess a pooling. Two requests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure, ServiceRequest, served_output
from promptcanary.core.run.answer_phase import AnswerPhase
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.providers.litellm import LiteLLMEmbedder
from scripts import local_model

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(420)]


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[local_model.LocalServer]:
    if not local_model.is_installed():
        pytest.fail("the local model is not installed: run `make model-install`", pytrace=False)
    with local_model.start(embedding=True) as server:
        yield server


def test_per_token_vectors_are_refused_with_the_reason(
    embedding_server: local_model.LocalServer,
) -> None:
    embedder = LiteLLMEmbedder(
        f"openai/{local_model.MODEL_ALIAS}", api_base=embedding_server.api_base
    )
    phase = AnswerPhase.of([EmbeddingService(embedder)], max_retries=1)
    texts = ["We recommend the Pro plan for a team of five.", "We recommend the Basic plan."]
    served = asyncio.run(phase.serve([ServiceRequest(EMBEDDING, t) for t in texts]))
    for text in texts:
        failure = served_output(served, ServiceRequest(EMBEDDING, text))
        assert isinstance(failure, ServiceFailure)
        assert "one per token" in failure.reason
    (usage,) = phase.usage()
    assert usage.requests == 1 and usage.errors == 2 and usage.tokens > 0
