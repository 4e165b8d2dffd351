"""Shared pieces of the benchmarks: tables, memory readings, suites and the fake LLM server.

The benchmarks print and never assert: they are for people reading numbers, not for CI gates.
They run from the repository root (``make bench`` or ``.venv/bin/python bench/<name>.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

# LiteLLM fetches its cost map from the internet at import time unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") / 1024


def positive(text: str) -> int:
    """A command-line count of at least 1 (argparse ``type``): histories, runs, answers."""
    # Deferred: the CLI's parser module imports the engine, which the benches that time their own
    # imports (bench/startup.py) must not pay for here.
    from promptcanary.cli_args import whole_number

    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least 1")
    return value


# ── memory ──────────────────────────────────────────────────────────────────


def rss_mb() -> float:
    """This process's resident set size now, in MiB (from ``/proc``; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * _PAGE_KB / 1024


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine_note() -> str:
    """Cores and load average: other work on the machine stretches every wall-clock figure."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return f"{os.cpu_count()} cores"
    cores = os.cpu_count() or 1
    busy = " (busy: wall-clock figures are pessimistic)" if load > cores / 2 else ""
    return f"{cores} cores, 1-minute load average {load:.1f}{busy}"


# ── printing ────────────────────────────────────────────────────────────────


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain-text table (markdown pipe syntax, so it can be pasted into bench/README.md)."""
    cells = [[str(h) for h in headers], *[[_cell(v) for v in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    print(f"\n{title}\n")
    for n, row in enumerate(cells):
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    sys.stdout.flush()


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# ── suites ──────────────────────────────────────────────────────────────────


def cheap_probes() -> list[Any]:
    """Three probes whose cost is negligible next to a request: the throughput bench's set."""
    from promptcanary.core.probes import (
        KeywordPresenceProbe,
        ResponseLengthProbe,
        VerbosityProbe,
    )

    return [
        ResponseLengthProbe(min_chars=1, max_chars=10_000),
        KeywordPresenceProbe(required_keywords=["prompt"]),
        VerbosityProbe(min_words=1, max_words=2_000),
    ]


def build_suite(n_prompts: int, probes: list[Any] | None = None, name: str = "bench") -> Any:
    """A suite of ``n_prompts`` distinct short prompts (the fake server echoes them)."""
    from promptcanary import CanarySuite
    from promptcanary.core.models import CanaryPrompt

    prompts = [
        CanaryPrompt(id=f"p{i:05d}", text=f"Bench prompt number {i}: say something short.")
        for i in range(n_prompts)
    ]
    return CanarySuite(name=name, prompts=prompts, probes=probes or cheap_probes())


# ── entrypoint.py as the runner starts it ──────────────────────────────────


def action_env(
    root: Path, workspace: Path, inputs: dict[str, str], env: dict[str, str]
) -> dict[str, str]:
    """A workflow_dispatch step's environment (``tests/e2e/runner.build_env``) with
    ``baseline: none``, no comment and no check run; ``inputs`` add to or override those."""
    from tests.e2e.runner import build_env

    return build_env(
        root,
        inputs={"baseline": "none", "comment": "off", "check-run": "false", **inputs},
        event_name="workflow_dispatch",
        event={"repository": {"full_name": "octo-org/octo-repo", "default_branch": "main"}},
        workspace=workspace,
        env=env,
    )


def image_python(image: str, *podman_options: str) -> list[str]:
    """The command line that runs the image's ``python`` (podman, as root; ``podman_options``
    before the image, e.g. mounts)."""
    from tests.container.runner import podman_run  # not at the top: see the sys.path note

    return [*podman_run(), *podman_options, "--entrypoint=python", image]


# ── the fake LLM server in its own process ──────────────────────────────────

# The server runs in a child process: on two cores an in-process server would fight the engine for
# the GIL (the real API is on another machine), and its request records would inflate our RSS.
_SERVER_SCRIPT = """
import json, sys
from tests.fakes.llm_server import FakeLLMServer
server = FakeLLMServer(latency=float(sys.argv[1])).start()
print(json.dumps({"url": server.url}), flush=True)
for line in sys.stdin:
    command = line.strip()
    if command == "stats":
        records = server.requests
        ports = {r["client_port"] for r in records}
        print(json.dumps({"requests": server.request_count, "connections": len(ports),
                          "peak_in_flight": server.peak_in_flight}), flush=True)
    elif command == "reset":
        server.reset()
        print("{}", flush=True)
server.stop()
"""


class ServerProcess:
    """``tests/fakes/llm_server.FakeLLMServer`` with a fixed latency, in a child process
    (``script`` reads commands on stdin and answers each with a JSON line)."""

    def __init__(self, latency: float, script: str = _SERVER_SCRIPT) -> None:
        import subprocess  # not at the top: see the sys.path note above

        self.latency = latency
        self._proc: Any = subprocess.Popen(
            [sys.executable, "-c", script, str(latency)],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url: str = self._ask(None)["url"]

    def _ask(self, command: str | None) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        if command is not None:
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the fake LLM server process exited")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stats(self) -> dict[str, Any]:
        """``requests``, distinct client ``connections`` and ``peak_in_flight`` since reset."""
        return self._ask("stats")

    def reset(self) -> None:
        self._ask("reset")

    def close(self) -> None:
        if self._proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except TimeoutError:
            self._proc.kill()
            self._proc.wait()


@contextlib.contextmanager
def fake_server(latency: float) -> Iterator[ServerProcess]:
    server = ServerProcess(latency)
    try:
        yield server
    finally:
        server.close()
