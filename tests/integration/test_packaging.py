"""The built wheel: package data and typing markers are in it, and the build raises no warnings
about them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_templates_and_py_typed_and_builds_without_warnings(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in ("promptcanary", "promptcanary_action"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
         "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    log = built.stdout + built.stderr
    assert built.returncode == 0, log
    assert "BuildBackendWarning" not in log and "is absent from the `packages`" not in log, log
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "promptcanary/py.typed",
        "promptcanary_action/py.typed",
        *(f"promptcanary/templates/{p.name}" for p in (ROOT / "promptcanary/templates").iterdir()),
        *(
            f"promptcanary_action/templates/{p.name}"
            for p in (ROOT / "promptcanary_action/templates").glob("*.j2")
        ),
    }
    assert len(expected) > 3 and expected <= names, sorted(expected - names)
    assert not any("__pycache__" in n for n in names)
