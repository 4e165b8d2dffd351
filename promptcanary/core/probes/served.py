"""The probe side of the answer phase: what a probe may ask of a model, and how it reads the reply.

Probes never call a model. A probe that needs one (an embedding of the answer, a judge's verdict)
is a :class:`ServedProbe`: it names its :class:`ServiceRequest` s for one answer, the runner's
answer phase (:mod:`promptcanary.core.run.answer_phase`) sends them after the answers arrive and
before scoring, and :meth:`ServedProbe.evaluate_served` reads the outputs. A request that could
not be served reaches the probe as a :class:`ServiceFailure`, which it turns into an *errored*
result (neither a pass nor a failure).
"""

from __future__ import annotations

import abc
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult
from promptcanary.core.probes.base import BaseProbe

EMBEDDING = "embedding"
"""The service that turns a text into a vector (payload: the text)."""


@dataclass(frozen=True)
class ServiceRequest:
    """One piece of work for an answer service: which service, and what to send it.

    ``payload`` is JSON-able content (a text for embeddings; the judge's inputs for a judge).
    Its content hash is the request's identity: equal content is served once per run.
    """

    service: str
    payload: Any

    @property
    def key(self) -> str:
        text = json.dumps(
            [self.service, self.payload], sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class ServiceFailure:
    """A request that could not be served, and why (said in the errored result)."""

    reason: str


Served = Mapping[str, Any]
"""Request key → the service's output, or a :class:`ServiceFailure`."""


def served_output(served: Served, request: ServiceRequest) -> Any:
    """The output for ``request``; a :class:`ServiceFailure` when it was not served."""
    return served.get(request.key, ServiceFailure(f"no {request.service} output for this answer"))


class ServedProbe(BaseProbe):
    """A probe that reads what an answer service produced for the answer (see module doc)."""

    @abc.abstractmethod
    def requests_for(self, prompt: CanaryPrompt, response: LLMResponse) -> Sequence[ServiceRequest]:
        """The requests this probe needs answered to score ``response``."""

    @abc.abstractmethod
    def evaluate_served(
        self, prompt: CanaryPrompt, response: LLMResponse, served: Served
    ) -> ProbeResult:
        """Score ``response`` with the outputs of :meth:`requests_for` in ``served``."""

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        """Scored without the answer phase (``probe(prompt, response)``): nothing was served."""
        return self.evaluate_served(prompt, response, {})

    def failed(self, prompt: CanaryPrompt, failure: ServiceFailure) -> ProbeResult:
        """The errored result of an answer whose request was not served."""
        return self._make_result(
            prompt.id, passed=False, score=0.0, details=failure.reason, errored=True
        )
