"""Delete the byte code of modules that can never be imported in this environment.

A module whose top level imports a package that is not installed (``from fastapi import ...`` in
LiteLLM's proxy server, which the action never runs and does not install) fails at that line
every time it is imported. Its ``.pyc`` can only speed up that failure, so it is dead weight in the
image (about 12 MB for LiteLLM's proxy). The ``.py`` files stay. Only unconditional imports count:
one under ``try:``, ``if TYPE_CHECKING:`` or inside a function keeps the module's byte code.

    /opt/venv/bin/python drop_dead_bytecode.py /opt/venv/lib/python3.13/site-packages
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from functools import cache
from pathlib import Path


@cache
def installed(top_level: str) -> bool:
    try:
        return importlib.util.find_spec(top_level) is not None
    except (ImportError, ValueError):
        return False


def missing_import(source: bytes) -> str | None:
    """The first unconditional top-level import of a package that is not installed, if any."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if not installed(name.split(".")[0]):
                return name
    return None


def drop(root: Path) -> tuple[int, int]:
    """Delete the ``.pyc`` files of such modules under ``root``; ``(files, bytes)`` removed."""
    files = size = 0
    for source in root.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.is_file() or missing_import(source.read_bytes()) is None:
            continue
        files += 1
        size += cached.stat().st_size
        cached.unlink()
    return files, size


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    files, size = drop(Path(argv[0]))
    print(f"drop_dead_bytecode: removed {files} .pyc files ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
