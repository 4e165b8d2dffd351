"""Embeddings from a real model: llama.cpp serving all-MiniLM-L6-v2 (``local_model.start(
embedding=True)``: the package's weights converted by ``scripts/minilm_gguf.py``, mean pooling
declared in the GGUF file), beside the chat model.

* **The served model is the model**: each text's vector through llama.cpp agrees with a numpy
  forward pass of the same weights (``minilm_reference.py``: its own tokenizer, 6 layers, mean
  pool) to a cosine of at least ``MIN_COSINE``; a wrong tensor name, an unnormalised capital or a
  pooling left out would each fall far below.
* **Pooled vectors through the action's path**: through LiteLLM and the answer phase, each
  distinct text gets one finite vector of 384 dimensions, served once per run.
* **Meaning**: a paraphrase lies nearer than an answer about something else. Printed beside it,
  not asserted: one word changed ("Free" for "Pro" plan) lies nearer still (measured 0.85 against
  the paraphrase's 0.76): one vector does not tell such a change from a rewording, which is why
  the meaning comparison tests whole samples of answers against the pool.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure, ServiceRequest, served_output
from promptcanary.core.run.answer_phase import AnswerPhase
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.meaning import NO_ANSWER_TEXT
from promptcanary.providers.litellm import LiteLLMEmbedder
from scripts import local_model

pytestmark = [pytest.mark.real_model]

REFERENCE = Path(__file__).with_name("minilm_reference.py")
DIMENSION = 384
#: float32 weights and llama.cpp's tanh GELU against float64 and the exact one: measured
#: 0.999998 or more on these texts.
MIN_COSINE = 0.9999
TEXTS = [
    "We recommend the Pro plan for a team of five.",
    "Arr, the treasure be buried!",
    "Café naïve résumé: 42% off, e-mail us at help@acme.io",
    "What's the weather in Lisbon right now, in celsius?",
    "Unbelievably untranslatable antidisestablishmentarianism",
    NO_ANSWER_TEXT,
]


def served(server: local_model.LocalServer, texts: Sequence[str]) -> list[list[float]]:
    body = {"model": local_model.EMBEDDING_ALIAS, "input": list(texts)}
    answer = local_model.post_json(f"{server.api_base}/embeddings", body, timeout=120)
    rows = sorted(answer["data"], key=lambda row: row["index"])  # type: ignore[call-overload]
    return [row["embedding"] for row in rows]


def reference(texts: Sequence[str]) -> list[list[float]]:
    proc = subprocess.run(
        [str(local_model.venv_python()), str(REFERENCE)],
        input=json.dumps(list(texts)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    vectors: list[list[float]] = json.loads(proc.stdout)
    return vectors


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(math.fsum(x * x for x in a) * math.fsum(y * y for y in b))


@pytest.mark.timeout(420)
def test_llama_cpp_serves_the_same_vectors_as_a_reference_forward_pass(
    embedding_server: local_model.LocalServer,
) -> None:
    got, expected = served(embedding_server, TEXTS), reference(TEXTS)
    agreement = {text: cosine(a, b) for text, a, b in zip(TEXTS, got, expected, strict=True)}
    print("\nMiniLM, llama.cpp against the numpy reference (cosine):")
    for text, value in agreement.items():
        print(f"  {value:.6f}  {text}")
    assert all(len(vector) == DIMENSION for vector in got)
    assert min(agreement.values()) >= MIN_COSINE, agreement


@pytest.mark.timeout(420)
def test_each_text_gets_one_pooled_vector(embedding_server: local_model.LocalServer) -> None:
    embedder = LiteLLMEmbedder(
        f"openai/{local_model.EMBEDDING_ALIAS}", api_base=embedding_server.api_base
    )
    phase = AnswerPhase.of([EmbeddingService(embedder)], max_retries=1)
    texts = ["We recommend the Pro plan for a team of five.", "Arr, the treasure be buried."]
    requests = [ServiceRequest(EMBEDDING, t) for t in [*texts, texts[0]]]
    results = asyncio.run(phase.serve(requests))
    vectors = [served_output(results, ServiceRequest(EMBEDDING, t)) for t in texts]
    for vector in vectors:
        assert not isinstance(vector, ServiceFailure), vector
        assert len(vector) == DIMENSION and all(math.isfinite(v) for v in vector)
    assert vectors[0] != vectors[1]
    (usage,) = phase.usage()
    assert usage.items == 2 and usage.errors == 0 and usage.tokens > 0  # the repeat: served once


@pytest.mark.timeout(420)
def test_a_paraphrase_is_nearer_than_another_meaning(
    embedding_server: local_model.LocalServer,
) -> None:
    pro, paraphrase, other = served(
        embedding_server,
        [
            "For a team of five developers I recommend the Pro plan.",
            "The Pro plan is the one I would suggest for five engineers.",
            "For a team of five developers I recommend the Free plan.",
        ],
    )
    pirate = served(embedding_server, ["Arr, the treasure be buried on the island."])[0]
    near, changed, far = cosine(pro, paraphrase), cosine(pro, other), cosine(pro, pirate)
    print(f"\nMiniLM cosines: paraphrase {near:.3f}, other plan {changed:.3f}, pirate {far:.3f}")
    assert near > far + 0.3
    assert far < 0.3
