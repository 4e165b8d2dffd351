"""samples: auto through the real runner: stages, deterministic prompts, pools."""

from __future__ import annotations

import asyncio
import io
import random
from collections import Counter

from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.probes.format import KeywordPresenceProbe
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.runner import run_suite
from promptcanary.core.sampling.pool import promote
from promptcanary.core.sampling.power import shows_drop
from promptcanary.core.sampling.sequencer import policy_of
from promptcanary.core.sampling.sequential import (
    DETERMINISTIC_EVIDENCE,
    MAX_SAMPLES,
    Counts,
    baseline_samples_for,
)
from promptcanary.core.suite import CanarySuite


class Answers(BaseLLMProvider):
    """Answers per prompt: a fixed text, or 'ok'/'bad' with a pass probability (seeded)."""

    def __init__(self, rates: dict[str, float], *, varied: bool, seed: int = 0) -> None:
        super().__init__(ProviderConfig(model_id="m", seed=None))
        self.rates, self.varied, self.rng = rates, varied, random.Random(seed)
        self.asked: Counter[str] = Counter()

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        self.asked[prompt.id] += 1
        word = "ok" if self.rng.random() < self.rates[prompt.id] else "bad"
        nonce = f" #{self.rng.getrandbits(32)}" if self.varied else ""
        return LLMResponse(prompt_id=prompt.id, provider_model_id="m", content=word + nonce)


SUITE = CanarySuite(
    name="s",
    prompts=[CanaryPrompt(id=f"p{i}", text=f"question {i}") for i in range(4)],
    probes=[KeywordPresenceProbe(required_keywords=["ok"])],
)
STEADY = {"p0": 1.0, "p1": 1.0, "p2": 1.0, "p3": 1.0}


def _history(runs: int, *, varied: bool) -> BaselineSnapshot:
    snapshot: BaselineSnapshot | None = None
    for i in range(runs):
        run = SUITE.run(
            Answers(STEADY, varied=varied, seed=i), show_progress=False, baseline=snapshot
        )
        snapshot = promote(run, snapshot)
    assert snapshot is not None
    return snapshot


def test_without_a_baseline_every_prompt_builds_a_pool_that_can_show_a_drop() -> None:
    provider = Answers(STEADY, varied=True)
    run = SUITE.run(provider, show_progress=False, top_up=True)
    record = run.provenance.adaptive
    assert record is not None and record.stages > 1
    # The default for 4 comparisons, recorded; every prompt stopped once its answers could show
    # a drop of the margin, within that bound.
    assert record.baseline_samples == baseline_samples_for(4)
    policy = policy_of(record)
    for n in provider.asked.values():
        assert n <= record.baseline_samples
        assert shows_drop(Counts(n, n), 4, policy)
    # run.json says what was spent and what fixed max-samples sampling would have spent.
    dumped = run.model_dump(mode="json")["provenance"]["adaptive"]
    total = sum(provider.asked.values())
    assert (dumped["requests"], dumped["fixed_requests"]) == (total, 4 * MAX_SAMPLES)


def test_a_deterministic_first_run_builds_as_much_as_a_varied_one() -> None:
    # Identical answers are no shortcut: the pool must show a model that turns random.
    asked = []
    for varied in (False, True):
        provider = Answers(STEADY, varied=varied)
        SUITE.run(provider, show_progress=False, top_up=True)
        asked.append(provider.asked)
    assert asked[0] == asked[1]
    assert min(asked[0].values()) > DETERMINISTIC_EVIDENCE


def test_a_plain_run_without_a_baseline_asks_each_prompt_once() -> None:
    # suite.run(provider) as documented: one result per prompt and probe.
    provider = Answers(STEADY, varied=True)
    run = SUITE.run(provider, show_progress=False)
    assert set(provider.asked.values()) == {1}
    assert len(run.probe_results) == len(SUITE.prompts)


def test_baseline_samples_bounds_the_first_run() -> None:
    provider = Answers({"p0": 0.8, "p1": 0.8, "p2": 0.8, "p3": 0.8}, varied=True)
    run = SUITE.run(provider, show_progress=False, baseline_samples=12, top_up=True)
    assert max(provider.asked.values()) == 12
    assert run.provenance.adaptive is not None
    assert run.provenance.adaptive.baseline_samples == 12


def test_a_deterministic_model_is_tested_like_a_varied_one() -> None:
    # Repeating the pooled text settles nothing by itself: "same" is the tested verdict, at the
    # cost of an all-pass varied prompt.
    asked = []
    for varied in (False, True):
        baseline = _history(2, varied=varied)
        provider = Answers(STEADY, varied=varied, seed=99)
        run = SUITE.run(provider, show_progress=False, baseline=baseline)
        report = compare(baseline, run)
        assert {c.verdict for c in report.comparisons} == {"same"}
        assert all(c.p_adjusted is not None for c in report.comparisons)
        asked.append(provider.asked)
    assert asked[0] == asked[1]
    assert min(asked[0].values()) > 1


