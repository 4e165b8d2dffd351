"""Embeddings from a real model: llama.cpp serving Gemma 3 270M as an embedding server
(``scripts/embedding_server.py``: llama-cpp-python's server whose contexts pool each text's token
vectors by their mean, one vector per text).

* **Pooled vectors**: through LiteLLM and the answer phase, each distinct text gets one finite
  vector of one dimension, served once per run.

Only the mechanism is tested here. Whether Gemma's mean-pooled vectors tell meanings apart was
tried (10 no-change pull requests, a system prompt changed behind the suite) and they do not
reliably: an empty answer has nothing to embed, and a changed system prompt came out "same".
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure, ServiceRequest, served_output
from promptcanary.core.run.answer_phase import AnswerPhase
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.providers.litellm import LiteLLMEmbedder
from scripts import local_model

pytestmark = [pytest.mark.real_model]


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[local_model.LocalServer]:
    if not local_model.is_installed():
        pytest.fail("the local model is not installed: run `make model-install`", pytrace=False)
    try:
        server = local_model.start(embedding=True)
    except local_model.ModelSetupError as exc:
        pytest.fail(f"the embedding server did not start: {exc}", pytrace=False)
    with server:
        yield server


@pytest.mark.timeout(420)
def test_each_text_gets_one_pooled_vector(embedding_server: local_model.LocalServer) -> None:
    embedder = LiteLLMEmbedder(
        f"openai/{local_model.MODEL_ALIAS}", api_base=embedding_server.api_base
    )
    phase = AnswerPhase.of([EmbeddingService(embedder)], max_retries=1)
    texts = ["We recommend the Pro plan for a team of five.", "Arr, the treasure be buried."]
    requests = [ServiceRequest(EMBEDDING, t) for t in [*texts, texts[0]]]
    served = asyncio.run(phase.serve(requests))
    vectors = [served_output(served, ServiceRequest(EMBEDDING, t)) for t in texts]
    for vector in vectors:
        assert not isinstance(vector, ServiceFailure), vector
        assert all(isinstance(v, float) for v in vector)
    assert len(vectors[0]) == len(vectors[1]) > 1
    assert vectors[0] != vectors[1]
    (usage,) = phase.usage()
    assert usage.items == 2 and usage.errors == 0 and usage.tokens > 0  # the repeat: served once
