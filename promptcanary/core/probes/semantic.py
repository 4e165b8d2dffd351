"""``semantic_similarity``: one answer against a reference text, by the cosine similarity of their
embeddings (what promptfoo's ``similar`` does). The probe calls no model: the runner's answer
phase embeds the answer and the reference (each distinct text once a run) and the probe reads the
two vectors; an answer or reference that could not be embedded is an *errored* result.
"""

from __future__ import annotations

import math
from typing import ClassVar

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.served import (
    EMBEDDING,
    Served,
    ServedProbe,
    ServiceFailure,
    ServiceRequest,
    served_output,
)

DEFAULT_THRESHOLD = 0.75
"""promptfoo's ``similar`` default."""


class SemanticSimilarityProbe(ServedProbe):
    """Passes when the answer's embedding has a cosine similarity of at least ``threshold`` with
    the ``reference`` text's.

    Args:
        reference: the text the answer should mean.
        threshold: the smallest cosine similarity that passes, in [-1, 1].
        embedding_model: the LiteLLM embedding model, when the suite has no ``semantic_drift:``
            (whose model is used otherwise).
        api_base: that model's endpoint, when it is a local or proxied one.
    """

    probe_id: ClassVar[str] = "semantic_similarity"
    name: ClassVar[str] = "Semantic similarity"
    category: ClassVar[ProbeCategory] = ProbeCategory.SEMANTIC
    description: ClassVar[str] = "The answer means what a reference text means (embeddings)."
    services: ClassVar[tuple[str, ...]] = (EMBEDDING,)

    def __init__(
        self,
        reference: str,
        threshold: float = DEFAULT_THRESHOLD,
        embedding_model: str | None = None,
        api_base: str | None = None,
    ) -> None:
        if not isinstance(reference, str) or not reference.strip():
            raise ValueError("reference must be a non-empty text: what the answer should mean")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(f"threshold must be a number in [-1, 1], got {threshold!r}")
        if not (math.isfinite(threshold) and -1.0 <= threshold <= 1.0):
            raise ValueError(f"threshold must be a cosine similarity in [-1, 1], got {threshold}")
        for label, value in (("embedding_model", embedding_model), ("api_base", api_base)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"{label} must be a non-empty string, got {value!r}")
        self.reference = reference
        self.threshold = float(threshold)
        self.embedding_model = embedding_model
        self.api_base = api_base

    def params(self) -> dict[str, object]:
        # Unset options stay out of the probe key, so adding the defaults changes no identity.
        return {k: v for k, v in super().params().items() if v is not None}

    def requests_for(self, prompt: CanaryPrompt, response: LLMResponse) -> list[ServiceRequest]:
        return [
            ServiceRequest(EMBEDDING, response.content),
            ServiceRequest(EMBEDDING, self.reference),
        ]

    def evaluate_served(
        self, prompt: CanaryPrompt, response: LLMResponse, served: Served
    ) -> ProbeResult:
        answer, reference = (served_output(served, r) for r in self.requests_for(prompt, response))
        for output, what in ((answer, "the answer"), (reference, "the reference")):
            if isinstance(output, ServiceFailure):
                return self.failed(
                    prompt, ServiceFailure(f"{what} has no embedding: {output.reason}")
                )
        if len(answer) != len(reference):
            reason = f"vectors of dimensions {len(answer)} and {len(reference)} cannot be compared"
            return self.failed(prompt, ServiceFailure(reason))
        similarity = math.fsum(a * b for a, b in zip(answer, reference, strict=True))
        passed = similarity >= self.threshold
        return self._make_result(
            prompt.id,
            passed=passed,
            score=max(0.0, similarity),
            details=(
                f"cosine similarity {similarity:.3f} to the reference "
                f"({'at least' if passed else 'below'} the threshold {self.threshold:g})"
            ),
            metadata={"similarity": similarity},
        )
