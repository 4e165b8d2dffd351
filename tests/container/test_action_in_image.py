"""The built image, run the way the GitHub runner runs a Docker action: workspace and command
files mounted and owned by another uid, inputs as ``INPUT_*``, network to the fake servers.

This is what catches a file missing from the image, a permission problem on the mounted
workspace, or git refusing a checkout owned by another user.
"""

from __future__ import annotations

import json
import subprocess

from bench.startup import RECORDING, SUITE
from tests.container.runner import podman_run
from tests.e2e.conftest import PR_NUMBER, ActionHarness
from tests.e2e.test_action_pr import write_support_suite
from tests.fakes.git_fixtures import GitWorkspace

# The replay workspace of bench/startup.py: one prompt, one recorded answer.
REPLAY_SUITE = SUITE.format(model="replay:recording.jsonl")


def test_a_push_creates_the_branch_baseline_and_a_pr_with_drift_fails(
    container: ActionHarness, git_workspace: GitWorkspace
) -> None:
    suite = write_support_suite(container)
    head = git_workspace.commit_file("canary.yaml", suite, "Add canaries")
    git_workspace.run("push", "--quiet", "origin", "main")

    pushed = container.run_push({"baseline": "branch"}, after=head)

    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["baseline-status"] == "created", pushed.log
    stored = git_workspace.run_in_origin(
        "show", "promptcanary-baselines:support/openai-fake/baseline.json"
    )
    assert json.loads(stored)["suite_name"] == "support"
    assert git_workspace.rev_parse() == head
    assert git_workspace.run("status", "--porcelain", "--untracked-files=no") == ""

    container.llm.drift = True
    result = container.run_pr({"baseline": "branch"})

    assert result.returncode == 1, result.log
    assert result.outputs["baseline-status"] == "found"
    assert result.outputs["regressions"] == "2"
    assert result.outputs["drift-detected"] == "true"
    [comment] = container.github.comments(PR_NUMBER)
    assert "#### Regressions: support on `openai/fake`" in comment.body
    assert container.check_run().conclusion == "failure"
    assert "regression" in result.summary
    # Files the action wrote in the mounted workspace are where a later step looks for them.
    assert (result.report_dir / "summary.md").is_file(), sorted(result.report_dir.iterdir())


def test_a_replay_run_never_imports_litellm(container: ActionHarness) -> None:
    container.write("canary.yaml", REPLAY_SUITE)
    container.write("recording.jsonl", json.dumps(RECORDING) + "\n")

    # The interpreter lists every import on stderr (the variable is a step `env:` entry).
    result = container.run(
        "workflow_dispatch",
        {"repository": {"full_name": "octo-org/octo-repo", "default_branch": "main"}},
        {"baseline": "none", "comment": "off", "check-run": "false"},
        env={"PYTHONPROFILEIMPORTTIME": "1"},
    )

    assert result.returncode == 0, result.log
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "promptcanary.providers.replay" in imported
    assert not {m for m in imported if m.split(".")[0] in {"litellm", "openai", "aiohttp"}}


def test_the_image_has_compiled_code_no_pip_and_no_unused_extension(image: str) -> None:
    # LiteLLM's Rust extension is left out of the image (the push/PR test above runs chat
    # completions without it): LiteLLM must see it as not available rather than fail.
    probe = (
        "import importlib.util, sys, pathlib\n"
        "print(importlib.util.find_spec('pip') is None)\n"
        "import promptcanary_action.main, litellm\n"
        "print(all(pathlib.Path(importlib.util.cache_from_source(m.__file__)).is_file()"
        " for m in (promptcanary_action.main, litellm)))\n"
        "print(sys.prefix)\n"
        "from litellm.rust_bridge import native_bridge_available\n"
        "print(native_bridge_available())\n"
    )
    proc = subprocess.run(
        [*podman_run(), "--entrypoint", "python", image, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "/opt/venv", "False"]
