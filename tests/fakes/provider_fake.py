"""A scripted in-process LLM provider (our ``BaseLLMProvider`` interface), and a factory for it.

For tests of our own code above the provider; LiteLLM and HTTP are tested against
``tests/fakes/llm_server.py`` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.run.provider import BaseLLMProvider

Answers = dict[str, str | Exception]


class FakeProvider(BaseLLMProvider):
    """Answers from a dict keyed by prompt id; an answer that is an exception is raised.

    ``extra_params`` are the provider's call parameters (a suite's model entry may carry some).
    """

    def __init__(
        self, model: str, answers: Answers, extra_params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(ProviderConfig(model_id=model, extra_params=extra_params or {}))
        self.answers = answers

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        answer = self.answers[prompt.id]
        if isinstance(answer, Exception):
            raise answer
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id=self.config.model_id, content=answer
        )


class FakeProviderFactory:
    """A provider factory (model, params, base dir) → FakeProvider; records what it was asked."""

    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any], Path]] = []

    def __call__(self, model: str, params: dict[str, Any], base: Path) -> BaseLLMProvider:
        self.calls.append((model, params, base))
        return FakeProvider(model, self.answers)
