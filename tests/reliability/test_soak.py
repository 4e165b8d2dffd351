"""Soak: 30 consecutive runs of ``entrypoint.py`` on one data branch, with seeded random faults.

Pushes, pull requests and schedules follow each other in one real git checkout (origin a bare
repository), with LLM faults (429, 500, a timeout, a prompt that keeps failing) and GitHub faults
(5xx, a secondary rate limit, 403 on comments) drawn from a seeded generator. After every run,
and at the end, the invariants a user relies on over months are checked:

- one history line per promotion, and a promotion exactly when the run deserved one;
- one sticky comment on the pull request, holding the latest run's comment (unless comments were
  refused, when the comment file has it and the old comment is untouched);
- every check run completed, one per run (a retried POST created no second one);
- the data branch's tree valid (``git fsck``) and every snapshot and history file loadable;
- every report folder complete: each prompt's response and score in run.json.

The table of runs is printed whatever the outcome (``-s`` is not needed). ``make test`` leaves
this test out (marker ``soak``); ``make soak`` runs it.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Any

import pytest

from promptcanary.storage.base import snapshot_from_json
from promptcanary_action.baselines.history import parse_history
from tests.e2e.conftest import PR_NUMBER, ActionHarness, pr_event, push_event
from tests.e2e.runner import ActionResult
from tests.fakes.git_fixtures import GitWorkspace, run_git
from tests.reliability.conftest import keyword_prompts, suite_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.soak, pytest.mark.timeout(900)]

RUNS = 30
SEED = 20
PROMPTS = 3
DATA_BRANCH = "promptcanary-baselines"
ANSWER = "canary ok"
INPUTS = {
    "baseline": "branch",
    "max-retries": "1",
    "max-error-rate": "1",  # errored runs still report (exit 0); they must not promote
    "timeout": "4",  # the cost of the timeout fault; a slow answer only errors, never breaks
}

#: name → fields of the fake LLM's rule for one prompt (once: the retry gets the answer).
LLM_FAULTS: dict[str, dict[str, Any]] = {
    "-": {},
    "429 once": {"status": 429, "fail_times": 1, "retry_after": 0, "content": ANSWER},
    "500 once": {"status": 500, "fail_times": 1, "content": ANSWER},
    "timeout once": {"sequence": [{"hang": True}, ANSWER]},
    "500 always": {"status": 500},
}
LLM_WEIGHTS = (8, 3, 3, 1, 2)

#: name → arguments of FakeGitHubServer.fail (None: no fault).
COMMENTS = r"/issues/(\d+/)?comments"
GITHUB_FAULTS: dict[str, tuple[tuple[Any, ...], dict[str, Any]] | None] = {
    "-": None,
    "502 on check-run create": (("POST", r"/check-runs$", 502), {"times": 1}),
    "429 on check-run update": (
        ("PATCH", r"/check-runs/\d+$", 429),
        {"times": 1, "retry_after": 1},
    ),
    "500 on comments": (("*", COMMENTS, 500), {"times": 1}),
    "403 on comments": (
        ("*", COMMENTS, 403),
        {"message": "Resource not accessible by integration"},
    ),
}
GITHUB_WEIGHTS = (8, 2, 2, 2, 2)


@dataclass
class Run:
    number: int
    event: str
    llm_fault: str
    github_fault: str
    result: ActionResult
    seconds: float

    @property
    def promoted(self) -> bool:
        return self.result.outputs.get("baseline-status") in ("created", "updated")

    @property
    def should_promote(self) -> bool:
        return self.event in ("push", "schedule") and self.result.outputs.get("errors") == "0"


def _arrange(harness: ActionHarness, rng: random.Random) -> tuple[str, str]:
    """Script this run's faults; returns their names."""
    harness.llm.reset(script=True)
    harness.llm.default(content=ANSWER)
    harness.github.clear_faults()
    llm_fault = rng.choices(list(LLM_FAULTS), LLM_WEIGHTS)[0]
    if LLM_FAULTS[llm_fault]:
        harness.llm.script(f"Question p{rng.randrange(PROMPTS)}?", **LLM_FAULTS[llm_fault])
    github_fault = rng.choices(list(GITHUB_FAULTS), GITHUB_WEIGHTS)[0]
    fault = GITHUB_FAULTS[github_fault]
    if fault is not None:
        args, kwargs = fault
        harness.github.fail(*args, **kwargs)
    return llm_fault, github_fault


def _run(harness: ActionHarness, number: int, event: str) -> ActionResult:
    inputs = {**INPUTS, "report-dir": f"reports/run-{number:02d}"}
    # Every run is its own workflow run, as on GitHub (a retried create looks for what this run
    # made, by an id that includes the run's id).
    env = {"GITHUB_RUN_ID": str(1_658_821_493 + number)}
    if event == "push":
        return harness.run("push", push_event(), inputs, env=env)
    if event == "schedule":
        return harness.run("schedule", {"schedule": "17 5 * * *"}, inputs, env=env)
    return harness.run("pull_request", pr_event(), inputs, env=env)


