"""Rate limits for the fake LLM server: R requests and T tokens per minute per API key.

Each key has two token buckets (requests, tokens) that refill continuously at R/60 and T/60 per
second up to ``burst`` seconds of budget (providers enforce per-minute limits over shorter
spans too). A request the buckets cannot pay is answered 429 with ``Retry-After`` (fractional
seconds until it could be paid). With ``headers=True`` every answer, 429 or not, carries
OpenAI's ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``; without, a 429 carries
``Retry-After`` only and other answers nothing. A request costs one request and its prompt plus
completion tokens (the server knows its answer before it admits the request).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class _Buckets:
    requests: float
    tokens: float
    stamp: float


@dataclass
class ServerRateLimit:
    """Per-key limits; ``admitted`` and ``refused`` count answers per key."""

    rpm: float
    tpm: float = 1e12
    headers: bool = True
    burst: float = 0.2
    """Seconds of budget a key may spend at once."""
    clock: Callable[[], float] = time.monotonic
    """The server's time (a virtual clock in simulations: ``tests/fakes/rate_sim.py``)."""
    admitted: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    admitted_at: dict[str, list[float]] = field(default_factory=dict)
    refused_at: dict[str, list[float]] = field(default_factory=dict)
    _buckets: dict[str, _Buckets] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def capacity(self) -> tuple[float, float]:
        return max(1.0, self.rpm / 60 * self.burst), max(1.0, self.tpm / 60 * self.burst)

    def admit(self, key: str, tokens: int) -> tuple[bool, dict[str, str]]:
        """Whether a request of ``tokens`` tokens on ``key`` is served, and the headers to send."""
        cap_r, cap_t = self.capacity
        rate_r, rate_t = self.rpm / 60, self.tpm / 60
        with self._lock:
            now = self.clock()
            b = self._buckets.setdefault(key, _Buckets(cap_r, cap_t, now))
            elapsed = now - b.stamp
            b.requests = min(cap_r, b.requests + elapsed * rate_r)
            b.tokens = min(cap_t, b.tokens + elapsed * rate_t)
            b.stamp = now
            cost_t = min(float(tokens), cap_t)
            ok = b.requests >= 1 and b.tokens >= cost_t
            if ok:
                b.requests -= 1
                b.tokens -= cost_t
                self.admitted[key] = self.admitted.get(key, 0) + 1
                self.admitted_at.setdefault(key, []).append(now)
            else:
                self.refused[key] = self.refused.get(key, 0) + 1
                self.refused_at.setdefault(key, []).append(now)
            wait = max((1 - b.requests) / rate_r, (cost_t - b.tokens) / rate_t, 0.0)
            headers: dict[str, str] = {}
            if self.headers:
                headers = {
                    "x-ratelimit-limit-requests": f"{self.rpm:.0f}",
                    "x-ratelimit-remaining-requests": f"{max(0, int(b.requests))}",
                    "x-ratelimit-reset-requests": f"{(cap_r - b.requests) / rate_r * 1000:.0f}ms",
                    "x-ratelimit-limit-tokens": f"{self.tpm:.0f}",
                    "x-ratelimit-remaining-tokens": f"{max(0, int(b.tokens))}",
                    "x-ratelimit-reset-tokens": f"{(cap_t - b.tokens) / rate_t * 1000:.0f}ms",
                }
            if not ok:
                headers["Retry-After"] = f"{max(wait, 0.001):.3f}"
            return ok, headers
