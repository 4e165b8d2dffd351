"""The runner against a rate-limited server on a virtual clock: pacing's arithmetic, no wall time.

The real runner (``run_suite``, its sessions, retries and :class:`Pacing`) asks a simulated
provider (our ``BaseLLMProvider`` interface) whose requests reach a
:class:`~tests.fakes.rate_limits.ServerRateLimit` token bucket after a random send delay and
answer after the server's latency. Everything runs on :mod:`tests.fakes.virtual_time`'s loop,
so a run of 300 requests at 600 a minute takes a fraction of a second and gives the same
figures on any machine for the same seed: the unit tests assert on them and
``bench/rate_limit.py --simulate`` prints them beside the real runs'.

What the simulation leaves out is the client's own CPU (a busy loop makes every request late
and the delays correlate); :class:`Network` stands in for it with random delays.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from promptcanary import CanarySuite
from promptcanary.core.models import CanaryPrompt, CanaryRunResult, LLMResponse, ProviderConfig
from promptcanary.core.probes.format import KeywordPresenceProbe
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.pacing import Limiter, Pacing, Ticket
from promptcanary.core.run.provider import BaseLLMProvider, ProviderError
from promptcanary.core.run.runner import run_suite
from tests.fakes.rate_limits import ServerRateLimit
from tests.fakes.virtual_time import VirtualClock, run_virtual

PROMPT_TOKENS = 20
COMPLETION_TOKENS = 10


@dataclass(frozen=True)
class Network:
    """How a simulated request travels, in seconds (each range drawn uniformly)."""

    send: tuple[float, float] = (0.004, 0.021)
    """From the limiter letting a request out to its arrival at the server: 4-21 ms measured on
    the bench's machine (LiteLLM's set-up, two runs in one event loop)."""
    late: tuple[float, float] = (0.0, 0.0)
    """How much later than asked a sleep wakes (a busy event loop, a loaded machine)."""
    latency: float = 0.02
    """From arrival to the answer, when admitted (the bench server's 20 ms)."""
    refusal: float = 0.002
    """From arrival to a 429 (refused at once)."""


@dataclass(frozen=True)
class Case:
    """Models (one per key entry: the same key twice is two models on one key) and headers."""

    label: str
    headers: bool
    keys: tuple[str, ...]


CASES = (
    Case("headers", True, ("sk-a",)),
    Case("no headers", False, ("sk-a",)),
    Case("2 models, 1 key, headers", True, ("sk-a", "sk-a")),
    Case("2 models, 1 key, no headers", False, ("sk-a", "sk-a")),
    Case("2 models, 2 keys, headers", True, ("sk-a", "sk-b")),
    Case("2 models, 2 keys, no headers", False, ("sk-a", "sk-b")),
)
"""The cases of ``bench/rate_limit.py``: two keys have R/2 each, so the bound stays N/R."""


@dataclass(frozen=True)
class Outcome:
    """One simulated run of a case."""

    wall: float
    bound: float
    """N / R: no run can take less."""
    requests: int
    refused: int
    errored: int
    peak: float
    """The most requests one key admitted in any second, over that key's R."""

    @property
    def ratio(self) -> float:
        return self.wall / self.bound

    @property
    def refused_share(self) -> float:
        """The share of answers that were 429."""
        return self.refused / (self.requests + self.refused)


class SimulatedProvider(BaseLLMProvider):
    """Asks ``server`` as ``key`` after the network's send delay; a refusal is a 429."""

    def __init__(
        self, model: str, key: str, server: ServerRateLimit, network: Network, rng: random.Random
    ) -> None:
        params = {"api_base": "http://simulated", "api_key": key}
        super().__init__(ProviderConfig(model_id=model, extra_params=params))
        self.key, self.server, self.network, self.rng = key, server, network, rng

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        raise NotImplementedError("a simulated provider answers on the virtual loop only")

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        await asyncio.sleep(self.rng.uniform(*self.network.send))
        ok, headers = self.server.admit(self.key, PROMPT_TOKENS + COMPLETION_TOKENS)
        if not ok:
            await asyncio.sleep(self.network.refusal)
            raise ProviderError(
                "rate limit reached",
                model_id=self.config.model_id,
                status_code=429,
                retry_after=float(headers["Retry-After"]),
                rate_limit_headers=headers,
            )
        await asyncio.sleep(self.network.latency)
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=f"answer to {prompt.text}",
            prompt_tokens=PROMPT_TOKENS,
            completion_tokens=COMPLETION_TOKENS,
            total_tokens=PROMPT_TOKENS + COMPLETION_TOKENS,
            rate_limit_headers=headers or None,
            sample=sample,
        )


