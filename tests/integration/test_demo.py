"""`make demo` runs scripts/demo.py: it must keep working offline and show the drift."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.unit.core.render.test_html import page_data

ROOT = Path(__file__).resolve().parents[2]


def test_demo_reports_the_drifted_recordings_regressions_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["OPENAI_API_BASE"] = "http://127.0.0.1:9"  # nothing listens: any model call would fail
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "baseline created" in result.stdout
    assert "7 regressions" in result.stdout
    for broken in ("json_validity", "weather-args", "must-answer", "banner-length"):
        assert broken in result.stdout
    comment = (tmp_path / "promptcanary-report" / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("**❌ 7 regression")
    assert "<!-- promptcanary-action:comment-id=default -->" in comment
    assert (tmp_path / ".demo" / "baselines").is_dir()
    page = (tmp_path / "promptcanary-report" / "report.html").read_text(encoding="utf-8")
    rows = page_data(page)["rows"]
    assert [r[4] for r in rows].count("regression") == 7  # the verdict column of each row
