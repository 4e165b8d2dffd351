"""Headless Chromium through Debian's chromedriver (selenium). Missing binaries fail the layer:
``scripts/install_browser.sh`` installs them (``make test-browser`` runs it first)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
