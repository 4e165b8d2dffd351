"""Baseline branch under load: eight jobs promote to the data branch at the same moment.

Each job is a separate ``entrypoint.py`` in its own clone of the same origin (as matrix jobs on
separate runners are), promoting a different suite. Pushes race; a rejected push must be retried
on the new tip, so all eight baselines land and none overwrites another.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.e2e.runner import ActionResult, run_action
from tests.fakes.git_fixtures import GitWorkspace, run_git
from tests.fakes.github_server import FakeGitHubServer
from tests.suite_texts import PING_RECORDING, ping_suite

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

JOBS = 8
DATA_BRANCH = "promptcanary-baselines"


def _clone(git_workspace: GitWorkspace, tmp_path: Path, n: int) -> Path:
    clone = tmp_path / f"job-{n}"
    run_git(
        "clone",
        "--quiet",
        str(git_workspace.origin_path),
        str(clone),
        cwd=tmp_path,
        env=git_workspace.env,
    )
    (clone / "canary.yaml").write_text(ping_suite(f"concurrent-{n}"), encoding="utf-8")
    (clone / "recording.jsonl").write_text(json.dumps(PING_RECORDING) + "\n", encoding="utf-8")
    return clone


def test_eight_concurrent_promotions_all_land(
    tmp_path: Path, git_workspace: GitWorkspace, github_server: FakeGitHubServer
) -> None:
    clones = [_clone(git_workspace, tmp_path, n) for n in range(JOBS)]
    event = {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": git_workspace.head_sha,
        "repository": {"full_name": "octo-org/octo-repo", "default_branch": "main"},
    }

    def job(n: int) -> ActionResult:
        return run_action(
            tmp_path / f"runner-{n}",
            inputs={"baseline": "branch", "update-baseline": "auto"},
            event_name="push",
            event=event,
            workspace=clones[n],
            github_api_url=github_server.url,
            timeout=110,
        )

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        results = list(pool.map(job, range(JOBS)))

    for n, result in enumerate(results):
        assert result.returncode == 0, f"job {n}:\n{result.log}"
        assert result.outputs["baseline-status"] == "created", f"job {n}:\n{result.log}"

    origin = git_workspace.origin_path
    files = run_git(
        "ls-tree", "-r", "--name-only", DATA_BRANCH, cwd=origin, env=git_workspace.env
    ).stdout.split()
    baselines = sorted(f for f in files if f.endswith("/baseline.json"))
    assert len(baselines) == JOBS, files
    for n in range(JOBS):
        [path] = [f for f in baselines if f.startswith(f"concurrent-{n}/")]
        snapshot = json.loads(
            run_git("show", f"{DATA_BRANCH}:{path}", cwd=origin, env=git_workspace.env).stdout
        )
        assert snapshot["suite_name"] == f"concurrent-{n}"
    # Every job's promotion is its own commit on one linear history.
    log = run_git(
        "log", "--format=%H %P", DATA_BRANCH, cwd=origin, env=git_workspace.env
    ).stdout.splitlines()
    assert len(log) >= JOBS
    assert all(len(line.split()) <= 2 for line in log), "merge commits on the data branch"
    # The user's branch was not touched.
    assert run_git("rev-parse", "main", cwd=origin, env=git_workspace.env).stdout.strip() == (
        git_workspace.head_sha
    )
