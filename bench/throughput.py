# ruff: noqa: E402
"""How close a run comes to the latency limit: N prompts x 3 cheap probes at concurrency c.

A provider that answers every request in exactly L seconds bounds a run of N prompts at
concurrency c below by ceil(N / c) * L. The table compares the run phase's wall time with that
bound through the real ``LiteLLMProvider`` against ``tests/fakes/llm_server.FakeLLMServer``
(in a child process, as a real API is on another machine). Target: ratio <= 1.25 at N=200, c=16.

Then a memory line: 1,000- and 5,000-prompt runs at latency 0, c=32, RSS before and after each,
and the growth per prompt (a run keeps every response, so some growth per prompt is expected;
it should be roughly the same per prompt at both sizes, not growing with N).

The ``x c=1`` column is the speed-up over the sequential reference (one request at a time, the
c = 1 row of the same N). ``--sizes``/``--concurrency`` pick rows, ``--repeat`` takes the median
of several runs per row (wall and CPU separately).

``--image IMAGE`` runs the same benchmark inside the action's image (podman, as root), with the
image's Python and packages and this checkout mounted read-only: the Python minor matters here
(from 3.12 on, aiohttp writes a request's body without waiting for the event loop's next turn).

    .venv/bin/python bench/throughput.py [--latency 0.1] [--quick] [--repeat 3]
    .venv/bin/python bench/throughput.py --sizes 200 --concurrency 1,16 --repeat 5 --no-memory
    .venv/bin/python bench/throughput.py --image localhost/promptcanary-action:test --no-memory
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/x.py`, bench/ is first on sys.path: use the repository root instead, so
# `bench._common` and the packages import the same way from anywhere. Hence the imports
# below this line (ruff: noqa: E402 at the top of the file).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import asyncio
import gc
import math
import platform
import subprocess
import time
from typing import Any

from bench._common import (
    REPO_ROOT,
    build_suite,
    fake_server,
    image_python,
    machine_note,
    median,
    peak_rss_mb,
    print_table,
    rss_mb,
)

SIZES = (50, 200, 1000)
CONCURRENCY = (1, 8, 16, 32)
MAX_IDEAL_SECONDS = 30.0
QUICK_MAX_IDEAL_SECONDS = 3.0
MEMORY_SIZES = (1_000, 5_000)


def make_provider(url: str) -> Any:
    from promptcanary.providers.litellm import LiteLLMProvider

    return LiteLLMProvider("openai/bench", api_base=url, api_key="sk-bench")


def run_once(url: str, n_prompts: int, concurrency: int) -> tuple[float, Any]:
    """Wall seconds of the run phase (``arun`` only: suite and provider are built before)."""
    suite = build_suite(n_prompts)
    provider = make_provider(url)

    async def go() -> Any:
        started = time.perf_counter()
        result = await suite.arun(provider, concurrency=concurrency, show_progress=False)
        return time.perf_counter() - started, result

    seconds, result = asyncio.run(go())
    return seconds, result


def measure(url: str, n: int, c: int, repeat: int, server: Any) -> dict[str, Any]:
    """Median wall seconds and CPU seconds of ``repeat`` runs, with the last run's details."""
    walls, cpus = [], []
    for _ in range(repeat):
        server.reset()
        cpu = time.process_time()
        seconds, result = run_once(url, n, c)
        cpus.append(time.process_time() - cpu)
        walls.append(seconds)
    errored = sum(1 for r in result.llm_responses if r.errored)
    return {
        "wall": median(walls),
        "cpu": median(cpus),
        "errored": errored,
        "connections": server.stats()["connections"],
    }


