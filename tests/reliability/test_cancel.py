"""Cancellation: SIGINT/SIGTERM mid-run, sent to the real entry point as the runner sends it.

The step must stop its requests, write what it has (run.json marked incomplete), complete its
check run as cancelled, promote nothing, and exit 4 (``ExitCode.CANCELLED``). A hang is caught
by the subprocess timeout, never by a timed assertion.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from promptcanary.core.run.session import STOPPED_ERROR
from tests.e2e.conftest import FAST_INPUTS, pr_event, push_event
from tests.e2e.runner import ActionResult, signal_action
from tests.reliability.conftest import ActionHarness, keyword_prompts, run_json, suite_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# The slow prompts never answer (the server holds them until the client goes): a step that
# does not stop is caught by the subprocess timeout, which leaves a loaded machine minutes.
STEP_TIMEOUT = 150.0


def _cancel_mid_run(
    harness: ActionHarness, signum: int, event_name: str, inputs: dict[str, str]
) -> ActionResult:
    harness.write("canary.yaml", suite_text("Cancel", harness.llm.url, keyword_prompts(4)))
    harness.llm.script("Question p0?", content="a canary")
    for i in (1, 2, 3):
        harness.llm.script(f"Question p{i}?", hang=True)
    event = pr_event() if event_name == "pull_request" else push_event()
    return signal_action(
        harness.tmp_path / f"cancel-{signum}",
        when=lambda: harness.llm.request_count >= 4,  # p0 answered, slow prompts in flight
        signum=signum,
        inputs={**FAST_INPUTS, "timeout": "120", **inputs},
        event_name=event_name,
        event=event,
        workspace=harness.workspace,
        env=harness.env,
        github_api_url=harness.github.url,
        timeout=STEP_TIMEOUT,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_cancelled_pull_request_run_reports_and_completes_its_check_run(
    harness: ActionHarness, signum: int
) -> None:
    result = _cancel_mid_run(harness, signum, "pull_request", {})

    assert result.returncode == 4, result.log
    run = run_json(result)
    assert signal.Signals(signum).name in run["incomplete"]
    by_prompt = {r["prompt_id"]: r for r in run["llm_responses"]}
    assert {by_prompt[f"p{i}"]["error"] for i in (1, 2, 3)} == {STOPPED_ERROR}
    check = harness.check_run()
    assert (check.status, check.conclusion) == ("completed", "cancelled")
    assert "Stopped early" in (check.title or "")
    assert "Stopped early" in result.summary
    assert any("cancelled" in c.message for c in result.annotations("error"))


def test_a_cancelled_push_promotes_nothing(harness: ActionHarness) -> None:
    store = harness.workspace / "baselines"
    result = _cancel_mid_run(
        harness, signal.SIGTERM, "push", {"baseline": "path", "baseline-path": "baselines"}
    )

    assert result.returncode == 4, result.log
    assert run_json(result)["incomplete"]
    assert not store.exists() or not list(store.rglob("*.json"))
    assert result.outputs.get("baseline-status") == "missing"


def test_the_same_push_uncancelled_promotes(harness: ActionHarness, tmp_path: Path) -> None:
    # The control for the test above: without the signal this push creates the baseline.
    harness.write("canary.yaml", suite_text("Cancel", harness.llm.url, keyword_prompts(4)))
    harness.llm.default(content="a canary")
    result = harness.run_push({"baseline": "path", "baseline-path": "baselines"})
    assert result.returncode == 0, result.log
    assert list((harness.workspace / "baselines").rglob("*.json"))
    assert result.outputs.get("baseline-status") == "created"


def test_a_cancelled_run_with_the_most_samples_exits_cancelled_with_its_report(
    harness: ActionHarness,
) -> None:
    # samples at the cap: 2 × 1000 jobs. The step must stop as promptly as a small run (the
    # subprocess timeout catches a hang) and log no asyncio traceback.
    harness.write("canary.yaml", suite_text("Cancel", harness.llm.url, keyword_prompts(2)))
    harness.llm.default(content="a canary", latency=0.05)
    result = signal_action(
        harness.tmp_path / "cancel-large",
        when=lambda: harness.llm.request_count >= 40,
        signum=signal.SIGTERM,
        inputs={**FAST_INPUTS, "samples": "1000"},
        event_name="pull_request",
        event=pr_event(),
        workspace=harness.workspace,
        env=harness.env,
        github_api_url=harness.github.url,
        timeout=STEP_TIMEOUT,
    )

    assert result.returncode == 4, result.log
    run = run_json(result)
    assert "SIGTERM" in run["incomplete"]
    assert len(run["llm_responses"]) == 2000
    assert STOPPED_ERROR in {r["error"] for r in run["llm_responses"]}
    assert "Traceback" not in result.stderr
    assert "never retrieved" not in result.stderr
