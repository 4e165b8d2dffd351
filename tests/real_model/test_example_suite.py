"""The example suite (examples/canary.yaml) through entrypoint.py against the real llama.cpp server.

A push on the default branch stores the baseline, then a pull request compares with it: every
report file and step output is written, the comment is posted, every probe of every prompt is
scored, and whatever errored is reported as an error, never as a regression. The suite runs at
its own temperature (0: greedy decoding); ``max-tokens`` is lowered from the suite's 512 so that
14 answers of a model that rarely stops early fit the layer's time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcanary.core.suite import CanarySuite
from scripts.local_model import LocalServer
from tests.e2e.conftest import PR_NUMBER
from tests.e2e.runner import ActionResult
from tests.fakes.github_server import FakeGitHubServer
from tests.real_model.conftest import MODEL, make_harness, read_pair

pytestmark = pytest.mark.real_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "canary.yaml"
#: ``baseline-samples`` bounds the push that builds the baseline (greedy answers settle after 10
#: identical ones by default): this test is about every report and output, not the statistics.
INPUTS = {"max-tokens": "96", "fail-on": "never", "baseline-samples": "4"}
REPORT_FILES = ("comment.md", "summary.md", "outcome.json", "step.json")
PAIR_FILES = ("run.json", "drift.json", "snapshot.json")


def expected_results(suite: CanarySuite) -> set[tuple[str, str]]:
    """Every (prompt, probe) pair the suite binds: each must have a result in run.json."""
    return {(p.id, b.key) for p in suite.prompts for b in suite.bindings_for(p)}


def check_every_probe_scored(result: ActionResult, suite: CanarySuite) -> list[dict]:
    run = read_pair(result, "run.json")
    results = run["probe_results"]
    assert {(r["prompt_id"], r["probe_key"]) for r in results} == expected_results(suite)
    errored_prompts = {r["prompt_id"] for r in run["llm_responses"] if r["error"] is not None}
    for r in results:
        # An errored answer is marked errored, never scored as a failure (and vice versa).
        assert r["errored"] == (r["prompt_id"] in errored_prompts), r
    assert result.outputs["errors"] == str(len(errored_prompts)), result.log
    return results


@pytest.mark.timeout(1200)
def test_example_suite_end_to_end(
    tmp_path: Path, github_server: FakeGitHubServer, function_calling_server: LocalServer
) -> None:
    github_server.add_pull(PR_NUMBER, "feature", "main", "a1" * 20, "b2" * 20)
    harness = make_harness(tmp_path, github_server)
    harness.write_suite(EXAMPLE.read_text(encoding="utf-8"))
    suite = CanarySuite.from_yaml(EXAMPLE)

    created = harness.run_push(
        function_calling_server, {**INPUTS, "update-baseline": "always", "comment": "off"}
    )
    assert created.returncode == 0, created.log
    assert created.outputs["baseline-status"] == "created", created.log
    check_every_probe_scored(created, suite)

    pr = harness.run_pr(function_calling_server, INPUTS)
    assert pr.returncode == 0, pr.log
    print(f"\nexample suite on {MODEL}: {pr.outputs['summary']}")

    # Every output and report file is written.
    for name in ("overall-score", "pass-rate", "regressions", "errors", "severity", "summary"):
        assert pr.outputs.get(name, "") != "", f"output {name!r} is empty:\n{pr.log}"
    assert 0.0 <= float(pr.outputs["overall-score"]) <= 1.0
    assert pr.outputs["baseline-status"] == "found"
    report_dir = pr.output_path("report-dir")
    for name in REPORT_FILES:
        assert (report_dir / name).is_file(), name
    for name in PAIR_FILES:
        assert len(list(report_dir.glob(f"*/*/{name}"))) == 1, name

    # The sticky comment is posted, exactly as written to comment.md.
    [comment] = github_server.comments(PR_NUMBER)
    assert comment.body == pr.output_path("comment-file").read_text(encoding="utf-8")
    assert f"`{MODEL}`" in comment.body

    # Every probe scored; errors are errors, not regressions.
    check_every_probe_scored(pr, suite)
    drift = read_pair(pr, "drift.json")
    errored = {(e["prompt_id"], e["probe_key"]) for e in drift["errored"]}
    regressed = {(c["prompt_id"], c["probe_key"]) for c in drift["comparisons"] if c["regression"]}
    assert not errored & regressed
    assert pr.outputs["regressions"] == str(len(regressed))
    compared = {(c["prompt_id"], c["probe_key"]) for c in drift["comparisons"]}
    assert compared | errored == expected_results(suite)
