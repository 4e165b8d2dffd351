"""The embedding provider interface, and the answer service that checks what it returns.

:class:`BaseEmbeddingProvider` is what the runner calls for vectors, as
:class:`~promptcanary.core.run.provider.BaseLLMProvider` is for answers; LiteLLM's implementation
is :class:`promptcanary.providers.litellm.LiteLLMEmbedder`. :class:`EmbeddingService` puts one in
the answer phase and never lets a broken vector through: an empty vector, one with NaN or
infinite values, or one whose dimension differs from the run's first becomes a
:class:`~promptcanary.core.probes.served.ServiceFailure` for that text, never a verdict.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from promptcanary.core.probes.served import EMBEDDING, ServiceFailure
from promptcanary.core.run.answer_phase import AnswerService, ServiceBatch
from promptcanary.core.vectors import VectorError, checked

DEFAULT_BATCH = 64
"""Texts per embedding request (OpenAI takes up to 2 048; local servers fewer)."""


@dataclass(frozen=True)
class EmbeddingBatch:
    """The vectors of one request, in the texts' order, and what it cost."""

    vectors: Sequence[Sequence[float]]
    prompt_tokens: int | None = None
    cost_usd: float | None = None


class BaseEmbeddingProvider(abc.ABC):
    """An embedding model. Subclasses implement :meth:`aembed`."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def check_environment(self) -> None:
        """Raise ``MissingCredentialsError`` (or ``ModelConfigError``) before any request."""

    @abc.abstractmethod
    async def aembed(self, texts: Sequence[str], *, timeout: float) -> EmbeddingBatch:
        """One vector per text. Raises ``ProviderError`` (``transient`` ones are retried)."""

    async def aclose(self) -> None:
        """Release connections (once, at the end of a run)."""


class EmbeddingService(AnswerService):
    """Embeddings as an answer service: payloads are texts, outputs unit vectors (tuples)."""

    name = EMBEDDING

    def __init__(self, provider: BaseEmbeddingProvider, *, batch_size: int = DEFAULT_BATCH) -> None:
        self.provider = provider
        self.batch_size = batch_size
        self.dimension: int | None = None
        """Fixed by the first vector of the run; a vector of another length is refused."""

    @property
    def model_id(self) -> str:
        return self.provider.model_id

    def check_environment(self) -> None:
        self.provider.check_environment()

    async def serve(self, payloads: Sequence[Any], *, timeout: float) -> ServiceBatch:
        # An empty text is refused by most embedding APIs (OpenAI: HTTP 400) and means nothing.
        texts = [str(p) for p in payloads]
        wanted = [i for i, t in enumerate(texts) if t.strip()]
        outputs: list[Any] = [ServiceFailure("the answer is empty: nothing to embed")] * len(texts)
        if not wanted:
            return ServiceBatch(outputs, 0, 0.0)
        batch = await self.provider.aembed([texts[i] for i in wanted], timeout=timeout)
        if len(batch.vectors) != len(wanted):
            failure = ServiceFailure(
                f"embedding model {self.model_id!r} returned {len(batch.vectors)} vector(s) "
                f"for {len(wanted)} text(s)"
            )
            return ServiceBatch([failure] * len(texts), batch.prompt_tokens, batch.cost_usd)
        for i, raw in zip(wanted, batch.vectors, strict=True):
            outputs[i] = self._vector(raw)
        return ServiceBatch(outputs, batch.prompt_tokens, batch.cost_usd)

    def _vector(self, raw: Sequence[float]) -> tuple[float, ...] | ServiceFailure:
        try:
            vector = checked(raw)
        except VectorError as exc:
            return ServiceFailure(f"embedding model {self.model_id!r}: {exc}")
        if self.dimension is None:
            self.dimension = len(vector)
        elif len(vector) != self.dimension:
            return ServiceFailure(
                f"embedding model {self.model_id!r} returned a vector of dimension "
                f"{len(vector)} after vectors of dimension {self.dimension}: a server whose "
                "vectors change length cannot be compared"
            )
        return vector

    async def aclose(self) -> None:
        await self.provider.aclose()
