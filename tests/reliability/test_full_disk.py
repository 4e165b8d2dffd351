"""A full disk under the report folder: a real, tiny tmpfs (needs root to mount; skipped
otherwise). The step exits 2 naming the folder, every file left in the folder is whole (written
to a temporary file, then renamed), the results are still in the job summary, and the check run
is completed, not left in progress."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.conftest import ActionHarness, keyword_prompts, suite_text

pytestmark = pytest.mark.e2e

DISK_BYTES = 64 * 1024


@pytest.fixture
def full_disk(harness: ActionHarness) -> Iterator[Path]:
    """A 64 KiB tmpfs inside the workspace, filled but for one 4 KiB page."""
    mount_point = harness.workspace / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (root needed): {mounted.stderr.strip()}")
    try:
        (mount_point / "filler").write_bytes(b"\0" * (DISK_BYTES - 4096))
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_full_disk_is_exit_2_naming_the_folder_with_whole_files_only(
    harness: ActionHarness, full_disk: Path
) -> None:
    harness.write("canary.yaml", suite_text("full", harness.llm.url, keyword_prompts(20)))
    harness.llm.script(None, content="canary " + "words " * 200)
    report_dir = full_disk / "report"

    result = harness.run_pr({"baseline": "none", "report-dir": str(report_dir), "timeout": "60"})

    assert result.returncode == 2, result.log
    [error] = result.annotations("error")
    assert error.properties.get("title") == "PromptCanary: cannot write the report folder"
    assert str(report_dir) in error.message
    assert "No space left on device" in error.message
    assert "Traceback" not in result.log
    written = [p for p in report_dir.rglob("*") if p.is_file()]
    assert not [p for p in written if p.name.endswith(".tmp")], written
    for path in written:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            json.loads(text)  # whole, not cut mid-document
    assert "full" in result.summary  # the results survive in the job summary
    check = harness.check_run()
    assert check.status == "completed"
    assert check.conclusion == "failure"
    assert "No space left on device" in (check.summary or "")
