"""Fixtures and readers of the reliability tests: faults, load and hostile input, end to end.

The tests drive ``entrypoint.py`` through the e2e harness (:mod:`tests.e2e.conftest`): a
workspace, the fake LLM server reached through LiteLLM, the fake GitHub server with pull request
#7 seeded. This module re-exports those fixtures and adds readers for the report folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import (  # noqa: F401 - fixtures are found by name
    MODEL,
    PR_NUMBER,
    ActionHarness,
    git_harness,
    github_pr,
    harness,
    suite_text,
    workspace,
)
from tests.e2e.runner import ActionResult

__all__ = [
    "MODEL",
    "PR_NUMBER",
    "ActionHarness",
    "keyword_prompts",
    "report_json",
    "run_json",
    "suite_text",
]


def keyword_prompts(count: int, *, keyword: str = "canary", prefix: str = "p") -> str:
    """``count`` prompts ``p0 … p<count-1>`` whose text is ``Question p<i>?`` and whose one probe
    requires ``keyword``: script the server with ``match=f"Question p{i}?"``."""
    return "".join(
        f"  - id: {prefix}{i}\n"
        f"    text: Question {prefix}{i}?\n"
        f"    probes:\n"
        f"      - type: keyword_presence\n"
        f"        required_keywords: [{keyword}]\n"
        for i in range(count)
    )


def report_json(result: ActionResult, name: str) -> list[dict[str, Any]]:
    """Every ``<suite>/<model>/<name>`` JSON document in the report folder."""
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(result.report_dir.glob(f"*/*/{name}"))
    ]


def run_json(result: ActionResult) -> dict[str, Any]:
    """The one ``run.json`` of a single-suite, single-model step."""
    runs = report_json(result, "run.json")
    assert len(runs) == 1, f"expected one run.json in {result.report_dir}, found {len(runs)}"
    return runs[0]


def responses_by_prompt(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["prompt_id"]: r for r in run["llm_responses"]}


def read_report_files(result: ActionResult) -> dict[Path, str]:
    """Every file of the report folder as text (binary files decoded with replacement)."""
    return {
        path: path.read_bytes().decode("utf-8", errors="replace")
        for path in sorted(result.report_dir.rglob("*"))
        if path.is_file()
    }
