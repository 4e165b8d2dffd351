# ruff: noqa: E402
"""Start-up cost of the action: process start of ``entrypoint.py`` to first request and to exit.

``entrypoint.py`` runs as a subprocess with the environment a Docker action gets on a runner
(``tests/e2e/runner.build_env``), ``baseline: none``, no comment and no check run, on a 1-prompt
suite with

(a) a ``replay:`` model: no request is made, so only the time to exit counts, and LiteLLM must not
    be imported at all (checked in a separate run with ``python -X importtime``);
(b) a LiteLLM model (``openai/bench``) against ``tests/fakes/llm_server.FakeLLMServer``: time to the
    first request reaching the server (its ``received_wall``) and to exit.

Reference: LiteLLM's own import time in a fresh ``python -c "import litellm"``. Target: the first
request arrives at most 0.3 s after that. Each figure is the median of several runs.

    .venv/bin/python bench/startup.py [--repeat 3] [--quick]
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
import os
import subprocess
import tempfile
import time
from typing import Any

from bench._common import REPO_ROOT, action_env, machine_note, median, print_table

TARGET_MARGIN = 0.3

SUITE = """\
name: startup-bench
models: [{model}]
probes:
  - type: response_length
    min_chars: 1
prompts:
  - id: hello
    text: Say hello.
"""

RECORDING = {
    "prompt_id": "hello",
    "sample": 0,
    "content": "Hello!",
    "tool_calls": [],
    "finish_reason": "stop",
    "model": "openai/gpt-4o-mini",
    "error": None,
}


def _workspace(root: Path, model: str) -> Path:
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "canary.yaml").write_text(SUITE.format(model=model), encoding="utf-8")
    (workspace / "recording.jsonl").write_text(json.dumps(RECORDING) + "\n", encoding="utf-8")
    return workspace


def _env(root: Path, workspace: Path, extra: dict[str, str]) -> dict[str, str]:
    return action_env(root, workspace, {"config": "canary.yaml", "report-dir": "report"}, extra)


def run_entrypoint(
    model: str, extra_env: dict[str, str], *, python_flags: tuple[str, ...] = ()
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """``(start wall clock, seconds to exit, completed process)`` of one ``entrypoint.py`` run."""
    with tempfile.TemporaryDirectory(prefix="pc-startup-") as tmp:
        root = Path(tmp)
        workspace = _workspace(root, model)
        env = _env(root, workspace, extra_env)
        started = time.time()
        begin = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, *python_flags, str(REPO_ROOT / "entrypoint.py")],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return started, time.perf_counter() - begin, proc


def _check(proc: subprocess.CompletedProcess[str], label: str) -> None:
    if proc.returncode != 0:
        print(
            f"warning: {label}: entrypoint.py exited {proc.returncode}:\n{proc.stdout[-2000:]}"
            f"\n{proc.stderr[-2000:]}"
        )


def time_python(code: str, repeat: int) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append(time.perf_counter() - begin)
    return median(times)


def replay_case(repeat: int) -> dict[str, Any]:
    exits = []
    for _ in range(repeat):
        _, seconds, proc = run_entrypoint("replay:recording.jsonl", {})
        _check(proc, "replay")
        exits.append(seconds)
    # -X importtime lists every module imported, one a line, on stderr.
    _, _, proc = run_entrypoint("replay:recording.jsonl", {}, python_flags=("-X", "importtime"))
    _check(proc, "replay -X importtime")
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    heavy = sorted(m for m in imported if m.split(".")[0] in {"litellm", "openai", "aiohttp"})
    return {"exit": median(exits), "runs": exits, "heavy": heavy, "modules": len(imported)}


def litellm_case(repeat: int) -> dict[str, Any]:
    from tests.fakes.llm_server import FakeLLMServer

    firsts, exits = [], []
    with FakeLLMServer() as server:
        for _ in range(repeat):
            server.reset()
            started, seconds, proc = run_entrypoint(
                "openai/bench",
                {"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.url},
            )
            _check(proc, "litellm")
            records = server.requests
            if not records:
                print("warning: the fake server got no request")
                continue
            firsts.append(records[0]["received_wall"] - started)
            exits.append(seconds)
    return {"first": median(firsts), "exit": median(exits), "runs": firsts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="2 runs per measurement")
    args = parser.parse_args()
    print(f"machine: {machine_note()}")
    repeat = 2 if args.quick else max(1, args.repeat)

    python_alone = time_python("pass", repeat)
    litellm_import = time_python("import litellm", repeat)
    replay = replay_case(repeat)
    live = litellm_case(repeat)
    target = litellm_import + TARGET_MARGIN

    print_table(
        f"Start-up of entrypoint.py (median of {repeat} runs; 1-prompt suite, baseline: none)",
        ["measurement", "seconds", "note"],
        [
            ["python -c pass", f"{python_alone:.2f}", "interpreter start"],
            ["python -c 'import litellm'", f"{litellm_import:.2f}", "reference"],
            [
                "(a) replay: process start -> exit",
                f"{replay['exit']:.2f}",
                "litellm imported: "
                + (", ".join(replay["heavy"][:3]) if replay["heavy"] else "no")
                + f" ({replay['modules']} modules in all)",
            ],
            [
                "(b) litellm: process start -> first request",
                f"{live['first']:.2f}",
                f"target <= {target:.2f} (import + {TARGET_MARGIN:g}):"
                f" {'met' if live['first'] <= target else 'MISSED'}",
            ],
            ["(b) litellm: process start -> exit", f"{live['exit']:.2f}", ""],
        ],
    )
    print(
        "\nruns: replay exit "
        + ", ".join(f"{t:.2f}" for t in replay["runs"])
        + "; litellm first request "
        + ", ".join(f"{t:.2f}" for t in live["runs"])
    )


if __name__ == "__main__":
    main()
