"""The models and suites of ``bench/day_one.py``: what a repository's history is played with.

Each is a :class:`bench._drift_model.Model` (or a subclass) answered through
``bench/_drift_provider.SimProvider``, so every run goes through the real runner:

* ``default``: the 100-comparison suite of ``bench/_drift_model.py`` (85 always pass, 10 flaky at
  0.90-0.97, 5 continuous scores);
* ``moderate``: 100 pass/fail probes at pass rates spread over 0.60-0.90;
* ``wordings``: the default suite, but every flaky probe answers one of *two* texts, the passing
  wording 90% of the time (a pool of one wording is not proof of determinism);
* ``large``: the default suite ten times over (1,000 comparisons);
* run-to-run spread: every run draws its own pass rate per prompt, ``logit(p) + Normal(0, sd)``
  (always-passing probes stay at 1).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from bench import _drift_model as dm

DRIFT_KEY = dm.DRIFT_KEY


def moderate_behaviour() -> dict[str, dm.Draw]:
    """100 pass/fail probes with pass rates 0.60-0.90 (the drifting one, first, at 0.95)."""
    rates = [0.60 + 0.30 * i / 98 for i in range(99)]
    probes: dict[str, dm.Draw] = {DRIFT_KEY: dm.binary(0.95)}
    probes.update({f"moderate-{i}": dm.binary(r) for i, r in enumerate(rates)})
    return probes


def large_behaviour() -> dict[str, dm.Draw]:
    """The default suite ten times: 1,000 comparisons, one of which drifts."""
    base = dm.suite_behaviour()
    out: dict[str, dm.Draw] = {}
    for copy in range(10):
        for key, draw in base.items():
            out[key if copy == 0 else f"{key}-x{copy}"] = draw
    return out


BEHAVIOURS = {
    "default": dm.suite_behaviour,
    "moderate": moderate_behaviour,
    "wordings": dm.suite_behaviour,
    "large": large_behaviour,
}


@dataclass
class TwoWordings(dm.Model):
    """Flaky probes answer one of two texts: the passing wording or the failing one."""

    def scored_answer(self, key: str, rng: random.Random) -> tuple[float, str]:
        score, text = super().scored_answer(key, rng)
        if key.startswith(("flaky", "moderate")):
            return score, f"{key}:{'pass' if score >= 0.6 else 'fail'}"
        return score, text


def logit_normal(rate: float, sd: float, rng: random.Random) -> float:
    """One run's pass rate: ``rate`` moved by ``Normal(0, sd)`` on the logit scale."""
    return 1 / (1 + math.exp(-(math.log(rate / (1 - rate)) + rng.gauss(0.0, sd))))


def spread(behaviour: dict[str, dm.Draw], rates: dict[str, float], sd: float,
           rng: random.Random) -> dict[str, dm.Draw]:  # fmt: skip
    """One run's behaviour under run-to-run spread: each pass/fail probe's rate redrawn."""
    out = dict(behaviour)
    for key, rate in rates.items():
        if 0.0 < rate < 1.0:
            out[key] = dm.binary(logit_normal(rate, sd, rng))
    return out


def pass_rates(name: str) -> dict[str, float]:
    """The pass/fail probes' rates of a suite (continuous scores are left as they are)."""
    if name == "moderate":
        return {DRIFT_KEY: 0.95} | {f"moderate-{i}": 0.60 + 0.30 * i / 98 for i in range(99)}
    return {f"flaky-{i}": r for i, r in enumerate(dm.FLAKY_RATES)}


def model(name: str, behaviour: dict[str, dm.Draw]) -> dm.Model:
    return TwoWordings(behaviour) if name == "wordings" else dm.Model(behaviour)
