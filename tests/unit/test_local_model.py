"""scripts/local_model.py without a server: what it checks before building or stopping anything.

The server itself is exercised by the real-model layer (tests/real_model, `make test-real-model`).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import local_model


def test_a_machine_without_compilers_gets_the_missing_tools_and_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no cc, no c++

    assert local_model.missing_build_tools() == [
        "a C compiler (cc, gcc or clang)",
        "a C++ compiler (c++, g++ or clang++)",
    ]
    with pytest.raises(local_model.ModelSetupError) as info:
        local_model.require_build_tools()
    message = str(info.value)
    assert "lacks a C compiler" in message and "C++ compiler" in message
    assert "apt-get install build-essential" in message
    assert "make model-install" in message


def test_with_compilers_on_path_nothing_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("gcc", "g++"):
        tool = tmp_path / name
        tool.write_text("#!/bin/sh\n", encoding="utf-8")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert local_model.missing_build_tools() == []
    local_model.require_build_tools()


def test_only_a_llama_cpp_server_counts_as_the_model_server() -> None:
    """`stop` reads a pid file: a stale one naming another process must not get it killed."""
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        try:
            assert not local_model._is_model_server(other.pid)
            assert not local_model._is_model_server(os.getpid())
        finally:
            other.kill()


def test_stop_without_a_server_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    port = local_model.free_port()  # no `serve` ever wrote a pid file for it
    assert local_model.main(["stop", "--port", str(port)]) == 0
    assert f"no server started by `serve` on port {port}" in capsys.readouterr().out


def test_the_model_build_targets_a_portable_instruction_set_on_x86() -> None:
    # -march=native on a CPU that advertises AMX builds kernels that crash (SIGSEGV) in a VM
    # that does not grant the AMX state; the build must name its instruction set instead.
    args = local_model.CMAKE_ARGS.split()
    assert "-DLLAVA_BUILD=OFF" in args
    if platform.machine() in ("x86_64", "AMD64"):
        assert "-DGGML_NATIVE=OFF" in args and "-DGGML_AVX2=ON" in args
    else:
        assert not any(a.startswith("-DGGML_NATIVE") for a in args)
