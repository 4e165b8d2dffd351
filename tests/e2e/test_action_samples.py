"""End to end with repeated samples: a model that varies is not drift; a model that changed is.

The fake LLM server answers one prompt at random, "yes" 80% of the time. A single sample a side
would report a regression whenever the PR's one answer happened to be "no"; with ten samples a
side and the significance test, only a real change of the answer distribution is a regression.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import CONFIRM_PROMPTS, ActionHarness, suite_text

pytestmark = pytest.mark.e2e

INPUTS = {"baseline": "path", "samples": "10", "concurrency": "10"}


def _answers(seed: int, yes: float) -> tuple[int, list[tuple[float, str]]]:
    return seed, [(yes, "yes, it is confirmed"), (1 - yes, "no, not yet")]


def _pass_rates(result_dir: Path) -> tuple[float, float]:
    [drift_file] = Path(result_dir).glob("*/*/drift.json")
    [row] = json.loads(drift_file.read_text(encoding="utf-8"))["comparisons"]
    return row["baseline_pass_rate"], row["current_pass_rate"]


def test_an_80_20_model_is_not_drift_but_a_20_80_model_is(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("orders", harness.llm.url, CONFIRM_PROMPTS))
    harness.llm.script("order confirmed", choices_random=_answers(11, 0.8))
    created = harness.run_push(INPUTS)
    assert created.returncode == 0, created.log
    assert created.outputs["baseline-status"] == "created"
    assert harness.llm.request_count == 10  # ten samples really were requested

    # Same model behaviour, other random draws: some "no" answers, yet no regression.
    harness.llm.reset(script=True)
    harness.llm.script("order confirmed", choices_random=_answers(23, 0.8))
    same = harness.run_pr(INPUTS)

    assert same.returncode == 0, same.log
    assert same.outputs["regressions"] == "0"
    before, after = _pass_rates(same.output_path("report-dir"))
    assert 0.5 <= before < 1.0 and 0.5 <= after < 1.0  # both runs varied
    assert "flaky" in same.summary.lower()  # the varying baseline is reported, not gated on

    # The model changed: "yes" only 20% of the time. Now it is a regression, with statistics.
    harness.llm.reset(script=True)
    harness.llm.script("order confirmed", choices_random=_answers(37, 0.2))
    drifted = harness.run_pr(INPUTS)

    assert drifted.returncode == 1, drifted.log
    assert drifted.outputs["regressions"] == "1"
    before, after = _pass_rates(drifted.output_path("report-dir"))
    assert after <= 0.4 < before
    comment = harness.github.comments(7)[-1].body
    assert "says-yes" in comment
    assert "adj. p" in comment and "Benjamini" in comment  # the numbers, and what they mean
    assert "| 90% → 20% |" in comment or "→ 20%" in comment
