# ruff: noqa: E402
"""At the provider's rate limit, not over it: today's runner (no pacing) against the paced one.

A local OpenAI-compatible server (``tests/fakes/llm_server.FakeLLMServer`` with
``tests/fakes/rate_limits.ServerRateLimit``, in a child process) enforces R requests and T
tokens per minute per API key, over token buckets holding 0.2 s of budget. With headers every
answer carries OpenAI's ``x-ratelimit-*``; without, a 429 carries ``Retry-After`` only. N
requests at R per minute cannot take less than N/R (the bound). Time is scaled down: R = 3,000
per minute (50 per second) instead of 600, so N = 600 takes 12 s, not 60; the ratio is the point.

Targets with headers: wall <= 1.10x the bound and <= 1% of requests answered 429; without
headers: <= 1.25x and <= 5%. Then two models on one key (their sum must stay under the limit:
the combined rate admitted is printed against R) and two models on two keys (each its own).

    .venv/bin/python bench/rate_limit.py [--requests 600] [--rpm 6000] [--latency 0.02]
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import asyncio
import json
import time
from typing import Any

from bench._common import ServerProcess, build_suite, machine_note, print_table

_SERVER_SCRIPT = """
import json, sys
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.rate_limits import ServerRateLimit
server = FakeLLMServer(latency=float(sys.argv[1])).start()
print(json.dumps({"url": server.url}), flush=True)
for line in sys.stdin:
    command, _, arg = line.strip().partition(" ")
    if command == "limit":
        rpm, tpm, headers = json.loads(arg)
        server.reset()
        server.rate_limit = ServerRateLimit(rpm=rpm, tpm=tpm, headers=headers)
        print("{}", flush=True)
    elif command == "stats":
        limit = server.rate_limit
        print(json.dumps({"admitted": limit.admitted, "refused": limit.refused,
                          "admitted_at": limit.admitted_at}), flush=True)
server.stop()
"""


class LimitedServer(ServerProcess):
    """The rate-limited fake server in a child process (it must not share our GIL)."""

    def __init__(self, latency: float) -> None:
        super().__init__(latency, _SERVER_SCRIPT)

    def limit(self, rpm: float, tpm: float, headers: bool) -> None:
        self._ask("limit " + json.dumps([rpm, tpm, headers]))


def unpaced() -> Any:
    """Today's runner: a Pacing whose limiters never learn anything (so never wait)."""
    from promptcanary.core.run.pacing import Limiter, Pacing, Ticket

    class _Blind(Limiter):
        def settle(self, ticket: Ticket, **_: Any) -> None:
            if not ticket.settled:
                ticket.settled = True
                self.in_flight.remove(ticket)

    class _Unpaced(Pacing):
        def limiter(self, scope: str, *, rpm: Any = None, tpm: Any = None) -> Limiter:
            return _Blind(scope)

    return _Unpaced()


async def run_models(url: str, keys: list[str], n: int, pacing: Any) -> list[Any]:
    """One run per key (a model each, all at once), ``n`` requests each; their results."""
    from promptcanary.core.run.options import RunOptions
    from promptcanary.core.run.runner import run_suite
    from promptcanary.providers.litellm import LiteLLMProvider

    options = RunOptions(samples=1, concurrency=8, max_retries=10, show_progress=False)
    runs = [
        run_suite(
            build_suite(n, name=f"bench-{i}"),
            LiteLLMProvider(f"openai/bench-{i}", api_base=url, api_key=key),
            options,
            pacing=pacing,
        )
        for i, key in enumerate(keys)
    ]
    return list(await asyncio.gather(*runs))


def peak_rate(times: list[float], window: float = 1.0) -> float:
    """The most requests admitted in any ``window`` seconds, per second."""
    times = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] > window:
            start += 1
        best = max(best, end - start + 1)
    return best / window


def measure(server: LimitedServer, args: argparse.Namespace, case: dict[str, Any]) -> list[Any]:
    server.limit(args.rpm, args.tpm, case["headers"])
    pacing = unpaced() if case["runner"] == "today" else None
    if pacing is None:
        from promptcanary.core.run.pacing import Pacing

        pacing = Pacing()
    per_key = args.requests // len(case["keys"]) if case["shared"] else args.requests
    started = time.perf_counter()
    results = asyncio.run(run_models(server.url, case["keys"], per_key, pacing))
    wall = time.perf_counter() - started
    if args.verbose:
        for result in results:
            print(
                case["label"],
                case["runner"],
                "paced",
                result.paced_seconds,
                "s; 429s",
                result.rate_limited,
                "; cpu",
                round(time.process_time(), 1),
            )
    stats = server.stats()
    total = per_key * len(case["keys"])
    refused = sum(stats["refused"].values())
    errored = sum(r.error_count for r in results)
    distinct_keys = len(set(case["keys"]))
    bound = total / (args.rpm / 60) / distinct_keys
    peak = max(peak_rate(t) for t in stats["admitted_at"].values())
    return [
        case["label"],
        case["runner"],
        total,
        round(bound, 2),
        round(wall, 2),
        round(wall / bound, 2),
        f"{refused / (total + refused):.1%}",
        errored,
        round(peak / (args.rpm / 60), 2),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rpm", type=float, default=3000.0)
    parser.add_argument("--tpm", type=float, default=1e9)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--only", default="", help="run only the cases whose name has this")
    args = parser.parse_args()
    print(machine_note())
    print(
        f"N = {args.requests}, R = {args.rpm:.0f}/min, T = {args.tpm:.0f}/min, "
        f"latency {args.latency * 1000:.0f} ms, concurrency 8"
    )
    from promptcanary.providers.litellm import import_litellm

    import_litellm()
    server = LimitedServer(args.latency)
    cases = [
        {"label": label, "runner": runner, "headers": headers, "keys": keys, "shared": shared}
        for label, headers, keys, shared in (
            ("headers", True, ["sk-a"], True),
            ("no headers", False, ["sk-a"], True),
            ("2 models, 1 key, headers", True, ["sk-a", "sk-a"], True),
            ("2 models, 1 key, no headers", False, ["sk-a", "sk-a"], True),
            ("2 models, 2 keys, headers", True, ["sk-a", "sk-b"], False),
        )
        for runner in ("today", "paced")
        if args.only in label
    ]
    try:
        asyncio.run(run_models(server.url, ["sk-warm"], 4, None))  # warm LiteLLM's first call
        rows = [measure(server, args, case) for case in cases]
    finally:
        server.close()
    print_table(
        "Wall time against the bound N/R, and the share of answers that were 429",
        ["case", "runner", "N", "bound s", "wall s", "ratio", "429", "errored", "peak/R per key"],
        rows,
    )
    print(
        "\nTargets: headers ratio <= 1.10 and 429 <= 1%; no headers <= 1.25 and <= 5%; "
        "peak/R per key ~ <= 1 + burst (0.2 s of budget) with one key shared."
    )


if __name__ == "__main__":
    main()
