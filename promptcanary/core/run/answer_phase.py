"""The answer phase: after a stage's answers arrive and before they are scored, the answer
services (embeddings; judges) are asked what the probes and comparisons need of them.

Probes and comparisons name their work as :class:`~promptcanary.core.probes.served.ServiceRequest`
s; :class:`AnswerPhase` sends them and keeps the outputs for the whole run, keyed by content hash,
so equal content is served once however many answers, probes or stages ask for it. Requests run
in batches (a service's ``batch_size``), at most the run's ``concurrency`` at once, and are retried
like completions (:func:`promptcanary.core.run.session.backoff_delay`: transient errors, with
backoff honouring ``Retry-After``). A batch that still fails, or an input the service could not
handle, becomes a :class:`~promptcanary.core.probes.served.ServiceFailure` for those inputs: the
probe reading it returns an errored result, the run goes on. Each service is counted apart from
the model under test (:class:`~promptcanary.core.models.ServiceUsage`).
"""

from __future__ import annotations

import abc
import asyncio
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from promptcanary.core.models import ServiceUsage
from promptcanary.core.probes.served import Served, ServiceFailure, ServiceRequest
from promptcanary.core.run.provider import ProviderError
from promptcanary.core.run.session import (
    Sleep,
    backoff_delay,
    describe,
    timed_out,
    timeout_slack,
)


@dataclass(frozen=True)
class ServiceBatch:
    """What a service returned for one batch: one output per payload (or a
    :class:`ServiceFailure` for a payload it could not handle), and what the batch cost."""

    outputs: Sequence[Any]
    tokens: int | None = None
    cost_usd: float | None = None
    requests: int = 1
    """Requests the batch sent: 0 when the service answered without one (a judge's cached
    verdict, a request cap), so the usage counts only what was sent."""


class AnswerService(abc.ABC):
    """A model the answer phase calls on answers (an embedding model, a judge).

    ``name`` is the service requests name (:data:`~promptcanary.core.probes.served.EMBEDDING`);
    ``batch_size`` payloads go in one request.
    """

    name: str = ""
    batch_size: int = 1

    @property
    @abc.abstractmethod
    def model_id(self) -> str:
        """The model behind the service, for its usage line."""

    def check_environment(self) -> None:
        """Raise before the run's first request when no call could succeed (a missing key)."""

    @abc.abstractmethod
    async def serve(self, payloads: Sequence[Any], *, timeout: float) -> ServiceBatch:
        """Serve one batch. Raises :class:`ProviderError` (transient ones are retried)."""

    async def aclose(self) -> None:
        """Release connections (called once at the end of the run)."""


@dataclass
class _Tally:
    requests: int = 0
    items: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    errors: int = 0

    def add_cost(self, cost: float | None) -> None:
        # One batch without a price makes the total unknown: never a partial sum as the total.
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost


@dataclass
class AnswerPhase:
    """The answer services of one run, their cache and their counts (see module doc)."""

    services: Mapping[str, AnswerService]
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 3
    sleep: Sleep = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    _served: dict[str, Any] = field(default_factory=dict, init=False)
    _tally: dict[str, _Tally] = field(default_factory=dict, init=False)
    _slots: asyncio.Semaphore | None = field(default=None, init=False)

    @classmethod
    def of(cls, services: Iterable[AnswerService], **knobs: Any) -> AnswerPhase:
        return cls({s.name: s for s in services}, **knobs)

    @property
    def served(self) -> Served:
        """Every output of the run so far (read-only)."""
        return MappingProxyType(self._served)

    async def serve(self, requests: Iterable[ServiceRequest]) -> Served:
        """Serve every request not served yet in this run; all outputs so far."""
        todo: dict[str, dict[str, ServiceRequest]] = {}
        for request in requests:
            if request.key not in self._served:
                todo.setdefault(request.service, {})[request.key] = request
        batches = []
        for name, pending in todo.items():
            service = self.services.get(name)
            if service is None:
                failure = ServiceFailure(
                    f"no {name} service in this run: the suite needs one (e.g. semantic_drift: "
                    "embedding_model) and the caller must pass it"
                )
                self._served.update(dict.fromkeys(pending, failure))
                continue
            items = list(pending.values())
            size = max(1, service.batch_size)
            batches += [(service, items[i : i + size]) for i in range(0, len(items), size)]
        if batches:
            if self._slots is None:
                self._slots = asyncio.Semaphore(max(1, self.concurrency))
            await asyncio.gather(*(self._batch(service, chunk) for service, chunk in batches))
        return self.served

    async def _batch(self, service: AnswerService, chunk: list[ServiceRequest]) -> None:
        assert self._slots is not None
        tally = self._tally.setdefault(service.name, _Tally())
        async with self._slots:  # held through backoff, as completions hold theirs
            outcome = await self._call(service, [r.payload for r in chunk], tally)
        if isinstance(outcome, ServiceFailure):
            outputs: Sequence[Any] = [outcome] * len(chunk)
        elif len(outcome.outputs) != len(chunk):
            reason = (
                f"{service.name} service returned {len(outcome.outputs)} output(s) "
                f"for {len(chunk)} input(s)"
            )
            outputs = [ServiceFailure(reason)] * len(chunk)
        else:
            outputs = outcome.outputs
            tally.tokens += outcome.tokens or 0
            tally.add_cost(outcome.cost_usd)
        tally.items += len(chunk)
        tally.errors += sum(isinstance(o, ServiceFailure) for o in outputs)
        self._served.update(zip((r.key for r in chunk), outputs, strict=True))

    async def _call(
        self, service: AnswerService, payloads: list[Any], tally: _Tally
    ) -> ServiceBatch | ServiceFailure:
        attempt = 0
        while True:
            tally.requests += 1
            try:
                batch = await asyncio.wait_for(
                    service.serve(payloads, timeout=self.timeout),
                    self.timeout + timeout_slack(self.timeout),
                )
                tally.requests += batch.requests - 1  # counted above as one sent
                return batch
            except ProviderError as exc:
                error = exc
            except TimeoutError:
                error = timed_out(self.timeout, service.model_id)
            except Exception as exc:  # a custom service may raise anything; the run goes on
                return ServiceFailure(f"{service.name}: {type(exc).__name__}: {exc}")
            if not error.transient or attempt >= self.max_retries:
                return ServiceFailure(f"{service.name}: {describe(error, attempt)}")
            await self.sleep(backoff_delay(attempt, error.retry_after, self.rng))
            attempt += 1

    def usage(self) -> list[ServiceUsage]:
        """Each service's counts, in the order the services were given."""
        return [
            ServiceUsage(
                service=name,
                model_id=service.model_id,
                requests=tally.requests,
                items=tally.items,
                tokens=tally.tokens,
                cost_usd=tally.cost_usd,
                errors=tally.errors,
            )
            for name, service in self.services.items()
            if (tally := self._tally.get(name)) is not None
        ]

    async def aclose(self) -> None:
        for service in self.services.values():
            await service.aclose()
