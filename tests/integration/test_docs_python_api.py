"""docs/python-api.md's example, extracted from the page and run against the local fake server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"
DOC_URL = "http://127.0.0.1:8080/v1"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)


def run_example(tmp_path: Path, server: FakeLLMServer) -> subprocess.CompletedProcess[str]:
    (suite,) = blocks("yaml")
    (code,) = blocks("python")
    assert DOC_URL in suite
    (tmp_path / "canary.yaml").write_text(suite.replace(DOC_URL, server.url), encoding="utf-8")
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_the_python_api_example_runs_saves_compares_and_gates(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", sequence=["Paris"] * 8 + ["Lyon"] * 8)
    done = run_example(tmp_path, llm_server)
    assert done.returncode == 1, done.stderr  # the second run regressed: the gate fails
    assert "pass rate 0%, 1 regression(s)" in done.stdout
    assert len(list((tmp_path / ".promptcanary" / "baselines").glob("*.json"))) == 1
    assert llm_server.request_count == 16


def test_the_python_api_example_passes_when_nothing_changed(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", content="Paris")
    done = run_example(tmp_path, llm_server)
    assert done.returncode == 0, done.stderr
    assert "pass rate 100%, 0 regression(s)" in done.stdout
