"""A fake LLM judge: reads our judge prompt's data blocks and answers verdicts by a policy.

Two forms of the same judge:

* :func:`judge_server` — real HTTP on 127.0.0.1 (a :class:`~tests.fakes.llm_server.FakeLLMServer`
  whose rule answers judge requests through :class:`JudgePolicy`), reached through LiteLLM like
  any judge; ``server.requests`` records what it was sent, and 429s are scripted with the
  server's own ``status``/``fail_times`` rules added before it.
* :class:`JudgeProvider` — the same policy behind our ``BaseLLMProvider`` interface, in process,
  for unit tests and the bench.

The policy passes an answer containing ``good`` and fails the rest (pairwise: the answer with
more ``good`` is better, equal is a tie), unless told otherwise: ``malformed`` / ``refuse``
substrings of the answer get prose instead of JSON; ``flip`` flips verdicts at random (a noisy
judge); ``fingerprint`` is what its answers carry.
"""

from __future__ import annotations

import html
import json
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from promptcanary.core.run.provider import BaseLLMProvider, ProviderError
from tests.fakes.in_loop import InLoopProvider
from tests.fakes.llm_server import FakeLLMServer

JUDGE_SYSTEM_MARK = "strict evaluator"
"""A substring of our judge's system message: the server's judge rule matches on it."""

_BLOCK = re.compile(r"<(answer|answer_A|answer_B|rubric|prompt|context)>\n(.*?)\n</\1>", re.DOTALL)


def blocks(text: str) -> dict[str, str]:
    """The data blocks of a judge message, unescaped (what the judge would read)."""
    return {m.group(1): html.unescape(m.group(2)) for m in _BLOCK.finditer(text)}


def _good(answer: str) -> int:
    return answer.lower().count("good")


@dataclass
class JudgePolicy:
    """How the fake judge decides (see module doc)."""

    malformed: str = "MALFORMED"
    refuse: str = "REFUSE"
    flip: float = 0.0
    strict: float = 0.0
    """Probability of failing an answer the policy would pass (a judge update that is stricter)."""
    seed: int = 0
    fingerprint: str = "fp_judge_1"
    decide: Callable[[str], bool] | None = None
    """Overrides "contains good" for rubric verdicts."""
    seen: list[dict[str, str]] = field(default_factory=list)
    _rng: random.Random = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def _chance(self, p: float) -> bool:
        with self._lock:
            return p > 0 and self._rng.random() < p

    def reply(self, user_text: str) -> str:
        data = blocks(user_text)
        with self._lock:
            self.seen.append(data)
        answers = " ".join(v for k, v in data.items() if k.startswith("answer"))
        if self.refuse in answers:
            return "I'm sorry, but I can't evaluate this content."
        if self.malformed in answers:
            return '{"verdict": "maybe", "reason": "unsure"}'
        if "answer_A" in data:
            a, b = _good(data["answer_A"]), _good(data["answer_B"])
            choice = "tie" if a == b else ("A" if a > b else "B")
            if self._chance(self.flip):
                choice = {"A": "B", "B": "A", "tie": "A"}[choice]
            return json.dumps({"choice": choice, "reason": f"A has {a}, B has {b}"})
        answer = data.get("answer", "")
        passed = self.decide(answer) if self.decide else _good(answer) > 0
        if passed and self._chance(self.strict):
            passed = False
        if self._chance(self.flip):
            passed = not passed
        reason = "mentions good" if passed else "does not meet the rubric"
        return json.dumps({"verdict": "pass" if passed else "fail", "reason": reason})


def judge_server(
    policy: JudgePolicy | None = None, **knobs: Any
) -> tuple[FakeLLMServer, JudgePolicy]:
    """A started server whose judge requests the policy answers (other requests echo)."""
    policy = policy or JudgePolicy(**knobs)
    server = FakeLLMServer().start()
    server.script(
        None,
        system=JUDGE_SYSTEM_MARK,
        content=lambda record: policy.reply(record["last_user"]),
    )
    return server, policy


class JudgeProvider(InLoopProvider):
    """The policy as an in-process provider; ``fail_first`` transient errors (429) come first."""

    def __init__(
        self, model: str = "fake/judge", policy: JudgePolicy | None = None, fail_first: int = 0
    ) -> None:
        super().__init__(ProviderConfig(model_id=model, temperature=0.0))
        self.policy = policy or JudgePolicy()
        self.fail_first = fail_first
        self.calls: list[dict[str, Any]] = []

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        self.calls.append(
            {
                "text": prompt.text,
                "system": system_prompt,
                "seed": self.config.seed,
                "temperature": self.config.temperature,
                "response_format": prompt.response_format,
            }
        )
        if len(self.calls) <= self.fail_first:
            raise ProviderError("HTTP 429 rate limited", status_code=429, retry_after=0.0)
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=self.policy.reply(prompt.text),
            prompt_tokens=50,
            completion_tokens=10,
            total_tokens=60,
            raw_response={
                "model": self.config.model_id,
                "system_fingerprint": self.policy.fingerprint,
            },
        )


class JudgeFactory:
    """A judge provider factory ((model, params) → the shared :class:`JudgeProvider`)."""

    def __init__(self, provider: JudgeProvider | None = None) -> None:
        self.provider = provider or JudgeProvider()
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, model: str, params: dict[str, Any]) -> BaseLLMProvider:
        self.asked.append((model, params))
        return self.provider
