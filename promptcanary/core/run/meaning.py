"""What a stage's answers ask of the answer phase, and what the phase's outputs add to them.

The requests (:func:`stage_requests`): every :class:`~promptcanary.core.probes.served.ServedProbe`'s
for the answers it scores, and, for the prompts ``semantic_drift:`` compares, each answer's text
and the fixed check text (:data:`~promptcanary.core.vectors.CHECK_TEXT`). The outputs: each compared
answer carries its vector (:func:`with_vectors`, encoded compactly) and the run records the
embedding model, its dimension and its vector of the check text (:func:`embedding_info`).
"""

from __future__ import annotations

from collections.abc import Sequence

from promptcanary.core.models import EmbeddingInfo, LLMResponse
from promptcanary.core.probes.served import (
    EMBEDDING,
    Served,
    ServedProbe,
    ServiceFailure,
    ServiceRequest,
    served_output,
)
from promptcanary.core.spec import SuiteSpec
from promptcanary.core.vectors import CHECK_TEXT, encode

CHECK_REQUEST = ServiceRequest(EMBEDDING, CHECK_TEXT)
MAX_REASONS = 5
"""Distinct embedding failures a run records (their causes, not every occurrence)."""


def answer_request(response: LLMResponse) -> ServiceRequest:
    """The embedding of an answer's text (equal texts share one request)."""
    return ServiceRequest(EMBEDDING, response.content)


def stage_requests(suite: SuiteSpec, responses: Sequence[LLMResponse]) -> list[ServiceRequest]:
    """Everything the answer phase must serve before ``responses`` are scored."""
    prompts = {p.id: p for p in suite.prompts}
    out: list[ServiceRequest] = []
    for response in responses:
        prompt = prompts.get(response.prompt_id)
        if prompt is None or response.errored:
            continue
        for binding in suite.bindings_for(prompt):
            if isinstance(binding.probe, ServedProbe):
                out.extend(binding.probe.requests_for(prompt, response))
        if suite.compares_meaning(prompt):
            out.append(answer_request(response))
    if any(r.service == EMBEDDING for r in out) and suite.semantic_drift is not None:
        out.append(CHECK_REQUEST)
    return out


def with_vectors(
    suite: SuiteSpec, responses: Sequence[LLMResponse], served: Served
) -> list[LLMResponse]:
    """``responses``; those of compared prompts carry their vector when it was served."""
    compared = {p.id for p in suite.prompts if suite.compares_meaning(p)}
    out: list[LLMResponse] = []
    for response in responses:
        if response.prompt_id in compared and not response.errored:
            vector = served_output(served, answer_request(response))
            if not isinstance(vector, ServiceFailure):
                response = response.model_copy(update={"embedding": encode(vector)})
        out.append(response)
    return out


def embedding_info(
    suite: SuiteSpec, responses: Sequence[LLMResponse], served: Served
) -> EmbeddingInfo | None:
    """The run's embedding model, dimension and check vector; ``None`` when nothing was embedded
    (no ``semantic_drift:``, or no answer to compare)."""
    if suite.semantic_drift is None or CHECK_REQUEST.key not in served:
        return None
    check = served_output(served, CHECK_REQUEST)
    reasons: list[str] = []
    compared = {p.id for p in suite.prompts if suite.compares_meaning(p)}
    for response in responses:
        if response.prompt_id in compared and not response.errored:
            output = served_output(served, answer_request(response))
            if isinstance(output, ServiceFailure) and output.reason not in reasons:
                reasons.append(output.reason)
    if isinstance(check, ServiceFailure):
        reasons.insert(0, check.reason)
    return EmbeddingInfo(
        model_id=suite.semantic_drift.embedding_model,
        dimension=0 if isinstance(check, ServiceFailure) else len(check),
        check="" if isinstance(check, ServiceFailure) else encode(check),
        errors=reasons[:MAX_REASONS],
    )
