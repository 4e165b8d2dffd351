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


def _umask() -> int:
    """The process umask. Linux shows it in /proc; elsewhere it can only be read by setting it,
    which briefly leaves the process (every thread) with a strict umask of 077."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o077)
    os.umask(current)
    return current


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a part.

    The file gets the mode ``open()`` would give it (0666 less the umask): mkstemp's 0600 would
    lock the workflow's other steps and users out of a suite, a run or a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
