"""A seeded fake provider and its probe: the simulated suite of ``bench/drift_signal.py`` as a real
``CanarySuite`` that the real runner can ask.

The provider answers ``SCORE <s> #<nonce>``: the score and pass flag come from the prompt's
behaviour in ``bench/_drift_model.py`` (known pass probabilities), the nonce makes every answer a
different text unless the model is deterministic. The probe reads the score back. No network.
"""

from __future__ import annotations

import random
import re
from typing import ClassVar

from bench._drift_model import Model
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult, ProviderConfig
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.suite import CanarySuite
from tests.fakes.in_loop import InLoopProvider

_SCORE = re.compile(r"SCORE (\d\.\d\d)")
PASS_AT = 0.6


class SimScoreProbe(BaseProbe):
    """Passes when the answer's ``SCORE`` is at least 0.6; its score is that number."""

    probe_id: ClassVar[str] = "bench_sim_score"

    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        match = _SCORE.search(response.content)
        score = float(match.group(1)) if match else 0.0
        return self._make_result(prompt.id, passed=score >= PASS_AT, score=score)


class SimProvider(InLoopProvider):
    """Answers from a :class:`Model`, drawing from one seeded generator (no network, no sleep)."""

    def __init__(self, model: Model, rng: random.Random) -> None:
        super().__init__(ProviderConfig(model_id="sim/model", seed=None))
        self.model = model
        self.rng = rng

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        score, text = self.model.scored_answer(prompt.id, self.rng)
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=f"SCORE {score:.2f} #{text}",
            total_tokens=12,
        )


def sim_suite(keys: list[str]) -> CanarySuite:
    """One prompt per simulated comparison, the score probe on every prompt."""
    prompts = [CanaryPrompt(id=key, text=f"Simulated prompt {key}.") for key in keys]
    return CanarySuite(name="sim", prompts=prompts, probes=[SimScoreProbe()])
