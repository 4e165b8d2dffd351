"""The wheel: built without setuptools warnings, with every template and the py.typed markers."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("promptcanary", "promptcanary_action")


def test_wheel_builds_without_warnings_and_ships_templates_and_py_typed(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
         "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "BuildBackendWarning" not in done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in PACKAGES:
        assert f"{package}/py.typed" in names
        templates = sorted((ROOT / package / "templates").glob("*.j2"))
        assert templates, f"{package} has no templates to check"
        for template in templates:
            assert f"{package}/templates/{template.name}" in names
    # `promptcanary init --example NAME` reads its starters from the installed package.
    starters = sorted((ROOT / "promptcanary" / "starters").iterdir())
    assert starters and all(f"promptcanary/starters/{s.name}" in names for s in starters)
    assert not [n for n in names if "__pycache__" in n], "byte code caches in the wheel"
