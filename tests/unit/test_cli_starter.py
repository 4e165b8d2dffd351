"""The starter suite ``promptcanary init`` writes points the new user to README sections that
exist, by their name and by their anchor."""

from __future__ import annotations

import re
from pathlib import Path

from promptcanary.cli import STARTER_SUITE

README = Path(__file__).resolve().parents[2] / "README.md"


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_starter_suite_points_to_readme_sections_that_exist() -> None:
    headings = [m.group(1) for m in re.finditer(r"^#{2,3} (.+)$", README.read_text(), re.M)]
    anchors = re.findall(r"promptcanary-action#([\w-]+)", STARTER_SUITE)
    names = re.findall(r'section "([^"]+)"', STARTER_SUITE)
    assert anchors and names  # the starter does point somewhere
    assert set(anchors) <= {_github_anchor(h) for h in headings}
    assert set(names) <= set(headings)
