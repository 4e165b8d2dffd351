"""A base for synchronous fake providers that answer inside the event loop.

``BaseLLMProvider.acomplete`` hops to a thread because a real provider blocks on the network; a
fake computes its answer, and the benches run thousands of runs, so a thread hop each is waste.
"""

from __future__ import annotations

from promptcanary.core.models import CanaryPrompt, LLMResponse
from promptcanary.core.run.provider import BaseLLMProvider


class InLoopProvider(BaseLLMProvider):
    """A provider whose ``complete`` is computed, not fetched: ``acomplete`` calls it directly."""

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        response = self.complete(prompt, system_prompt=system_prompt)
        return response.model_copy(update={"sample": sample})
