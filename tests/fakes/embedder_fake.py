"""A deterministic in-process embedding model (our ``BaseEmbeddingProvider`` interface).

A text's vector is a function of the text alone: ``vector_of(text)`` when given, else a
pseudo-random unit vector seeded by the text's hash. ``script`` makes calls fail or return broken
vectors, in order, to test what the answer phase does with them. LiteLLM and HTTP are tested
against ``tests/fakes/llm_server.py``'s ``/v1/embeddings`` instead.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from promptcanary.core.run.embedder import BaseEmbeddingProvider, EmbeddingBatch


def hashed_vector(text: str, dimension: int = 16) -> list[float]:
    """A pseudo-random (not unit) vector that depends on ``text`` only."""
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    return [rng.gauss(0.0, 1.0) for _ in range(dimension)]


@dataclass
class FakeEmbedder(BaseEmbeddingProvider):
    """Vectors for texts; ``script`` entries (an exception to raise, or a function from the texts
    to the vectors to return) are used by successive calls before the normal answer."""

    model: str = "fake/embed"
    dimension: int = 16
    vector_of: Callable[[str], Sequence[float]] | None = None
    script: list[Exception | Callable[[Sequence[str]], list[list[float]]]] = field(
        default_factory=list
    )
    tokens_per_text: int = 3
    cost_per_call: float | None = 0.001
    delay: float = 0.0
    calls: list[list[str]] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0

    def __post_init__(self) -> None:
        super().__init__(self.model)

    async def aembed(self, texts: Sequence[str], *, timeout: float) -> EmbeddingBatch:
        self.calls.append(list(texts))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.script:
                step = self.script.pop(0)
                if isinstance(step, Exception):
                    raise step
                return EmbeddingBatch(step(texts), None, None)
            make = self.vector_of or (lambda t: hashed_vector(t, self.dimension))
            vectors = [list(make(t)) for t in texts]
            return EmbeddingBatch(vectors, self.tokens_per_text * len(texts), self.cost_per_call)
        finally:
            self.in_flight -= 1

    @property
    def texts(self) -> list[str]:
        """Every text sent, in order."""
        return [t for call in self.calls for t in call]
