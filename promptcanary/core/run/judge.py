"""The judge as an answer service: one judge request per payload, cached, capped and counted.

:class:`JudgeService` serves the ``judge`` requests of :class:`~promptcanary.core.probes.llm_judge.
LLMJudgeProbe` s and of the judge's canaries (:mod:`promptcanary.core.run.judging`) in the run's
answer phase, which runs them concurrently, retries transient errors and counts them apart from
the model under test. For each payload the service

* answers from its :class:`JudgeCache` when the same content (judge model, rubric, prompt,
  answer, compared answer, vote) was judged before — in this run or an earlier run of the pull
  request whose cache file the report folder kept. Only verdicts are cached, never answers of
  the model under test: their variability is what a run measures;
* refuses, without a request, once ``max_requests`` were sent (the result says so);
* otherwise asks the judge model at temperature 0 with a seed pinned per vote (where the
  provider takes one), through the provider the caller's factory builds (LiteLLM in the CLI and
  the action), and parses the reply strictly (:mod:`promptcanary.core.run.judge_prompt`).

Pairwise payloads are compared with a baseline answer of the same prompt (``references``: the
baseline's answers; sample ``i`` meets answer ``i mod n``), shown first or second at random per
call; the order is recorded in the verdict.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, LLMResponse
from promptcanary.core.probes.llm_judge import JUDGE
from promptcanary.core.probes.served import ServiceFailure
from promptcanary.core.run.answer_phase import AnswerService, ServiceBatch
from promptcanary.core.run.judge_prompt import (
    SYSTEM,
    VerdictError,
    pairwise_message,
    parse_reply,
    response_format,
    rubric_message,
)
from promptcanary.core.run.judging import judge_endpoints, judges
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.spec import SuiteSpec, stable_hash

DEFAULT_JUDGE_SEED = 42
JUDGE_MAX_TOKENS = 256
CACHE_FILE = "judge-cache.json"
"""The cache's file in the report folder (kept across the runs of a pull request)."""
CACHE_VERSION = 1

JudgeProviderFactory = Callable[[str, dict[str, Any]], BaseLLMProvider]
"""(judge model id, call parameters such as ``api_base``) → a provider."""
CostLookup = Callable[[str, int, int], float | None]


