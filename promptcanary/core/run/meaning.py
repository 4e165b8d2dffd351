"""What a stage's answers ask of the answer phase, and what the phase's outputs add to them.

The requests (:func:`stage_requests`): every :class:`~promptcanary.core.probes.served.ServedProbe`'s
for the answers it scores, and, for the prompts ``semantic_drift:`` compares, each answer's text
and the fixed check text (:data:`~promptcanary.core.vectors.CHECK_TEXT`). The outputs: each compared
answer carries its vector (:func:`with_vectors`, encoded compactly) and the run records the
embedding model, its dimension and its vector of the check text (:func:`embedding_info`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from promptcanary.core.models import EmbeddingInfo, LLMResponse
from promptcanary.core.probes.served import (
    EMBEDDING,
    Served,
    ServedProbe,
    ServiceFailure,
    ServiceRequest,
)
from promptcanary.core.spec import SuiteSpec
from promptcanary.core.vectors import CHECK_TEXT, encode

CHECK_REQUEST = ServiceRequest(EMBEDDING, CHECK_TEXT)
MAX_REASONS = 5
"""Distinct embedding failures a run records (their causes, not every occurrence)."""
NO_ANSWER_TEXT = "(no answer)"
"""What an empty answer is embedded as. Saying nothing is a meaning the comparison must see (a
model that stops answering has changed), and an empty text has no vector: most embedding APIs
refuse it, and the answer phase sends none."""


def embedded_text(response: LLMResponse) -> str:
    """The text an answer's vector is of: its content, or :data:`NO_ANSWER_TEXT` when blank."""
    return response.content if response.content.strip() else NO_ANSWER_TEXT


def answer_request(response: LLMResponse) -> ServiceRequest:
    """The embedding of an answer's text (equal texts share one request)."""
    return ServiceRequest(EMBEDDING, embedded_text(response))


@functools.lru_cache(maxsize=1 << 14)
def _answer_key(text: str) -> str:
    # Every look reads every answer's output: hashing each text once keeps a look's cost in
    # its arithmetic, not in JSON and SHA-256.
    return ServiceRequest(EMBEDDING, text).key


def _answer_output(served: Served, response: LLMResponse) -> Any:
    """What the answer phase served for the answer's embedding, or why nothing was."""
    missing = ServiceFailure(f"no {EMBEDDING} output for this answer")
    return served.get(_answer_key(embedded_text(response)), missing)


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
            vector = _answer_output(served, response)
            if not isinstance(vector, ServiceFailure):
                response = response.model_copy(update={"embedding": encode(vector)})
        out.append(response)
    return out


def embedding_info(
    suite: SuiteSpec, responses: Sequence[LLMResponse], served: Served
) -> EmbeddingInfo | None:
    """What the run records of its vectors: the embedding model, its dimension and check vector,
    the compared prompts, ``min_shift`` and why answers got no vector; ``None`` without
    ``semantic_drift:``."""
    spec = suite.semantic_drift
    if spec is None:
        return None
    compared = [p.id for p in suite.prompts if suite.compares_meaning(p)]
    check = served.get(CHECK_REQUEST.key)  # not asked: nothing was embedded
    reasons: list[str] = [check.reason] if isinstance(check, ServiceFailure) else []
    wanted = set(compared)
    for response in responses:
        if response.prompt_id in wanted and not response.errored:
            output = _answer_output(served, response)
            if isinstance(output, ServiceFailure) and output.reason not in reasons:
                reasons.append(output.reason)
    vector = None if check is None or isinstance(check, ServiceFailure) else check
    return EmbeddingInfo(
        model_id=spec.embedding_model,
        dimension=len(vector) if vector is not None else 0,
        check=encode(vector) if vector is not None else "",
        errors=reasons[:MAX_REASONS],
        prompts=compared,
        min_shift=spec.min_shift,
    )
