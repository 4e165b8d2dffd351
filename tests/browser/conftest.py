"""Headless Chromium through Debian's chromedriver (selenium). Missing binaries fail the layer:
``scripts/install_browser.sh`` installs them (``make test-browser`` runs it first)."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.spec import ModelSpec
from promptcanary_action.activity import Activity, decide
from promptcanary_action.baselines.path import PathBackend
from promptcanary_action.context import EventContext
from promptcanary_action.outcome import PairOutcome, build_outcome
from promptcanary_action.pipeline import LoadedSuite, PairJudging, run_pair
from promptcanary_action.report_dir import write_reports
from promptcanary_action.settings import Settings
from tests.fakes.provider_fake import Answers, FakeProviderFactory

ROOT = Path(__file__).resolve().parents[2]
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} not found: run scripts/install_browser.sh (as root) first")
    return found


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium")
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=360,800"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(_binary("chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's report folder (scripts/demo.py: a baseline, then a drifted pull request)."""
    scratch = tmp_path_factory.mktemp("demo")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py"), str(scratch)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return scratch / "promptcanary-report" / "report.html"


TWO_MODELS_SUITE = """
name: two-models
probes:
  - type: keyword_presence
    required_keywords: [ok]
prompts:
  - {id: greet, text: say ok, tags: [smoke]}
  - {id: sum, text: add ok, tags: [math]}
  - {id: json, text: give json ok, tags: [json, math]}
"""
GOOD: Answers = {"greet": "ok", "sum": "ok 4", "json": '{"ok": 1}'}
DRIFTED: Answers = {"greet": "hello", "sum": "ok 4", "json": "{}"}


def _step(
    event: EventContext, models: dict[str, Answers], backend: PathBackend
) -> list[PairOutcome]:
    settings = dataclasses.replace(Settings(), samples=1, max_retries=0)
    activity = decide(event, settings)
    assert isinstance(activity, Activity)
    suite = suite_from_text(TWO_MODELS_SUITE, source="canary.yaml")
    loaded = LoadedSuite(suite, ROOT / "canary.yaml", "canary.yaml")
    judging = PairJudging(settings, activity, "abc1234", backend, lambda: datetime.now(UTC))
    return [
        asyncio.run(
            run_pair(
                loaded,
                ModelSpec(model),
                judging,
                ref=activity.baseline_ref,
                provider_factory=FakeProviderFactory(answers),
            )
        )
        for model, answers in models.items()
    ]


@pytest.fixture(scope="session")
def two_model_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The action's report folder of a pull request run on two models (one drifted), after a
    push made both baselines: written by the action's pipeline and report writer."""
    scratch = tmp_path_factory.mktemp("two-models")
    backend = PathBackend(scratch / "baselines")
    push = EventContext(event_name="push", sha="", head_sha="", ref_name="main",
                        default_branch="main")  # fmt: skip
    pull = EventContext(event_name="pull_request", sha="", head_sha="", pr_number=1,
                        base_ref="main", default_branch="main")  # fmt: skip
    _step(push, {"fake/a": GOOD, "fake/b": GOOD}, backend)
    pairs = _step(pull, {"fake/a": GOOD, "fake/b": DRIFTED}, backend)
    outcome = build_outcome(pairs, Settings(), warnings=[], event_name="pull_request")
    write_reports(outcome, scratch / "report", "comment", "summary")
    return scratch / "report" / "report.html"