def blind_pacing(clock: VirtualClock | None = None) -> Pacing:
    """The runner before pacing: limiters that never learn (so never wait) and send at once."""

    class _Blind(Limiter):
        def __init__(self, scope: str, clock: Any) -> None:
            super().__init__(scope, clock=clock)
            self.start.open = True  # that runner waited for nothing, not even an answer

        def settle(self, ticket: Ticket, **_: Any) -> None:
            if not ticket.settled:
                ticket.settled = True
                self.in_flight.remove(ticket)

    class _Unpaced(Pacing):
        def limiter(self, scope: str, *, rpm: Any = None, tpm: Any = None) -> Limiter:
            return _Blind(scope, self.clock)

    return _Unpaced(clock=clock) if clock is not None else _Unpaced()


def peak_rate(times: Sequence[float], window: float = 1.0) -> float:
    """The most events in any ``window`` seconds, per second."""
    ordered = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(ordered):
        while t - ordered[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best / window


def suite_of(n: int, name: str) -> CanarySuite:
    prompts = [CanaryPrompt(id=f"p{i:05d}", text=f"prompt {i}") for i in range(n)]
    return CanarySuite(name, prompts, [KeywordPresenceProbe(required_keywords=["answer"])])


def simulate(
    case: Case,
    *,
    requests: int = 300,
    rpm: float = 600.0,
    network: Network = Network(),
    seed: int = 0,
    paced: bool = True,
    burst: float = 0.2,
    concurrency: int = 8,
) -> Outcome:
    """One run of ``case``: ``requests`` in all (split between its models), R = ``rpm`` split
    between its keys, a server bucket of ``burst`` seconds of budget; ``paced=False`` is the
    runner before pacing."""
    clock = VirtualClock()
    keys = len(set(case.keys))
    server = ServerRateLimit(rpm=rpm / keys, headers=case.headers, burst=burst, clock=clock)
    pacing = Pacing(clock=clock) if paced else blind_pacing(clock)
    rng = random.Random(seed)
    per_model = requests // len(case.keys)
    options = RunOptions(samples=1, concurrency=concurrency, max_retries=10, show_progress=False)

    async def late_sleep(seconds: float) -> None:
        await asyncio.sleep(seconds + rng.uniform(*network.late))

    async def main() -> list[CanaryRunResult]:
        runs = [
            run_suite(
                suite_of(per_model, f"sim-{i}"),
                SimulatedProvider(f"openai/sim-{i}", key, server, network, rng),
                options,
                sleep=late_sleep,
                rng=random.Random(seed * 1000 + i),
                pacing=pacing,
            )
            for i, key in enumerate(case.keys)
        ]
        return list(await asyncio.gather(*runs))

    started = clock.now
    results = run_virtual(main(), clock)
    rate = rpm / keys / 60
    return Outcome(
        wall=clock.now - started,
        bound=per_model * len(case.keys) / keys / rate,
        requests=per_model * len(case.keys),
        refused=sum(server.refused.values()),
        errored=sum(r.error_count for r in results),
        peak=max(peak_rate(t) for t in server.admitted_at.values()) / rate,
    )
