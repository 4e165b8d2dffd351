"""Judge benchmark: a noisy LLM judge must not cry wolf, a worse model must be caught, and an
updated judge must be called a changed judge, not a model regression. Prints, never asserts.

Everything goes through the real runner (``run_suite`` with the judge service in its answer
phase, ``samples: auto`` and the action's defaults: pool of 20, e-BH at 5%) and the real
``evaluate()``, with in-process fakes for the model under test and the judge
(``tests/fakes/judge_server.JudgeProvider``: no network).

* The suite: 4 prompts, one ``llm_judge`` rubric probe on each, and 4 canaries (2 expected to
  pass, 2 to fail) asked ``check_votes`` times each (default 15). Their disagreements give
  the judged comparisons their attenuation (``promptcanary.core.run.judge_noise``).
* The model: each answer is a distinct text that is good (passes the rubric) with probability
  0.9. "Worse on one prompt": that prompt's answers are good with probability 0.5.
* The judge: its verdicts are flipped at random with probability ``flip`` (10% and 20%). "The
  judge updated": a stricter judge (it fails 70% of the answers it used to pass, then flips like
  before), with the same ``system_fingerprint`` — the silent case; a new fingerprint is caught
  by the fingerprint rule alone and is counted in its own row.

Each chain fills the pool with 20 promoted runs (model and judge unchanged), then for RUNS steps
runs the unchanged model, the worse model and the updated judge against the same pool; only the
unchanged run may be promoted. Columns: a regression reported (any), the worse prompt caught,
"judge changed" reported.

    JUDGE_DRIFT_RUNS=100 .venv/bin/python bench/judge_drift.py   # ~40 min on 2 busy cores
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, print_table
from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.run.judge import JudgeService
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.spec import SuiteSpec
from promptcanary.core.verdict.evaluate import Evaluation, EvaluationPolicy, evaluate
from tests.fakes.in_loop import InLoopProvider
from tests.fakes.judge_server import JudgeFactory, JudgePolicy, JudgeProvider

RUNS = int(os.environ.get("JUDGE_DRIFT_RUNS", "200"))
SEED = int(os.environ.get("JUDGE_DRIFT_SEED", "20261202"))
PROMPTS = ("p0", "p1", "p2", "p3")
WORSE = "p0"
GOOD_RATE, WORSE_RATE = 0.9, 0.5
STRICT = 0.7
SUITE_TEXT = """
name: judged
judge: {model: fake/judge, judge_samples: VOTES}
judge_checks:
  - {prompt: Greet the user., answer: "Hello, a good day to you!", expected: pass, rubric: Polite.}
  - {prompt: Thank the user., answer: "Thanks, good of you.", expected: pass, rubric: Polite.}
  - {prompt: Greet the user., answer: "What do you want?", expected: fail, rubric: Polite.}
  - {prompt: Thank the user., answer: "Whatever.", expected: fail, rubric: Polite.}
probes:
  - {type: llm_judge, rubric: The answer is good., id: judged}
