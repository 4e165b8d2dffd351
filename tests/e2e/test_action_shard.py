"""End to end on a matrix job: 4 legs (``shard: i/4``) in parallel processes, then ``mode: merge``.

Each leg writes its report into ``promptcanary-report/promptcanary-leg-<i>``, which is where
``actions/download-artifact`` (``pattern: promptcanary-leg-*``, no ``merge-multiple``) puts each
leg's artifact in the merge job. The merge job must publish what one job would: one sticky
comment, one check run with the annotations of every leg, outputs over every pair; the legs
publish nothing. A missing shard, a shard twice and legs of two commits are refused (exit 2).
"""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from promptcanary.core.run.shards import deal
from tests.e2e.conftest import PR_NUMBER, ActionHarness, pr_event, suite_text
from tests.e2e.runner import ActionResult

pytestmark = pytest.mark.e2e

LEGS = 4
REPORT = "promptcanary-report"
PROMPT_IDS = [f"ask-{k}" for k in range(12)]
DRIFTING = PROMPT_IDS[::2]  # six prompts: spread over the shards by the deal
# 4 legs import LiteLLM at once on a shared machine: the first requests may wait long.
INPUTS = {"baseline": "path", "concurrency": "4", "timeout": "60"}

_RECORD = re.compile(r"<!-- promptcanary-approval:v1:[A-Za-z0-9_=-]* -->")


# Latency is wall-clock time: the legs and the single job measure their own.
_LATENCY = re.compile(r"[\d,.\\]+ m?s(?: \([^)]*\))?")  # markdown escapes the "."


def _without_record(body: str) -> str:
    return _LATENCY.sub("<latency>", _RECORD.sub("<!-- record -->", body))


def write_suite(harness: ActionHarness) -> None:
    prompts = "".join(
        f"  - id: {pid}\n    text: Question {pid}\n"
        "    probes:\n      - type: keyword_presence\n        required_keywords: [fine]\n"
        for pid in PROMPT_IDS
    )
    harness.write("canary.yaml", suite_text("matrix", harness.llm.url, prompts))
    for pid in PROMPT_IDS:
        drifted = {"content": "Not sure."} if pid in DRIFTING else None
        harness.llm.script(f"Question {pid}", exact=True, content="All fine.", drifted=drifted)


def run_legs(harness: ActionHarness, **event: Any) -> list[ActionResult]:
    """The 4 legs at once, as the matrix runs them; each in its artifact's folder."""

    def leg(index: int) -> ActionResult:
        inputs = {
            **INPUTS,
            "shard": f"{index}/{LEGS}",
            "report-dir": f"{REPORT}/promptcanary-leg-{index}",
        }
        return harness.run_action_in(f"leg-{index}", "pull_request", pr_event(**event), inputs)

    with ThreadPoolExecutor(max_workers=LEGS) as pool:
        return list(pool.map(leg, range(1, LEGS + 1)))


def merge(harness: ActionHarness, name: str = "merge") -> ActionResult:
    return harness.run_action_in(name, "pull_request", pr_event(), {**INPUTS, "mode": "merge"})


@pytest.fixture
def matrix(harness: ActionHarness) -> ActionHarness:
    """A baseline from one push of the whole suite, then drift switched on."""
    write_suite(harness)
    created = harness.run_push({**INPUTS, "update-baseline": "always", "check-run": "false"})
    assert created.returncode == 0 and created.outputs["baseline-status"] == "created", created.log
    harness.llm.drift = True
    return harness


def test_four_legs_and_the_merge_publish_what_one_job_would(matrix: ActionHarness) -> None:
    legs = run_legs(matrix)
    for index, leg in enumerate(legs, start=1):
        # A leg's share drifts, but the gate is the merge job's; it publishes nothing.
        assert leg.returncode == 0, leg.log
        assert f"leg {index}/{LEGS} of a matrix job" in leg.log
        assert f"leg {index}/{LEGS} of a matrix job" in leg.summary
    assert matrix.github.comments(PR_NUMBER) == []
    assert matrix.github.check_runs == []
    owner = deal(PROMPT_IDS, LEGS)
    assert len({owner[p] for p in DRIFTING}) >= 3, "the drifting prompts span several legs"

    merged = merge(matrix)

    assert merged.returncode == 1, merged.log  # regressions: fail-on regression
    [comment] = matrix.github.comments(PR_NUMBER)
    [check] = matrix.github.check_runs
    assert (check.status, check.conclusion) == ("completed", "failure")
    flagged = sorted(p for p in DRIFTING if any(p in a["message"] for a in check.annotations))
    assert flagged == sorted(DRIFTING), check.annotations
    out = merged.outputs
    assert (out["regressions"], out["drift-detected"]) == (str(len(DRIFTING)), "true")
    assert out["baseline-status"] == "found"

    # One job on the same answers: the same comment body and figures.
    single = matrix.run_action_in(
        "single",
        "pull_request",
        pr_event(),
        {**INPUTS, "comment": "off", "check-run": "false", "report-dir": "single"},
    )
    assert single.returncode == 1, single.log
    # Equal but for the hidden approval record, which dates the drift shown by the run's end
    # (the merged run ends with its last leg, the single job on its own).
    single_body = (matrix.workspace / "single" / "comment.md").read_text(encoding="utf-8")
    assert _without_record(single_body) == _without_record(comment.body)
    assert _RECORD.search(comment.body) and _RECORD.search(single_body)
    assert {k: single.outputs[k] for k in ("regressions", "overall-score", "severity")} == {
        k: out[k] for k in ("regressions", "overall-score", "severity")
    }

    # Re-running the merge job updates the one comment.
    again = merge(matrix, "merge-again")
    assert again.returncode == 1, again.log
    [updated] = matrix.github.comments(PR_NUMBER)
    assert updated.id == comment.id


def test_a_missing_shard_a_shard_twice_and_two_commits_are_refused(matrix: ActionHarness) -> None:
    legs = run_legs(matrix)
    assert all(leg.returncode == 0 for leg in legs), [leg.log for leg in legs]
    report = matrix.workspace / REPORT

    shutil.move(report / "promptcanary-leg-3", matrix.tmp_path / "leg-3-aside")
    missing = merge(matrix, "merge-missing")
    assert missing.returncode == 2, missing.log
    assert "shard(s) 3/4 missing" in missing.log

    shutil.move(matrix.tmp_path / "leg-3-aside", report / "promptcanary-leg-3")
    shutil.copytree(report / "promptcanary-leg-2", report / "promptcanary-leg-2-rerun")
    twice = merge(matrix, "merge-twice")
    assert twice.returncode == 2, twice.log
    assert "2/4 in promptcanary-leg-2 and promptcanary-leg-2-rerun" in twice.log
    shutil.rmtree(report / "promptcanary-leg-2-rerun")

    other = "d4" * 20
    rerun = matrix.run_action_in(
        "leg-1-other-commit",
        "pull_request",
        pr_event(head_sha=other),
        {**INPUTS, "shard": f"1/{LEGS}", "report-dir": f"{REPORT}/promptcanary-leg-1"},
    )
    assert rerun.returncode == 0, rerun.log
    commits = merge(matrix, "merge-commits")
    assert commits.returncode == 2, commits.log
    assert "legs of different commits" in commits.log
    assert f"{other} in promptcanary-leg-1" in commits.log
    assert matrix.github.comments(PR_NUMBER) == []
    assert matrix.github.check_runs == [] or all(
        c.conclusion != "success" for c in matrix.github.check_runs
    )
