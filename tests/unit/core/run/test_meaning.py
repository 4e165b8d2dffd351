"""The meaning phase's requests and vectors: an empty answer is embedded as a placeholder text."""

from __future__ import annotations

import asyncio
import math

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.probes.format import ResponseLengthProbe
from promptcanary.core.probes.served import EMBEDDING
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.meaning import NO_ANSWER_TEXT, stage_requests
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.runner import run_suite
from promptcanary.core.spec import SemanticDriftSpec, SuiteSpec
from promptcanary.core.vectors import CHECK_TEXT, decode, dot
from tests.fakes.embedder_fake import FakeEmbedder, hashed_vector


class _Answers(BaseLLMProvider):
    """Answers each prompt with its fixed text ("" and whitespace included)."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__(ProviderConfig(model_id="fake/model"))
        self.answers = answers

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        content = self.answers[prompt.id]
        return LLMResponse(prompt_id=prompt.id, provider_model_id="fake/model", content=content)


def _suite(*ids: str) -> SuiteSpec:
    prompts = [CanaryPrompt(id=i, text=f"Question {i}") for i in ids]
    return SuiteSpec(
        "meaning", prompts, [ResponseLengthProbe()], semantic_drift=SemanticDriftSpec("fake/embed")
    )


def _response(prompt_id: str, content: str) -> LLMResponse:
    return LLMResponse(prompt_id=prompt_id, provider_model_id="fake/model", content=content)


def test_a_blank_answer_asks_for_the_placeholder_not_an_empty_text() -> None:
    suite = _suite("empty", "blank", "said")
    responses = [_response("empty", ""), _response("blank", " \n\t"), _response("said", "Pro")]
    texts = [r.payload for r in stage_requests(suite, responses) if r.service == EMBEDDING]
    assert texts == [NO_ANSWER_TEXT, NO_ANSWER_TEXT, "Pro", CHECK_TEXT]


def test_an_empty_answer_gets_the_vector_of_the_placeholder() -> None:
    embedder = FakeEmbedder()
    run = asyncio.run(
        run_suite(
            _suite("empty", "said"),
            _Answers({"empty": "", "said": "We recommend the Pro plan."}),
            RunOptions(samples=1, show_progress=False),
            services=[EmbeddingService(embedder)],
        )
    )
    assert "" not in embedder.texts and NO_ANSWER_TEXT in embedder.texts
    by_prompt = {r.prompt_id: r for r in run.llm_responses}
    assert by_prompt["empty"].content == ""  # the answer itself is kept as it came
    raw = hashed_vector(NO_ANSWER_TEXT)
    vector = decode(by_prompt["empty"].embedding or "")
    assert dot(vector, raw) > 0.99 * math.sqrt(dot(raw, raw))  # the placeholder's own vector
    assert run.provenance.embedding is not None
    assert run.provenance.embedding.errors == []  # no "nothing to embed" failure recorded
