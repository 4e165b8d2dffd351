"""Start ``entrypoint.py`` for the whole-step tests: forked from a warm interpreter, or fresh.

A fresh ``python entrypoint.py`` spends about 3 s of CPU importing LiteLLM and the openai SDK
before its first request; with a hundred whole-step tests on a 2-core machine that import was most
of ``make test``. So by default each step is a child of a warm process (multiprocessing's
*forkserver*, one per pytest worker) that imported LiteLLM, the openai SDK's resources and the
action once. The child is set up as a new process would be — environment, working directory,
argv, standard streams, ``sys.path`` — and runs ``entrypoint.py`` as ``__main__``; it has its own
pid, receives signals and exits with the step's code like the fresh process.

What a fork cannot show — the interpreter's own start, the effect of environment variables read
at import time, which modules a step imports at all — is shown by the tests that pass
``fresh=True`` (``tests/e2e/test_launch.py`` runs the same step both ways and compares them),
by ``make soak`` and by the container test. ``PROMPTCANARY_E2E_FRESH=1`` starts every step fresh.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import runpy
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Protocol

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO_ROOT / "entrypoint.py"
FRESH_VARIABLE = "PROMPTCANARY_E2E_FRESH"

#: Imported once by the warm process: what every step would otherwise import on its own.
#: (openai.resources is what LiteLLM's first request imports lazily.)
PRELOAD = ["litellm", "openai.resources", "promptcanary_action.main", "tests.e2e.launch"]

#: The warm process's sys.path before anything touched it: a fresh interpreter's defaults.
_BASE_SYS_PATH = list(sys.path)


class Step(Protocol):
    """A running ``entrypoint.py``."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float) -> int:
        """The exit code; raises :class:`subprocess.TimeoutExpired` after ``timeout``."""
        ...

    def send_signal(self, signum: int) -> None: ...


def fresh_by_default() -> bool:
    return os.environ.get(FRESH_VARIABLE, "") not in ("", "0")


def start(
    env: Mapping[str, str],
    cwd: Path,
    stdout: Path,
    stderr: Path,
    *,
    fresh: bool | None = None,
    script: Path = ENTRYPOINT,
) -> Step:
    """Start ``script`` (``entrypoint.py``) with exactly ``env`` in ``cwd``, stdin from /dev/null
    and its standard streams written to the files ``stdout`` and ``stderr``."""
    if fresh if fresh is not None else fresh_by_default():
        return _FreshStep(env, cwd, stdout, stderr, script)
    return _ForkedStep(env, cwd, stdout, stderr, script)


class _FreshStep:
    def __init__(
        self, env: Mapping[str, str], cwd: Path, stdout: Path, stderr: Path, script: Path
    ) -> None:
        with stdout.open("wb") as out, stderr.open("wb") as err:
            self._proc = subprocess.Popen(
                [sys.executable, str(script)],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
        self.pid = self._proc.pid

    def poll(self) -> int | None:
        return self._proc.poll()

    def wait(self, timeout: float) -> int:
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            raise

    def send_signal(self, signum: int) -> None:
        self._proc.send_signal(signum)


class _ForkedStep:
    def __init__(
        self, env: Mapping[str, str], cwd: Path, stdout: Path, stderr: Path, script: Path
    ) -> None:
        for path in (stdout, stderr):  # there from the start, as with a fresh process
            path.write_bytes(b"")
        self._process = _context().Process(
            target=_run_script,
            args=(str(script), dict(env), str(cwd), str(stdout), str(stderr)),
        )
        self._process.start()
        assert self._process.pid is not None
        self.pid = self._process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            self._process.kill()
            self._process.join()
            raise subprocess.TimeoutExpired(self._process.name, timeout)
        return self._process.exitcode

    def send_signal(self, signum: int) -> None:
        if self._process.exitcode is None:  # as Popen: never signal a pid that may be reused
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


_CONTEXT: multiprocessing.context.ForkServerContext | None = None


def _context() -> multiprocessing.context.ForkServerContext:
    """The forkserver, started once per test process with the preloaded modules."""
    global _CONTEXT
    if _CONTEXT is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        # The warm process inherits this environment when it starts: LiteLLM must find its cost
        # map locally (as in the image), and the repository must be importable.
        names = ("LITELLM_LOCAL_MODEL_COST_MAP", "PYTHONPATH")
        saved = {name: os.environ.get(name) for name in names}
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(REPO_ROOT), saved["PYTHONPATH"]])
        )
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        _CONTEXT = context
    return _CONTEXT


# ── in the forked child ───────────────────────────────────────────────────────


def _run_script(script: str, env: dict[str, str], cwd: str, stdout: str, stderr: str) -> None:
    """Become the process ``python <script>`` would be, then run it (``entrypoint.py`` ends in
    ``os._exit`` with the step's exit code)."""
    _redirect(0, os.devnull, os.O_RDONLY)
    _redirect(1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    _redirect(2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's stdin
    sys.stdout = _text_stream(1, unbuffered, errors="strict")
    sys.stderr = _text_stream(2, unbuffered, errors="backslashreplace")
    sys.argv = [script]
    extra_path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [str(Path(script).parent), *extra_path, *(p for p in _BASE_SYS_PATH if p)]
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    tempfile.tempdir = None  # computed again from this environment's TMPDIR
    # A new interpreter's handlers (the warm process ignores SIGINT).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runpy.run_path(script, run_name="__main__")


def _redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o644)
    os.dup2(opened, fd)
    os.close(opened)


def _text_stream(fd: int, unbuffered: bool, *, errors: str) -> IO[str]:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding="utf-8",
        errors=errors,
        line_buffering=not unbuffered,
        write_through=unbuffered,
    )
