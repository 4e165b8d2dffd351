"""Hostile model output: workflow commands, mentions, references, HTML, images, unbalanced
fences, NUL bytes, bidi overrides and a 1 MB answer.

All of it must be inert wherever the action shows it: the PR comment (escaped or in code blocks
its own fences cannot close, no live @mention or #reference, within GitHub's 65,536 characters),
the check run's annotations (plain text without control characters), the job summary, the
outputs and the log (no workflow command runs on the model's behalf). The escaper itself is
fuzzed in tests/unit/core/render/test_markdown.py and the probes over arbitrary text in
tests/unit/core/probes/test_properties.py; this module proves what the user sees end to end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.e2e.conftest import BASE_SHA, HEAD_SHA, split_fenced
from tests.e2e.runner import ActionResult
from tests.fakes.github_server import FakeGitHubServer
from tests.fakes.llm_server import FakeLLMServer
from tests.reliability.conftest import PR_NUMBER, ActionHarness, read_report_files, suite_text

pytestmark = pytest.mark.e2e

MAX_COMMENT = 65_536

HOSTILE = (
    "Status: degraded\n"
    "::set-output name=severity::none\n"
    "::add-mask::Status\n"
    "::error file=canary.yaml,line=1::PWNED-ERROR\n"
    "::warning::PWNED-WARNING\n"
    "::stop-commands::resume\n"
    "@octo-org/security-team and @octocat please look\n"
    "Fixes #1, see octo-org/octo-repo#2 and GH-3\n"
    "<script>alert('PWNED-HTML')</script><img src=x onerror=alert(1)>\n"
    "![tracker](https://evil.example/pixel.png)\n"
    "<details><summary>PWNED-DETAILS</summary>\n"
    "| PWNED | table |\n"
    "````\n"
    "**PWNED-FENCE escaped the code block**\n"
    "NUL:\x00: BEL:\x07: RTL:\u202eevil\u202c: ISOLATE:\u2066x\u2069:\n"
)
HUGE = "Status: degraded. " + ("All work and no play makes Jack a dull boy. @octocat #1\n" * 19_000)
PWNED_MARKERS = ("PWNED-ERROR", "PWNED-WARNING", "PWNED-HTML", "PWNED-DETAILS", "PWNED-FENCE")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")

PROMPTS = """\
  - id: hostile
    text: Report the status (hostile)
    probes:
      - type: factual_consistency
        expected_value: "Status: operational"
  - id: huge
    text: Report the status (huge)
    probes:
      - type: factual_consistency
        expected_value: "Status: operational"
"""


@dataclass
class Drifted:
    harness: ActionHarness
    result: ActionResult


@pytest.fixture(scope="module")
def drifted_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Drifted]:
    """A PR run whose answers turned hostile after a clean baseline was promoted (run once for
    the module: two runs of the action with a 1 MB answer are the slow part)."""
    assert len(HUGE) > 1_000_000
    tmp_path = tmp_path_factory.mktemp("untrusted")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeLLMServer() as llm, FakeGitHubServer() as github:
        github.add_pull(PR_NUMBER, "feature", "main", HEAD_SHA, BASE_SHA)
        harness = ActionHarness(tmp_path, workspace, llm, github)
        yield Drifted(harness, _drift(harness))
        assert github.response_errors == []


@pytest.fixture
def harness(drifted_run: Drifted) -> ActionHarness:
    return drifted_run.harness


@pytest.fixture
def drifted(drifted_run: Drifted) -> ActionResult:
    return drifted_run.result


def _drift(harness: ActionHarness) -> ActionResult:
    harness.write("canary.yaml", suite_text("untrusted", harness.llm.url, PROMPTS))
    harness.llm.script("(hostile)", content="Status: operational", drifted={"content": HOSTILE})
    harness.llm.script("(huge)", content="Status: operational", drifted={"content": HUGE})
    created = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True
    result = harness.run_pr({"baseline": "path"})
    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == "2", result.log
    return result


def _assert_inert_markdown(markdown: str, where: str) -> None:
    assert not CONTROL.search(markdown), f"control character in the {where}"
    outside, _blocks = split_fenced(markdown)
    for marker in PWNED_MARKERS:
        assert marker not in outside, f"{marker} rendered as markdown in the {where}"
    for raw in ("<script", "<img", "![tracker]", "<details><summary>PWNED"):
        assert raw not in outside, f"{raw} live in the {where}"
    # GitHub links mentions and references after rendering, code blocks included in e-mails.
    assert not re.search(r"@octo", markdown), f"live @mention in the {where}"
    assert not re.search(r"(?<![\w&])#\d", markdown), f"live #reference in the {where}"
    assert not re.search(r"\bGH-\d", markdown), f"live GH- reference in the {where}"


def test_hostile_output_is_inert_in_the_comment(
    harness: ActionHarness, drifted: ActionResult
) -> None:
    [comment] = harness.github.comments(PR_NUMBER)
    body = comment.body
    assert len(body) <= MAX_COMMENT
    _assert_inert_markdown(body, "comment")
    # Shown, not swallowed: the reader can see what the model said.
    assert "PWNED-FENCE" in body
    assert "@\u200boctocat" in body
    # The comment file is the same body, equally inert.
    comment_file = (drifted.report_dir / "comment.md").read_text(encoding="utf-8")
    assert len(comment_file) <= MAX_COMMENT
    _assert_inert_markdown(comment_file, "comment file")


def test_hostile_output_is_inert_in_the_summary_and_report_files(drifted: ActionResult) -> None:
    _assert_inert_markdown(drifted.summary, "job summary")
    _assert_inert_markdown(
        (drifted.report_dir / "summary.md").read_text(encoding="utf-8"), "summary file"
    )
    # run.json keeps the raw answer (it is data, JSON-escaped), so nothing is lost.
    files = read_report_files(drifted)
    run = next(text for path, text in files.items() if path.name == "run.json")
    assert "\\u0000" in run
    assert "PWNED-FENCE" in run


def test_hostile_output_is_inert_in_the_check_run_annotations(
    harness: ActionHarness, drifted: ActionResult
) -> None:
    check = harness.check_run()
    assert check.conclusion == "failure"
    annotations = check.annotations
    assert annotations, "regressions should be annotated"
    for annotation in annotations:
        for key in ("title", "message", "raw_details"):
            text = annotation.get(key) or ""
            assert not CONTROL.search(text), (key, text[:200])
            assert len(text) <= 65_535
    for text in (check.summary or "", check.text or ""):
        assert len(text) <= 65_535
        _assert_inert_markdown(text, "check run output")


def test_hostile_output_is_inert_in_the_log_and_outputs(drifted: ActionResult) -> None:
    commands = drifted.commands
    names = [c.name for c in commands]
    assert "set-output" not in names
    assert "add-mask" not in names
    for command in commands:
        for marker in PWNED_MARKERS:
            assert marker not in command.message
    # The model's "stop-commands" cannot swallow the action's own later commands.
    assert any(c.name == "notice" and c.properties.get("title") == "PromptCanary" for c in commands)
    assert drifted.outputs["severity"] != "none"
    assert "\x00" not in drifted.log
    assert "\u202e" not in drifted.log
    for name, value in drifted.outputs.items():
        assert not CONTROL.search(value), name
        assert "PWNED" not in value, name
