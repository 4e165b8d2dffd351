"""Files: atomic writes (a reader sees the old or the new file, never a part), and reading JSON
Lines text (recordings, baseline history) one JSON value a line."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def numbered_values(text: str) -> Iterator[tuple[int, Any, str]]:
    """``(line number, value, "")`` for each non-blank line (numbered from 1), or
    ``(line number, None, why)`` for a line that is not valid JSON."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON ({exc.msg})"
            continue
        yield number, value, ""


def _umask_mode() -> int:
    """The mode a plain ``open()`` would give a new file (0o644 under umask 022)."""
    # The umask can only be read by setting it; set it straight back.
    current = os.umask(0o022)
    os.umask(current)
    return 0o666 & ~current


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600; the written file honours the umask like any other.
        os.fchmod(fd, _umask_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
