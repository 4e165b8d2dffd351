"""scripts/container/drop_dead_bytecode.py: byte code goes only for modules whose top level
imports a package that is not installed."""

from __future__ import annotations

import compileall
import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "container" / "drop_dead_bytecode.py"
ABSENT = "promptcanary_no_such_package_xyz"

MODULES = {
    "dead.py": f"import os\nfrom {ABSENT}.sub import thing\n",
    "dead_plain.py": f"import json, {ABSENT}\n",
    "guarded.py": f"try:\n    import {ABSENT}\nexcept ImportError:\n    pass\n",
    "typing_only.py": f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import {ABSENT}\n",
    "lazy.py": f"def f():\n    import {ABSENT}\n",
    "alive.py": "import json\nfrom os import path\n",
    "relative.py": "from . import alive\n",
}


def cached(path: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(path)))


def test_only_modules_that_can_never_import_lose_their_byte_code(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in MODULES.items():
        (package / name).write_text(text)
    assert compileall.compile_dir(str(tmp_path), quiet=1)

    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=False
    )

    assert proc.returncode == 0, proc.stderr
    assert "removed 2 .pyc files" in proc.stdout
    gone = {name for name in MODULES if not cached(package / name).exists()}
    assert gone == {"dead.py", "dead_plain.py"}
    assert all((package / name).exists() for name in MODULES)  # sources stay
