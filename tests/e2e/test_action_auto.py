"""End to end with the default samples: auto against a pooled baseline.

The fake LLM server answers one prompt at random (seeded): "yes" 95% of the time, in a few
wordings, "no" otherwise; two other prompts always get the same answer. Eight pushes on the default
branch build the pool. A pull request with the same behaviour reports no regression and costs far
fewer requests than max-samples answers per prompt; the two fixed prompts cost one request each.
A pull request where "yes" falls to 50% reports the regression with its interval, e-value and
adjusted level, and how many answers it took.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcanary.core.sampling.power import answers_to_settle
from promptcanary.core.sampling.sequential import DETERMINISTIC_EVIDENCE, Counts, Policy
from tests.e2e.conftest import CONFIRM_PROMPTS, ActionHarness, suite_text

pytestmark = pytest.mark.e2e

PROMPTS = (
    CONFIRM_PROMPTS
    + """\
  - id: greet
    text: Say hello to the customer.
    probes:
      - type: response_length
        min_chars: 2
  - id: thanks
    text: Thank the customer.
    probes:
      - type: response_length
        min_chars: 2
"""
)
# samples: auto is the default. Generous timeout: the first LiteLLM calls of a process are slow
# on a loaded machine, and an errored answer is not what this test is about.
INPUTS = {"baseline": "path", "concurrency": "4", "timeout": "60", "max-retries": "2"}
YES = ("yes, confirmed", "Yes, it is confirmed.", "yes - the order is confirmed")


def _script(harness: ActionHarness, seed: int, yes: float) -> None:
    harness.llm.reset(script=True)
    options = [(yes / len(YES), text) for text in YES] + [(1 - yes, "no, not yet")]
    harness.llm.script("order confirmed", choices_random=(seed, options))
    harness.llm.script("Say hello", content="Hello!")
    harness.llm.script("Thank the customer", content="Thank you!")


def _asked(harness: ActionHarness, text: str) -> int:
    return len(harness.llm.requests_matching(text))


def _drift(result_dir: Path) -> dict:  # type: ignore[type-arg]
    [drift_file] = Path(result_dir).glob("*/*/drift.json")
    return json.loads(drift_file.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_auto_spends_little_when_nothing_changed_and_catches_a_drop(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("orders", harness.llm.url, PROMPTS))
    for night in range(8):
        _script(harness, seed=100 + night, yes=0.95)
        pushed = harness.run_push(INPUTS)
        assert pushed.returncode == 0, pushed.log
        assert pushed.outputs["baseline-status"] in ("created", "updated")

    _script(harness, seed=7, yes=0.95)
    same = harness.run_pr(INPUTS)
    assert same.returncode == 0, same.log
    assert same.outputs["regressions"] == "0"
    assert harness.llm.request_count < 3 * 60  # fixed samples: max-samples would send 240
    # A prompt that always answers one text is tested like any that always passes: "same" once
    # its passes rule out a drop of the margin from its pool.
    drift = _drift(same.output_path("report-dir"))
    assert {row["verdict"] for row in drift["comparisons"]} <= {"same", "inconclusive"}
    fixed = {row["prompt_id"]: row for row in drift["comparisons"]}
    for prompt, text in (("greet", "Say hello"), ("thanks", "Thank the customer")):
        row = fixed[prompt]
        pool = Counts(row["baseline_samples"], row["baseline_samples"])
        assert row["verdict"] == "same" and row["baseline_pass_rate"] == 1.0
        assert _asked(harness, text) == answers_to_settle(pool, Policy()) > 1
    assert drift["baseline_pool_runs"] == 8
    assert "fixed `samples: 80` would have sent 240 requests" in same.summary

    _script(harness, seed=11, yes=0.5)
    drifted = harness.run_pr(INPUTS)
    assert drifted.returncode == 1, drifted.log
    assert drifted.outputs["regressions"] == "1"
    [row] = _drift(drifted.output_path("report-dir"))["regressions"]
    assert row["prompt_id"] == "confirm" and row["verdict"] == "regressed"
    took = row["current_samples"]
    assert took == _asked(harness, "order confirmed")
    comment = harness.github.comments(7)[-1].body
    assert "e-value" in comment and "adj. p" in comment and "CI of change" in comment
    assert f" → {took} |" in comment  # the answers it took (baseline pool → this run)


def test_the_first_pull_request_after_one_push_catches_a_drop(harness: ActionHarness) -> None:
    # Day one: one push builds the baseline (and says so), and the very first pull request,
    # where "yes" falls from 95% to 50%, reports the regression.
    harness.write("canary.yaml", suite_text("orders", harness.llm.url, PROMPTS))
    _script(harness, seed=300, yes=0.95)
    pushed = harness.run_push(INPUTS)
    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["baseline-status"] == "created"
    built = _asked(harness, "order confirmed")
    assert built > DETERMINISTIC_EVIDENCE
    # One text every time is no shortcut: the pool must show a model that turns random.
    assert _asked(harness, "Say hello") > DETERMINISTIC_EVIDENCE
    assert "This run built the baseline with" in pushed.summary

    _script(harness, seed=301, yes=0.5)
    drifted = harness.run_pr(INPUTS)
    assert drifted.returncode == 1, drifted.log
    assert drifted.outputs["regressions"] == "1"
    [row] = _drift(drifted.output_path("report-dir"))["regressions"]
    assert row["prompt_id"] == "confirm" and row["baseline_samples"] == built
    assert "one side only" not in drifted.summary
