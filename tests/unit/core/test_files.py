"""Atomic writes: the written file's mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from promptcanary.core.files import atomic_write_text


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_atomic_write_honours_the_process_umask(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "sub" / "run.json", "{}\n")
        atomic_write_text(tmp_path / "sub" / "run.json", "{}\n")  # a replaced file too
    finally:
        os.umask(previous)
    written = tmp_path / "sub" / "run.json"
    assert stat.S_IMODE(written.stat().st_mode) == mode
    assert written.read_text(encoding="utf-8") == "{}\n"
