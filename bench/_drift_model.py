"""The simulated suite of ``bench/drift_signal.py`` and a fast model of adaptive sampling.

The suite: 100 (prompt, probe) comparisons, one probe per prompt (a realistic mix):
  * 85 pass/fail probes that always pass;
  * 10 pass/fail probes that sometimes fail, pass rates 0.90-0.97 (``flaky-0`` at 0.95 is the one
    that drifts);
  * 5 continuous-score probes: score ~ Normal(mu, sd) rounded to 0.01 and clipped to [0, 1],
    passing at score >= 0.6.

An answer is its score and pass flag plus a *text*: a random model writes a different text each
time, a deterministic one the same text for a prompt every time (drawn once per model: a flaky
probe is then simply always pass or always fail).

``adaptive_run`` plays ``samples: auto`` on these answers with the library's own decision rules
(``promptcanary.core.sampling.sequential``): minimum answers for every prompt, then stages for the
prompts with an undecided comparison, e-BH at the end. It draws pass flags directly instead of
asking a provider: thousands of runs take seconds, which is what tuning the rules needed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from promptcanary.core.sampling.sequential import (
    Counts,
    Decision,
    Look,
    Policy,
    Verdict,
    finish,
    step,
)

DRIFT_KEY = "flaky-0"

Draw = Callable[[random.Random], tuple[float, bool]]


def binary(rate: float) -> Draw:
    def draw(rng: random.Random) -> tuple[float, bool]:
        ok = rng.random() < rate
        return (1.0 if ok else 0.0), ok

    return draw


SCORE_PASS = 0.6
"""A continuous score passes at this value or above."""


def continuous(mu: float, sd: float) -> Draw:
    def draw(rng: random.Random) -> tuple[float, bool]:
        score = min(1.0, max(0.0, round(rng.gauss(mu, sd), 2)))
        return score, score >= SCORE_PASS

    return draw


FLAKY_RATES = (0.95, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.97)
"""The bench suite's pass/fail probes that sometimes fail (``flaky-0`` is the one that drifts)."""
SCORE_SHAPES = ((0.90, 0.05), (0.85, 0.08), (0.80, 0.10), (0.75, 0.12), (0.70, 0.15))
"""The bench suite's continuous-score probes: (mean, sd) of each."""


def suite_behaviour() -> dict[str, Draw]:
    probes: dict[str, Draw] = {f"stable-{i}": binary(1.0) for i in range(85)}
    probes.update({f"flaky-{i}": binary(r) for i, r in enumerate(FLAKY_RATES)})
    probes.update({f"score-{i}": continuous(mu, sd) for i, (mu, sd) in enumerate(SCORE_SHAPES)})
    return probes


def all_flaky_behaviour() -> dict[str, Draw]:
    """A stress suite for the false-alarm control: 100 pass/fail probes, every one at 0.90."""
    return {f"flaky-{i}": binary(0.90) for i in range(100)}


def drifted(behaviour: dict[str, Draw], rate: float) -> dict[str, Draw]:
    out = dict(behaviour)
    out[DRIFT_KEY] = binary(rate)
    return out


# ── one model's answers ─────────────────────────────────────────────────────


@dataclass
class Model:
    """Answers per prompt: random text, or (deterministic) one fixed answer per prompt."""

    behaviour: dict[str, Draw]
    deterministic: bool = False
    fixed: dict[str, tuple[float, bool]] = field(default_factory=dict)

    @classmethod
    def frozen(cls, behaviour: dict[str, Draw], rng: random.Random) -> Model:
        return cls(behaviour, True, {key: draw(rng) for key, draw in behaviour.items()})

    def scored_answer(self, key: str, rng: random.Random) -> tuple[float, str]:
        """The answer's score and its text (the same text every time for a deterministic model)."""
        if self.deterministic:
            return self.fixed[key][0], f"{key}:fixed"
        score, _ = self.behaviour[key](rng)
        return score, f"{key}:{rng.getrandbits(32)}"

    def answer(self, key: str, rng: random.Random) -> tuple[bool, str]:
        """Pass flag and text (passing is a score of at least 0.6, as the probe reads it)."""
        score, text = self.scored_answer(key, rng)
        return score >= 0.6, text


def pooled(history: Sequence[dict[str, Counts]], key: str) -> Counts:
    """The pool's counts for a prompt: its promoted runs' counts summed."""
    return sum((run[key] for run in history), Counts(0, 0))


@dataclass
class RunOutcome:
    regressed: set[str]
    inconclusive: int
    answers: int
    summary: dict[str, Counts]
    """What a promoted run keeps per prompt for the pool: its pass counts."""


def adaptive_run(
    model: Model,
    history: Sequence[dict[str, Counts]],
    policy: Policy,
    rng: random.Random,
) -> RunOutcome:
    """``samples: auto`` against the pool ``history`` (no history: minimum answers, no verdicts)."""
    keys = list(model.behaviour)
    passes = dict.fromkeys(keys, 0)
    n = dict.fromkeys(keys, 0)
    pool = {k: pooled(history, k) for k in keys} if history else {}

    def ask(key: str, upto: int) -> None:
        while n[key] < upto:
            ok, _text = model.answer(key, rng)
            passes[key] += ok
            n[key] += 1

    for key in keys:
        ask(key, policy.min_samples)
    decisions: list[Decision | None] = [None] * len(keys)
    while pool:
        looks = [Look(pool[k], Counts(passes[k], n[k])) for k in keys]
        decisions = list(step(decisions, looks, policy))
        live = [k for k, d in zip(keys, decisions, strict=True) if d and not d.decided]
        live = [k for k in live if n[k] < policy.max_samples]
        if not live:
            break
        for key in live:
            ask(key, policy.next_size(n[key]))
    final = finish([d for d in decisions if d is not None], policy) if pool else []
    verdicts = dict(zip(keys, (d.verdict for d in final), strict=False))  # none without a pool
    summary = {k: Counts(passes[k], n[k]) for k in keys}
    return RunOutcome(
        regressed={k for k, v in verdicts.items() if v is Verdict.REGRESSED},
        inconclusive=sum(v is Verdict.UNDECIDED for v in verdicts.values()),
        answers=sum(n.values()),
        summary=summary,
    )