class JudgeCache:
    """Verdicts by content key; loaded from and saved to a JSON file by the caller."""

    def __init__(self, entries: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.entries: dict[str, dict[str, Any]] = dict(entries or {})

    @classmethod
    def load(cls, path: Path) -> JudgeCache:
        """The cache in ``path``; empty when the file is missing or not a cache we wrote (a
        cache is only ever a saving, so an unreadable one is started afresh)."""
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return cls()
        entries = data.get("verdicts")
        if not isinstance(entries, dict):
            return cls()
        return cls({k: v for k, v in entries.items() if isinstance(v, dict)})

    def save(self, path: Path) -> None:
        text = json.dumps({"version": CACHE_VERSION, "verdicts": self.entries}, sort_keys=True)
        atomic_write_text(path, text)


def reference_answers(baseline: BaselineSnapshot | None) -> dict[str, list[str]]:
    """prompt id → the baseline's answered texts, in sample order (pairwise compares with them)."""
    out: dict[str, list[str]] = {}
    if baseline is None:
        return out
    for response in sorted(baseline.run_result.llm_responses, key=lambda r: r.sample):
        if not response.errored:
            out.setdefault(response.prompt_id, []).append(response.content)
    return out


def judge_services(
    suite: SuiteSpec,
    provider_for: JudgeProviderFactory,
    *,
    baseline: BaselineSnapshot | None = None,
    cache: JudgeCache | None = None,
    max_requests: int | None = None,
    cost: CostLookup | None = None,
) -> list[AnswerService]:
    """The judge service a run of ``suite`` needs (none when it judges nothing): pairwise probes
    compare with ``baseline``'s answers; ``max_requests`` (the caller's) overrides the suite's
    ``judge: max_requests``."""
    if not judges(suite):
        return []
    limit = max_requests if max_requests is not None else getattr(suite.judge, "max_requests", None)
    service = JudgeService(
        provider_for,
        references=reference_answers(baseline),
        cache=cache,
        max_requests=limit,
        cost=cost,
        endpoints=judge_endpoints(suite),
        structured=suite.judge.structured if suite.judge else "json_schema",
    )
    return [service]


def cache_key(payload: Mapping[str, Any], reference: str | None) -> str:
    return stable_hash({"payload": dict(payload), "reference": reference}, 32)


class JudgeService(AnswerService):
    """The judge in the answer phase (see module doc). One payload per request."""

    name = JUDGE
    batch_size = 1

    def __init__(
        self,
        provider_for: JudgeProviderFactory,
        *,
        references: Mapping[str, Sequence[str]] | None = None,
        cache: JudgeCache | None = None,
        max_requests: int | None = None,
        seed: int = DEFAULT_JUDGE_SEED,
        rng: random.Random | None = None,
        cost: CostLookup | None = None,
        endpoints: Sequence[tuple[str, str | None]] = (),
        structured: str = "json_schema",
    ) -> None:
        self.provider_for = provider_for
        self.references = {k: list(v) for k, v in (references or {}).items()}
        self.cache = cache if cache is not None else JudgeCache()
        self.max_requests = max_requests
        self.seed = seed
        self.rng = rng or random.Random()
        self.cost = cost
        self.structured = structured
        """How replies are asked for (:data:`~promptcanary.core.run.judge_prompt.STRUCTURED`)."""
        self.endpoints = list(endpoints)
        """The (model, api_base) pairs the suite names, checked before the first request."""
        self.sent = 0
        self.capped = 0
        self._providers: dict[tuple[str, str], BaseLLMProvider] = {}

    @property
    def model_id(self) -> str:
        return ", ".join(sorted({model for model, _ in self.endpoints})) or "judge"

    def check_environment(self) -> None:
        for model, api_base in self.endpoints:
            self._provider(model, api_base).check_environment()

    def _provider(self, model: str, api_base: str | None) -> BaseLLMProvider:
        key = (model, api_base or "")
        if key not in self._providers:
            params: dict[str, Any] = {"temperature": 0.0, "max_tokens": JUDGE_MAX_TOKENS}
            if api_base:
                params["api_base"] = api_base
            self._providers[key] = self.provider_for(model, params)
        return self._providers[key]

    def _reference(self, payload: Mapping[str, Any]) -> str | None:
        answers = self.references.get(str(payload.get("prompt_id")), [])
        return answers[int(payload.get("sample", 0)) % len(answers)] if answers else None

    async def serve(self, payloads: Sequence[Any], *, timeout: float) -> ServiceBatch:
        (payload,) = payloads
        pairwise = payload.get("mode") == "pairwise"
        reference = self._reference(payload) if pairwise else None
        if pairwise and reference is None:
            failure = ServiceFailure(
                "no baseline answer of this prompt to compare with yet (a pairwise probe "
                "compares from the run after the first baseline)"
            )
            return ServiceBatch([failure], 0, 0.0, requests=0)
        key = cache_key(payload, reference)
        cached = self.cache.entries.get(key)
        if cached is not None:
            return ServiceBatch([cached], 0, 0.0, requests=0)
        if self.max_requests is not None and self.sent >= self.max_requests:
            self.capped += 1
            failure = ServiceFailure(
                f"max-judge-requests ({self.max_requests}) reached: this answer was not judged"
            )
            return ServiceBatch([failure], 0, 0.0, requests=0)
        self.sent += 1
        output, response = await self._ask(payload, reference, timeout)
        if not isinstance(output, ServiceFailure):
            self.cache.entries[key] = output
        tokens = response.total_tokens or 0
        cost = None
        if self.cost is not None:
            cost = self.cost(
                str(payload["model"]), response.prompt_tokens or 0, response.completion_tokens or 0
            )
        return ServiceBatch([output], tokens, cost)

    async def _ask(
        self, payload: Mapping[str, Any], reference: str | None, timeout: float
    ) -> tuple[dict[str, Any] | ServiceFailure, LLMResponse]:
        """One judge call; a reply that is not a verdict is a failure (not retried: at a fixed
        seed the same request would get the same reply). Raises ``ProviderError``."""
        mode = str(payload.get("mode", "rubric"))
        provider = self._provider(str(payload["model"]), payload.get("api_base"))
        config = provider.config
        seeded = config.model_copy(update={"seed": self.seed + int(payload.get("vote", 0))})
        order = None
        if reference is not None:
            order = self.rng.choice(("baseline-first", "current-first"))
            first, second = str(payload["answer"]), reference
            if order == "baseline-first":
                first, second = second, first
            text = pairwise_message(payload, first, second)
        else:
            text = rubric_message(payload)
        prompt = CanaryPrompt(
            id="judge", text=text, response_format=response_format(mode, self.structured)
        )
        response = await provider.with_config(seeded).acomplete(
            prompt, system_prompt=SYSTEM, timeout=timeout
        )
        try:
            reply = parse_reply(response.content, mode)
        except VerdictError as exc:
            return ServiceFailure(str(exc)), response
        output: dict[str, Any] = {
            "verdict": reply.value,
            "reason": reply.reason,
            "model": str(response.raw_response.get("model") or payload["model"]),
            "fingerprint": str(response.raw_response.get("system_fingerprint") or ""),
        }
        if order is not None:
            # "Is today's answer worse?": worse when the other answer was chosen.
            today = "A" if order == "current-first" else "B"
            worse = reply.value not in (today, "tie")
            output.update(
                verdict="fail" if worse else "pass",
                choice=reply.value,
                order=order,
                baseline_answer=reference,
            )
        return output, response
