"""The released action.yml passes action-validator (run with `make container-test`, which may
reach the npm registry; the rewrite itself is unit-tested in tests/unit)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_released_action_yml_passes_action_validator(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    assert npx, "npx (Node.js) is needed for action-validator, as for `make lint`"
    released = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", released)
    rewrite = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "release_action_yml.py"),
            "--file",
            str(released),
            "--image",
            "ghcr.io/octo-org/promptcanary-action",
            "--version",
            "1.2.3",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert rewrite.returncode == 0, rewrite.stderr
    assert "image: docker://ghcr.io/octo-org/promptcanary-action:1.2.3" in released.read_text()

    proc = subprocess.run(
        [npx, "--yes", "@action-validator/cli", str(released)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
