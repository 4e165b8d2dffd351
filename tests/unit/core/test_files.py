"""core/files.py: atomic writes honour the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from promptcanary.core.files import atomic_write_text


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_atomic_write_text_honours_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "run.json", "{}\n")
        (tmp_path / "plain.json").write_text("{}\n")
    finally:
        os.umask(previous)
    written = stat.S_IMODE((tmp_path / "run.json").stat().st_mode)
    assert written == 0o666 & ~umask
    assert written == stat.S_IMODE((tmp_path / "plain.json").stat().st_mode)