def throughput_table(
    latency: float, quick: bool, sizes: tuple[int, ...], levels: tuple[int, ...], repeat: int
) -> None:
    limit = QUICK_MAX_IDEAL_SECONDS if quick else MAX_IDEAL_SECONDS
    rows: list[list[Any]] = []
    with fake_server(latency) as server:
        run_once(server.url, 8, 8)  # warm-up: LiteLLM's import and first-request setup
        for n in sizes:
            sequential: float | None = None
            for c in levels:
                ideal = math.ceil(n / c) * latency
                if ideal > limit:
                    rows.append(
                        [n, c, "skipped", f"{ideal:.1f}", f"ideal > {limit:g} s"] + [""] * 5
                    )
                    continue
                m = measure(server.url, n, c, repeat, server)
                if c == 1:
                    sequential = m["wall"]
                ratio = m["wall"] / ideal if ideal else float("nan")
                rows.append(
                    [
                        n,
                        c,
                        f"{m['wall']:.2f}",
                        f"{ideal:.2f}",
                        f"{ratio:.2f}" + (f" ({m['errored']} errored)" if m["errored"] else ""),
                        f"{sequential / m['wall']:.1f}" if sequential else "",
                        f"{n / m['wall']:.0f}",
                        f"{m['cpu'] / n * 1000:.2f}",
                        m["connections"],
                        f"{peak_rss_mb():.0f}",
                    ]
                )
    print_table(
        f"Run phase vs the latency limit (L = {latency * 1000:g} ms per request, 3 cheap probes;"
        f" median of {repeat}; target: ratio <= 1.25 at N=200, c=16)",
        [
            "N",
            "c",
            "wall s",
            "ideal s",
            "ratio",
            "x c=1",
            "req/s",
            "CPU ms/req",
            "connections",
            "peak RSS MiB",
        ],
        rows,
    )


def memory_table(quick: bool) -> None:
    sizes = MEMORY_SIZES[:1] if quick else MEMORY_SIZES
    rows: list[list[Any]] = []
    with fake_server(0.0) as server:
        run_once(server.url, 32, 32)  # warm-up, so the import is not counted as growth
        for n in sizes:
            server.reset()
            gc.collect()
            before = rss_mb()
            seconds, result = run_once(server.url, n, 32)
            gc.collect()
            after = rss_mb()
            rows.append(
                [
                    n,
                    f"{seconds:.1f}",
                    f"{before:.0f}",
                    f"{after:.0f}",
                    f"{(after - before) * 1024 / n:.1f}",
                    len(result.llm_responses),
                ]
            )
            del result
    print_table(
        "Memory of a run (latency 0, c=32; the result, holding every response, is still alive"
        " at 'after')",
        ["N", "wall s", "RSS before MiB", "RSS after MiB", "KiB per prompt", "responses"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per request")
    parser.add_argument("--quick", action="store_true", help="only the short combinations")
    parser.add_argument("--sizes", type=_ints, default=SIZES, help="N values, e.g. 200")
    parser.add_argument("--concurrency", type=_ints, default=CONCURRENCY, help="e.g. 1,16")
    parser.add_argument("--repeat", type=int, default=1, help="runs per row (median)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory table")
    parser.add_argument("--image", help="run inside this image (podman, as root)")
    args = parser.parse_args()
    if args.image:
        sys.exit(in_image(args))
    print(f"machine: {machine_note()}; Python {platform.python_version()}")
    throughput_table(args.latency, args.quick, args.sizes, args.concurrency, max(1, args.repeat))
    if not args.no_memory:
        memory_table(args.quick)


def in_image(args: argparse.Namespace) -> int:
    """Run this script with the same settings in the image ``--image`` names."""
    src = "/src"
    settings = [
        f"--latency={args.latency}",
        f"--sizes={','.join(map(str, args.sizes))}",
        f"--concurrency={','.join(map(str, args.concurrency))}",
        f"--repeat={args.repeat}",
        *(["--quick"] if args.quick else []),
        *(["--no-memory"] if args.no_memory else []),
    ]
    python = image_python(
        args.image, "--network=host", f"--volume={REPO_ROOT}:{src}:ro", f"--workdir={src}"
    )
    command = [*python, f"{src}/bench/throughput.py", *settings]
    return subprocess.run(command, check=False).returncode


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


if __name__ == "__main__":
    main()
