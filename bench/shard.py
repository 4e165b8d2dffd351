# ruff: noqa: E402
"""One job against four matrix legs plus the merge job: wall time of each, and the ratio.

A 2,000-prompt suite (3 cheap probes) against ``tests/fakes/llm_server.FakeLLMServer`` answering
every request after L = 200 ms (in a child process, as a real API is on another machine), through
``entrypoint.py`` with the environment a Docker action gets on a runner
(``tests/e2e/runner.build_env``), ``concurrency: 16``, ``baseline: none``, no comment, no check
run:

- one job: the whole suite in one process;
- legs: ``shard: 1/4`` … ``4/4`` as four processes started together, each writing its report to
  ``<report-dir>/promptcanary-leg-<i>`` (where download-artifact would put its artifact), then
  ``mode: merge`` over that folder. Their wall time is from the legs' start to the merge's exit;
- each leg alone, one after another: the slowest plus the merge is the matrix's wall time when
  every leg has a runner of its own, as on GitHub (here the legs share the machine's cores).

The lower bound of one job is ⌈N/c⌉·L = 25 s, of one leg ⌈N/4/c⌉·L ≈ 6.3 s. Target: the legs
and the merge together at least 3× faster than one job. Every leg pays the process and LiteLLM
start-up again, and on a machine with fewer cores than legs they share the CPU.

    .venv/bin/python bench/shard.py [--prompts 2000] [--latency 0.2] [--legs 4] [--quick]
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
import json
import math
import subprocess
import tempfile
import time
from typing import Any

from bench._common import REPO_ROOT, action_env, fake_server, machine_note, print_table

CONCURRENCY = 16
TARGET_RATIO = 3.0


def suite_yaml(n_prompts: int) -> str:
    lines = [
        "name: shard-bench",
        "models: [openai/bench]",
        "probes:",
        "  - {type: response_length, min_chars: 1, max_chars: 10000}",
        "  - {type: keyword_presence, required_keywords: [prompt]}",
        "  - {type: verbosity, min_words: 1, max_words: 2000}",
        "prompts:",
    ]
    lines += [
        f"  - {{id: p{i:05d}, text: 'Bench prompt number {i}: say something short.'}}"
        for i in range(n_prompts)
    ]
    return "\n".join(lines) + "\n"


def _env(root: Path, workspace: Path, inputs: dict[str, str], url: str) -> dict[str, str]:
    return action_env(
        root,
        workspace,
        {"config": "canary.yaml", "concurrency": str(CONCURRENCY), **inputs},
        {"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": url},
    )


def start(root: Path, workspace: Path, inputs: dict[str, str], url: str) -> subprocess.Popen[str]:
    root.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "entrypoint.py")],
        cwd=workspace,
        env=_env(root, workspace, inputs, url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen[str], label: str) -> None:
    output, _ = proc.communicate(timeout=600)
    if proc.returncode != 0:
        print(f"warning: {label} exited {proc.returncode}:\n{output[-3000:]}")


def one_job(tmp: Path, workspace: Path, url: str) -> float:
    begin = time.perf_counter()
    finish(start(tmp / "one", workspace, {"report-dir": "report-one"}, url), "one job")
    return time.perf_counter() - begin


def legs_and_merge(tmp: Path, workspace: Path, url: str, legs: int) -> tuple[float, float]:
    """(seconds from the legs' start to the last leg's exit, seconds of the merge job)."""
    begin = time.perf_counter()
    procs = [
        start(
            tmp / f"leg-{i}",
            workspace,
            {"shard": f"{i}/{legs}", "report-dir": f"report-legs/promptcanary-leg-{i}"},
            url,
        )
        for i in range(1, legs + 1)
    ]
    for i, proc in enumerate(procs, start=1):
        finish(proc, f"leg {i}")
    legs_done = time.perf_counter()
    finish(
        start(tmp / "merge", workspace, {"mode": "merge", "report-dir": "report-legs"}, url),
        "merge",
    )
    return legs_done - begin, time.perf_counter() - legs_done


def legs_one_at_a_time(tmp: Path, workspace: Path, url: str, legs: int) -> float:
    """The slowest leg run alone: what each leg takes on a runner of its own, as on GitHub."""
    slowest = 0.0
    for i in range(1, legs + 1):
        begin = time.perf_counter()
        inputs = {"shard": f"{i}/{legs}", "report-dir": f"report-alone/promptcanary-leg-{i}"}
        finish(start(tmp / f"alone-{i}", workspace, inputs, url), f"leg {i} alone")
        slowest = max(slowest, time.perf_counter() - begin)
    return slowest


def _outcome(workspace: Path, folder: str) -> dict[str, Any]:
    path = workspace / folder / "outcome.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--legs", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="400 prompts at 100 ms")
    args = parser.parse_args()
    n, latency = (400, 0.1) if args.quick else (args.prompts, args.latency)
    print(f"machine: {machine_note()}")
    with tempfile.TemporaryDirectory(prefix="pc-shard-") as name, fake_server(latency) as server:
        tmp = Path(name)
        workspace = tmp / "workspace"
        workspace.mkdir()
        (workspace / "canary.yaml").write_text(suite_yaml(n), encoding="utf-8")
        whole = one_job(tmp, workspace, server.url)
        one_requests = server.stats()["requests"]
        server.reset()
        legs_s, merge_s = legs_and_merge(tmp, workspace, server.url, args.legs)
        leg_requests = server.stats()["requests"]
        alone = legs_one_at_a_time(tmp, workspace, server.url, args.legs)
        same = _outcome(workspace, "report-one").get("pairs") == _outcome(
            workspace, "report-legs"
        ).get("pairs")
    split = legs_s + merge_s
    ratio = whole / split if split else float("nan")
    print_table(
        f"{n:,} prompts, L = {latency * 1000:.0f} ms, c = {CONCURRENCY}, {args.legs} legs",
        ["run", "wall s", "lower bound s", "requests"],
        [
            [
                "one job",
                f"{whole:.1f}",
                f"{math.ceil(n / CONCURRENCY) * latency:.1f}",
                one_requests,
            ],
            [
                f"{args.legs} legs in parallel",
                f"{legs_s:.1f}",
                f"{math.ceil(n / args.legs / CONCURRENCY) * latency:.1f}",
                leg_requests,
            ],
            ["merge job", f"{merge_s:.1f}", "", 0],
            ["legs + merge", f"{split:.1f}", "", leg_requests],
            ["slowest leg alone + merge", f"{alone + merge_s:.1f}", "", ""],
        ],
    )
    verdict = "met" if ratio >= TARGET_RATIO else "MISSED"
    print(
        f"\nspeed-up, legs in parallel here: {ratio:.2f}x (target >= {TARGET_RATIO:g}x: {verdict})"
    )
    print(
        "speed-up with a runner per leg (slowest leg alone + merge): "
        f"{whole / (alone + merge_s):.2f}x"
    )
    print(f"merged outcome.json pairs equal to one job's: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
