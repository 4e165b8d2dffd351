"""scripts/release_action_yml.py: the released action.yml names the versioned prebuilt image and
keeps every input and output (action-validator runs on it in tests/container)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release_action_yml.py"
IMAGE = "ghcr.io/octo-org/promptcanary-action"


def release(
    tmp_path: Path, *args: str, text: str | None = None
) -> subprocess.CompletedProcess[str]:
    target = tmp_path / "action.yml"
    original = (ROOT / "action.yml").read_text(encoding="utf-8")
    target.write_text(original if text is None else text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--file", str(target), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_main_builds_from_the_dockerfile() -> None:
    assert load(ROOT / "action.yml")["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_the_release_names_the_versioned_image_and_keeps_everything_else(tmp_path: Path) -> None:
    proc = release(tmp_path, "--image", IMAGE, "--version", "v1.4.2")

    assert proc.returncode == 0, proc.stderr
    original = load(ROOT / "action.yml")
    released = load(tmp_path / "action.yml")
    assert released["runs"] == {"using": "docker", "image": f"docker://{IMAGE}:1.4.2"}
    assert released["inputs"] == original["inputs"]
    assert released["outputs"] == original["outputs"]
    assert {k: v for k, v in released.items() if k != "runs"} == {
        k: v for k, v in original.items() if k != "runs"
    }
    # Only the image line differs: comments and layout stay as they were.
    before = (ROOT / "action.yml").read_text(encoding="utf-8").splitlines()
    after = (tmp_path / "action.yml").read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://{IMAGE}:1.4.2")]


def test_a_prerelease_version_is_kept_whole(tmp_path: Path) -> None:
    proc = release(tmp_path, "--image", IMAGE, "--version", "2.0.0-rc.1")

    assert proc.returncode == 0, proc.stderr
    assert load(tmp_path / "action.yml")["runs"]["image"] == f"docker://{IMAGE}:2.0.0-rc.1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--image", IMAGE, "--version", "latest"], "--version 'latest'"),
        (["--image", "ghcr.io/Octo-Org/promptcanary-action", "--version", "1.0.0"], "lower-case"),
        (["--image", f"{IMAGE}:1.0.0", "--version", "1.0.0"], "without tag"),
    ],
)
def test_bad_arguments_are_refused_and_leave_the_file(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = release(tmp_path, *args)

    assert proc.returncode == 1
    assert message in proc.stderr
    assert (tmp_path / "action.yml").read_text(encoding="utf-8") == (ROOT / "action.yml").read_text(
        encoding="utf-8"
    )


def test_an_already_released_action_yml_is_refused(tmp_path: Path) -> None:
    first = release(tmp_path, "--image", IMAGE, "--version", "1.0.0")
    assert first.returncode == 0, first.stderr
    text = (tmp_path / "action.yml").read_text(encoding="utf-8")

    again = release(tmp_path, "--image", IMAGE, "--version", "1.0.1", text=text)

    assert again.returncode == 1
    assert "expected `Dockerfile`" in again.stderr