prompts:
""" + "".join(f"  - {{id: {p}, text: Question {p}}}\n" for p in PROMPTS)
POLICY = EvaluationPolicy(promotion="if_clean")


class SimModel(InLoopProvider):
    """Distinct answers, good with a per-prompt probability."""

    def __init__(self, rates: dict[str, float], rng: random.Random) -> None:
        super().__init__(ProviderConfig(model_id="sim/model", seed=None))
        self.rates, self.rng = rates, rng

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        good = self.rng.random() < self.rates.get(prompt.id, GOOD_RATE)
        text = f"{'a good' if good else 'a poor'} answer #{self.rng.getrandbits(48):x}"
        return LLMResponse(prompt_id=prompt.id, provider_model_id="sim/model", content=text)


def suite(votes: int) -> SuiteSpec:
    return suite_from_text(SUITE_TEXT.replace("VOTES", str(votes)))


def one_run(
    spec: SuiteSpec,
    model: SimModel,
    judge: JudgePolicy,
    pool: BaselineSnapshot | None,
    rng: random.Random,
) -> Evaluation:
    service = JudgeService(JudgeFactory(JudgeProvider("fake/judge", judge)), rng=rng)
    run = asyncio.run(
        run_suite(
            spec,
            model,
            RunOptions(samples="auto", show_progress=False),
            baseline=pool,
            rng=rng,
            services=[service],
        )
    )
    return evaluate(pool, run, spec, POLICY)


@dataclass
class Tally:
    runs: int = 0
    regressed: int = 0
    caught: int = 0
    changed: int = 0
    answers: int = 0
    judge_requests: int = 0

    def add(self, evaluation: Evaluation) -> None:
        keys = {c.prompt_id for c in evaluation.unapproved_regressions}
        self.runs += 1
        self.regressed += bool(keys)
        self.caught += WORSE in keys
        self.changed += evaluation.judge_changed is not None
        self.answers += len(evaluation.run.llm_responses)
        self.judge_requests += sum(u.requests for u in evaluation.run.services)

    def pct(self, count: int) -> str:
        return f"{100 * count / self.runs:.1f}%" if self.runs else "-"


def chain(flip: float, votes: int, seed: int) -> list[Tally]:
    spec = suite(votes)
    rng = random.Random(seed)
    same = JudgePolicy(flip=flip, seed=seed)
    updated = JudgePolicy(flip=flip, strict=STRICT, seed=seed + 1)
    relabelled = JudgePolicy(flip=flip, seed=seed + 2, fingerprint="fp_judge_2")
    unchanged = SimModel({}, rng)
    worse = SimModel({WORSE: WORSE_RATE}, rng)
    plan = [(unchanged, same), (worse, same), (unchanged, updated), (unchanged, relabelled)]
    tallies = [Tally() for _ in plan]
    pool: BaselineSnapshot | None = None
    for step in range(DEFAULT_POOL + RUNS):
        asked = plan if step >= DEFAULT_POOL else plan[:1]  # the pool fills first
        outcomes = [one_run(spec, m, j, pool, rng) for m, j in asked]
        if step >= DEFAULT_POOL:
            for tally, outcome in zip(tallies, outcomes, strict=True):
                tally.add(outcome)
        if outcomes[0].promotion.allowed:
            pool = outcomes[0].snapshot(DEFAULT_POOL)
    return tallies


def main() -> None:
    print(f"judge_drift: {machine_note()}; RUNS={RUNS} per scenario, pool {DEFAULT_POOL}\n")
    # (judge flips, judge_samples): the defaults' single vote at 10% and 20% flips; a perfect
    # judge (the procedure's own limit); and a majority of 3 votes at 20%.
    chains = [(0.10, 1), (0.20, 1), (0.0, 1), (0.20, 3)]
    started = time.perf_counter()
    with multiprocessing.Pool(2) as workers:
        results = workers.starmap(chain, [(f, v, SEED + i) for i, (f, v) in enumerate(chains)])
    names = [
        "model unchanged",
        f"model worse on one prompt ({GOOD_RATE} → {WORSE_RATE})",
        f"judge updated, silently (stricter: fails {STRICT:.0%} of its passes)",
        "judge updated, new fingerprint",
    ]
    rows = []
    for (flip, votes), tallies in zip(chains, results, strict=True):
        for name, t in zip(names, tallies, strict=True):
            rows.append(
                [
                    f"{flip:.0%}",
                    votes,
                    name,
                    t.runs,
                    t.pct(t.regressed),
                    t.pct(t.caught) if "worse" in name else "-",
                    t.pct(t.changed),
                    f"{t.answers / t.runs / len(PROMPTS):.1f}",
                    f"{t.judge_requests / t.runs:.0f}",
                ]
            )
    print_table(
        "LLM judge through the real runner (samples: auto, defaults)",
        [
            "judge flips",
            "judge_samples",
            "scenario",
            "runs",
            "regression reported",
            "worse prompt caught",
            "judge changed",
            "answers/prompt",
            "judge requests/run",
        ],
        rows,
    )
    print(
        "\nTargets: model unchanged → regression ≤ 5%; worse prompt caught ≥ 90%; judge updated"
        " → judge changed ≥ 95% and regression ≤ 5%."
        f"\n({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
