# ruff: noqa: E402
"""Start-up cost of the action: process start of ``entrypoint.py`` to first request and to exit.

``entrypoint.py`` runs as a subprocess with the environment a Docker action gets on a runner
(``tests/e2e/runner.build_env``), ``baseline: none``, no comment and no check run, on a 1-prompt
suite with

(a) a ``replay:`` model: no request is made, so only the time to exit counts, and LiteLLM must not
    be imported at all (checked in a separate run with ``python -X importtime``);
(b) a LiteLLM model (``openai/bench``) against ``tests/fakes/llm_server.FakeLLMServer``: time to the
    first request reaching the server (its ``received_wall``) and to exit.

Reference: LiteLLM's bare import in a fresh interpreter, from process start to the moment the
import statement returns (the child prints the clock right after it; its ~1 s of interpreter
teardown at exit is not counted, since ``entrypoint.py`` skips it with ``os._exit``). Target: the
first request arrives at most 0.3 s after that. Each figure is the median of several runs.

With ``--image IMAGE`` every run happens in the action's image instead, started the way the
runner starts it (``tests/container/runner.run_in_container``: podman, mounted workspace and
command files, ``INPUT_*``); the clock starts before ``podman run``, so container start-up counts
on both sides of the comparison (the reference is ``python -c`` run in the same image).

    .venv/bin/python bench/startup.py [--repeat 3] [--quick] [--image IMAGE]
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

from bench._common import (
    REPO_ROOT,
    action_env,
    image_python,
    machine_note,
    median,
    print_table,
)

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


IMPORT_CODE = "import litellm, time; print(repr(time.time()))"


def run_entrypoint(
    model: str, extra_env: dict[str, str], *, image: str | None = None
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """``(start wall clock, seconds to exit, completed process)`` of one ``entrypoint.py`` run,
    as a local subprocess or, with ``image``, in the container."""
    with tempfile.TemporaryDirectory(prefix="pc-startup-") as tmp:
        root = Path(tmp)
        workspace = _workspace(root, model)
        env = _env(root, workspace, extra_env)
        if image is not None:
            from tests.container.runner import run_in_container

            clock: list[float] = []
            result = run_in_container(
                image,
                env,
                workspace,
                on_start=lambda: clock.extend((time.time(), time.perf_counter())),
                on_exit=lambda: clock.append(time.perf_counter()),
            )
            started, seconds = clock[0], clock[2] - clock[1]
            done = subprocess.CompletedProcess(
                [image], result.returncode, result.stdout, result.stderr
            )
            return started, seconds, done
        started = time.time()
        begin = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(REPO_ROOT / "entrypoint.py")],
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


def python_command(image: str | None) -> list[str]:
    return [sys.executable] if image is None else image_python(image)


def time_python(code: str, repeat: int, image: str | None) -> tuple[float, float]:
    """Median ``(process start -> the code's printed clock, process start -> exit)``."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    marks, exits = [], []
    for _ in range(repeat):
        started = time.time()
        begin = time.perf_counter()
        proc = subprocess.run(
            [*python_command(image), "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        exits.append(time.perf_counter() - begin)
        printed = proc.stdout.strip().splitlines()
        marks.append(float(printed[-1]) - started if printed else float("nan"))
    return median(marks), median(exits)


def replay_case(repeat: int, image: str | None) -> dict[str, Any]:
    exits = []
    for _ in range(repeat):
        _, seconds, proc = run_entrypoint("replay:recording.jsonl", {}, image=image)
        _check(proc, "replay")
        exits.append(seconds)
    # PYTHONPROFILEIMPORTTIME (= -X importtime) lists every module imported on stderr.
    _, _, proc = run_entrypoint(
        "replay:recording.jsonl", {"PYTHONPROFILEIMPORTTIME": "1"}, image=image
    )
    _check(proc, "replay with PYTHONPROFILEIMPORTTIME")
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    heavy = sorted(m for m in imported if m.split(".")[0] in {"litellm", "openai", "aiohttp"})
    return {"exit": median(exits), "runs": exits, "heavy": heavy, "modules": len(imported)}


def litellm_case(repeat: int, image: str | None) -> dict[str, Any]:
    """Each repeat runs the reference import, then the action: the pair sees the same machine
    load, and the target is judged on the median of the per-pair differences."""
    from tests.fakes.llm_server import FakeLLMServer

    imports, import_exits, firsts, exits, margins = [], [], [], [], []
    with FakeLLMServer() as server:
        for _ in range(repeat):
            imported, import_exit = time_python(IMPORT_CODE, 1, image)
            server.reset()
            started, seconds, proc = run_entrypoint(
                "openai/bench",
                {"OPENAI_API_KEY": "sk-bench", "OPENAI_API_BASE": server.url},
                image=image,
            )
            _check(proc, "litellm")
            records = server.requests
            if not records:
                print("warning: the fake server got no request")
                continue
            first = records[0]["received_wall"] - started
            imports.append(imported)
            import_exits.append(import_exit)
            firsts.append(first)
            exits.append(seconds)
            margins.append(first - imported)
    return {
        "import": median(imports),
        "import_exit": median(import_exits),
        "first": median(firsts),
        "exit": median(exits),
        "margin": median(margins),
        "runs": list(zip(imports, firsts, strict=True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="2 runs per measurement")
    parser.add_argument("--image", help="run everything in this image (podman, as root)")
    args = parser.parse_args()
    print(f"machine: {machine_note()}")
    repeat = 2 if args.quick else max(1, args.repeat)
    where = f"in the image {args.image}" if args.image else "as local subprocesses"
    start = "container start" if args.image else "process start"

    python_alone = time_python("import time; print(repr(time.time()))", repeat, args.image)[0]
    replay = replay_case(repeat, args.image)
    live = litellm_case(repeat, args.image)

    print_table(
        f"Start-up of entrypoint.py {where} (median of {repeat} runs; 1-prompt suite,"
        " baseline: none)",
        ["measurement", "seconds", "note"],
        [
            [f"python -c pass: {start} -> running", f"{python_alone:.2f}", "interpreter start"],
            [
                f"python -c 'import litellm': {start} -> import done",
                f"{live['import']:.2f}",
                "reference (run just before each (b) run)",
            ],
            [
                f"python -c 'import litellm': {start} -> exit",
                f"{live['import_exit']:.2f}",
                "includes interpreter teardown; not the reference",
            ],
            [
                f"(a) replay: {start} -> exit",
                f"{replay['exit']:.2f}",
                "litellm imported: "
                + (", ".join(replay["heavy"][:3]) if replay["heavy"] else "no")
                + f" ({replay['modules']} modules in all)",
            ],
            [
                f"(b) litellm: {start} -> first request",
                f"{live['first']:.2f}",
                f"median of (first request - reference) per pair: {live['margin']:+.2f};"
                f" target <= +{TARGET_MARGIN:g}: "
                + ("met" if live["margin"] <= TARGET_MARGIN else "MISSED"),
            ],
            [f"(b) litellm: {start} -> exit", f"{live['exit']:.2f}", ""],
        ],
    )
    print(
        "\nruns: replay exit "
        + ", ".join(f"{t:.2f}" for t in replay["runs"])
        + "; (reference, first request) "
        + ", ".join(f"({a:.2f}, {b:.2f})" for a, b in live["runs"])
    )


if __name__ == "__main__":
    main()