def _check_comment(harness: ActionHarness, run: Run, before: list[str]) -> None:
    """One sticky comment: this run's, or (comments refused) the previous one untouched."""
    bodies = [c.body for c in harness.github.comments(PR_NUMBER)]
    assert len(bodies) <= 1, f"run {run.number}: duplicate comments"
    comment_file = run.result.output_path("comment-file").read_text(encoding="utf-8")
    if run.github_fault == "403 on comments":
        assert bodies == before, f"run {run.number}: a refused comment changed the PR"
    else:
        assert len(bodies) == 1, f"run {run.number}: comment lost"
        assert comment_file.strip() in bodies[0], f"run {run.number}: stale comment"


def _check_report_folder(run: Run) -> None:
    folder = run.result.report_dir
    assert not list(folder.rglob("*.tmp")), f"run {run.number}: half-written files"
    [run_file] = list(folder.glob("*/*/run.json"))
    data = json.loads(run_file.read_text(encoding="utf-8"))
    # samples: auto: a push that builds the baseline asks a prompt several times, so each
    # prompt has at least one answer and each answer its score (one probe a prompt).
    answers = data["llm_responses"]
    assert {r["prompt_id"] for r in answers} == {f"p{i}" for i in range(PROMPTS)}, (
        f"run {run.number}: a prompt's response is missing from run.json"
    )
    scored = sorted((r["prompt_id"], r["sample"]) for r in data["probe_results"])
    assert scored == sorted((r["prompt_id"], r["sample"]) for r in answers), (
        f"run {run.number}: a score is missing"
    )
    outcome = json.loads((folder / "outcome.json").read_text(encoding="utf-8"))
    assert f"{outcome['pairs'][0]['overall_score']:.4f}" == run.result.outputs["overall-score"]
    json.loads((folder / "step.json").read_text(encoding="utf-8"))
    assert (folder / "summary.md").read_text(encoding="utf-8").strip()


def _check_data_branch(git: GitWorkspace, promotions: int) -> None:
    def show(*args: str) -> str:
        return run_git(*args, cwd=git.origin_path, env=git.env).stdout

    show("fsck", "--strict", "--no-dangling")
    names = show("ls-tree", "-r", "--name-only", DATA_BRANCH).split()
    snapshots = [n for n in names if n.endswith("/baseline.json")]
    histories = [n for n in names if n.endswith("/history.jsonl")]
    assert len(snapshots) == len(histories) == 1, names
    snapshot = snapshot_from_json(show("show", f"{DATA_BRANCH}:{snapshots[0]}"), snapshots[0])
    # The newest promoted run: every prompt answered (as many times as samples: auto asked).
    asked = {r.prompt_id for r in snapshot.run_result.llm_responses}
    assert asked == {f"p{i}" for i in range(PROMPTS)}, asked
    history = parse_history(show("show", f"{DATA_BRANCH}:{histories[0]}"))
    assert len(history) == promotions, "history lines differ from the promotions"


def _table(runs: list[Run]) -> str:
    header = (
        f"{'#':>2}  {'event':<12} {'LLM fault':<13} {'GitHub fault':<24} {'exit':>4} "
        f"{'errors':>6} {'baseline':<8} {'s':>5}"
    )
    lines = [header, "-" * len(header)]
    for r in runs:
        lines.append(
            f"{r.number:>2}  {r.event:<12} {r.llm_fault:<13} {r.github_fault:<24} "
            f"{r.result.returncode:>4} {r.result.outputs.get('errors', '?'):>6} "
            f"{r.result.outputs.get('baseline-status', '?'):<8} {r.seconds:>5.1f}"
        )
    promotions = sum(r.promoted for r in runs)
    lines.append(
        f"{len(runs)} runs, {promotions} promotions, "
        f"{sum(r.seconds for r in runs):.0f} s in the action"
    )
    return "\n".join(lines)


def test_thirty_runs_with_faults_keep_every_invariant(
    git_harness: ActionHarness, git_workspace: GitWorkspace, capsys: pytest.CaptureFixture[str]
) -> None:
    harness = git_harness
    harness.write("canary.yaml", suite_text("soak", harness.llm.url, keyword_prompts(PROMPTS)))
    rng = random.Random(SEED)
    runs: list[Run] = []
    try:
        for number in range(1, RUNS + 1):
            # The first run is a push: the data branch exists from then on.
            event = "push" if number == 1 else rng.choice(["push", "pull_request", "schedule"])
            llm_fault, github_fault = _arrange(harness, rng)
            before = [c.body for c in harness.github.comments(PR_NUMBER)]
            started = time.monotonic()
            result = _run(harness, number, event)
            run = Run(number, event, llm_fault, github_fault, result, time.monotonic() - started)
            runs.append(run)
            assert result.returncode == 0, f"run {number}:\n{result.log}"
            assert run.promoted == run.should_promote, f"run {number}:\n{result.log}"
            if event == "pull_request":
                _check_comment(harness, run, before)
            _check_report_folder(run)
    finally:
        with capsys.disabled():
            print("\n" + _table(runs))

    promotions = sum(r.promoted for r in runs)
    assert promotions > 0 and any(r.event == "pull_request" for r in runs)
    checks = harness.github.check_runs
    assert len(checks) == RUNS, "a check run is missing or was created twice"
    assert all(c.status == "completed" for c in checks), [c.status for c in checks]
    _check_data_branch(git_workspace, promotions)