def test_a_drifted_prompt_is_reported_with_the_answers_it_took() -> None:
    baseline = _history(5, varied=True)
    provider = Answers({**STEADY, "p2": 0.2}, varied=True, seed=7)
    run = SUITE.run(provider, show_progress=False, baseline=baseline, max_samples=30)
    report = compare(baseline, run)
    [regressed] = report.regressions
    assert regressed.prompt_id == "p2" and regressed.verdict == "regressed"
    assert regressed.e_value is not None and regressed.e_value >= len(report.comparisons) / 0.05
    assert regressed.current_samples == provider.asked["p2"]
    assert report.baseline_pool_runs == 5


def test_each_stage_says_what_it_asked() -> None:
    baseline = _history(3, varied=True)
    stream = io.StringIO()
    provider = Answers({**STEADY, "p1": 0.3}, varied=True, seed=3)
    asyncio.run(
        run_suite(
            SUITE, provider, RunOptions(max_samples=12), baseline=baseline, progress_stream=stream
        )
    )
    lines = [
        line for line in stream.getvalue().splitlines() if line.startswith("promptcanary: stage")
    ]
    assert lines[0].startswith("promptcanary: stage 1: 12 requests, 12 so far;")
    assert len(lines) >= 2
    assert "ok" not in stream.getvalue() and "bad" not in stream.getvalue()


def test_an_old_single_answer_baseline_is_inconclusive_with_what_would_settle_it() -> None:
    # A baseline of one answer per prompt (as first runs were sampled before baseline-samples):
    # a pull request whose prompts all fail now cannot be judged regressed or same from it.
    old = SUITE.run(Answers(STEADY, varied=True), show_progress=False, samples=1)
    snapshot = promote(old, None)
    provider = Answers({"p0": 0.0, "p1": 1.0, "p2": 1.0, "p3": 1.0}, varied=True, seed=3)
    run = SUITE.run(provider, show_progress=False, baseline=snapshot)
    report = compare(snapshot, run)
    row = next(c for c in report.comparisons if c.prompt_id == "p0")
    assert row.verdict == "inconclusive" and not row.regression
    assert row.settle is not None and row.settle.startswith("baseline too small to detect")
    assert any("inconclusive: baseline too small" in w for w in report.warnings)
    # Judged by the sequential procedure only: no single-sample threshold rule, no warning of it.
    assert not any("one side only" in w for w in report.warnings)
    assert {c.verdict for c in report.comparisons} <= {"same", "inconclusive"}


def test_a_push_tops_up_a_thin_pool_and_a_pull_request_does_not() -> None:
    old = SUITE.run(Answers(STEADY, varied=True), show_progress=False, samples=1)
    snapshot = promote(old, None)
    pull = Answers(STEADY, varied=True, seed=5)
    SUITE.run(pull, show_progress=False, baseline=snapshot)
    push = Answers(STEADY, varied=True, seed=5)
    SUITE.run(push, show_progress=False, baseline=snapshot, top_up=True)
    assert max(pull.asked.values()) < DETERMINISTIC_EVIDENCE
    assert min(push.asked.values()) > max(pull.asked.values())


def test_a_flaky_probes_regression_against_one_pooled_run_says_the_spread_is_unmeasured() -> None:
    # One promoted run where p2 passed 90% of the time: its regression today cannot be told from
    # run-to-run variation, and the report says so; an always-passing probe's regression does
    # not carry the note, and neither does one against a pool of two runs.
    rates = {**STEADY, "p2": 0.9}
    first = SUITE.run(Answers(rates, varied=True, seed=1), show_progress=False, top_up=True)
    one = promote(first, None)
    dropped = Answers({**rates, "p2": 0.1}, varied=True, seed=2)
    report = compare(one, SUITE.run(dropped, show_progress=False, baseline=one))
    [row] = report.regressions
    assert row.prompt_id == "p2" and row.flaky
    assert any("against a pool of one run" in w for w in report.warnings)

    steady_drop = Answers({**rates, "p0": 0.1}, varied=True, seed=3)
    report = compare(one, SUITE.run(steady_drop, show_progress=False, baseline=one))
    assert [r.prompt_id for r in report.regressions] == ["p0"]
    assert not any("against a pool of one run" in w for w in report.warnings)

    second = SUITE.run(Answers(rates, varied=True, seed=4), show_progress=False, baseline=one)
    two = promote(second, one)
    report = compare(two, SUITE.run(dropped, show_progress=False, baseline=two))
    assert [r.prompt_id for r in report.regressions] == ["p2"]
    assert not any("against a pool of one run" in w for w in report.warnings)
