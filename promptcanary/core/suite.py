"""CanarySuite: the documented face of a suite: its data (:class:`SuiteSpec`) and entry points.

``run``/``arun``/``score``/``from_yaml`` are doorways to the stages below: running
(:mod:`promptcanary.core.run.runner`), scoring (:mod:`promptcanary.core.run.scoring`) and the
YAML format (:mod:`promptcanary.core.config.schema`). This module imports downward only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptcanary.core.config.schema import load_suite, suite_to_yaml
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.probes.registry import ProbeRegistry
from promptcanary.core.run import default_services
from promptcanary.core.run.answer_phase import AnswerService
from promptcanary.core.run.options import RunOptionError, RunOptions
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.runner import run_suite, run_suite_blocking
from promptcanary.core.run.scoring import score
from promptcanary.core.sampling.pool import Baseline
from promptcanary.core.spec import Samples, SuiteSpec

__all__ = ["CanarySuite"]


class CanarySuite(SuiteSpec):
    """Holds a collection of prompts and probes, and drives the canary run.

    Built like :class:`~promptcanary.core.spec.SuiteSpec` (``name``, ``prompts``, ``probes``,
    ``description``, ``tags``, ``default_system_prompt``, ``bindings``, …), of which it is the
    documented face.
    """

    # ── scoring ──────────────────────────────────────────────────────────────

    def score(self, prompt: CanaryPrompt, response: LLMResponse) -> list[ProbeResult]:
        """Every applicable probe's result for one response (errored responses are not scored)."""
        return score(self, prompt, response)

    # ── running ──────────────────────────────────────────────────────────────

    def run(
        self,
        provider: BaseLLMProvider,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        show_progress: bool = True,
        samples: Samples | None = None,
        baseline: Baseline | None = None,
        services: Sequence[AnswerService] | None = None,
        **options: Any,
    ) -> CanaryRunResult:
        """Run all prompts against the provider, apply all probes, return results.

        ``samples`` is a number of answers per prompt or ``"auto"`` (the default unless the
        suite's ``defaults:`` set one): answers in stages until every comparison with
        ``baseline`` (a snapshot, or a list of snapshots = the pool) is decided. ``options`` are
        further :class:`RunOptions` fields (``min_samples``, ``max_samples``, ``baseline_pool``,
        ``concurrency``, ``timeout``, ``max_retries``, ``record``, ``git_sha``, ``git_ref``,
        ``shard``). ``services`` are the answer services the suite needs; by default (``None``)
        those it names, through LiteLLM: the embedding model of ``semantic_drift:`` and the
        judge of its ``llm_judge`` probes and ``judge_checks:`` (pairwise probes compare with the
        newest snapshot of ``baseline``). Pass ``[]`` to run without them (their results are
        errored).
        """
        given = _run_options(temperature, max_tokens, seed, show_progress, samples, options)
        chosen = self._services(baseline) if services is None else services
        return run_suite_blocking(self, provider, given, baseline=baseline, services=chosen)

    async def arun(
        self,
        provider: BaseLLMProvider,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        show_progress: bool = True,
        samples: Samples | None = None,
        baseline: Baseline | None = None,
        services: Sequence[AnswerService] | None = None,
        **options: Any,
    ) -> CanaryRunResult:
        """The asynchronous form of :meth:`run`."""
        given = _run_options(temperature, max_tokens, seed, show_progress, samples, options)
        chosen = self._services(baseline) if services is None else services
        return await run_suite(self, provider, given, baseline=baseline, services=chosen)

    def _services(self, baseline: Baseline | None) -> list[AnswerService]:
        """The answer services the suite names (built by the installed factory: LiteLLM)."""
        if baseline is None or isinstance(baseline, BaselineSnapshot):
            newest = baseline
        else:
            newest = baseline[0] if baseline else None  # a pool is given newest first
        return default_services.services_for(self, newest)

    # ── YAML ─────────────────────────────────────────────────────────────────

    @classmethod
    def from_yaml(cls, path: str | Path, *, registry: ProbeRegistry | None = None) -> CanarySuite:
        """Load a CanarySuite from a YAML file (format: :mod:`promptcanary.core.config.schema`).

        Probe ``type:`` names resolve in ``registry`` (default: the active registry).
        """
        return load_suite(path, registry=registry, suite_class=cls)

    def to_yaml_template(self) -> str:
        """Render this suite back to a YAML config string (useful for ``init``)."""
        return suite_to_yaml(self)


def _run_options(
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
    show_progress: bool,
    samples: Samples | None,
    options: dict[str, Any],
) -> RunOptions:
    """``run``/``arun`` keywords as one :class:`RunOptions` (an unknown keyword is a TypeError)."""
    try:
        return RunOptions(
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            show_progress=show_progress,
            samples=samples,
            **options,
        )
    except RunOptionError as exc:
        if exc.field in ("temperature", "max_tokens"):
            # PromptCanary 0.2.2 refused these with pydantic's ValidationError (ProviderConfig's
            # check): the documented face still does, with the same bounds.
            ProviderConfig.model_validate({"model_id": "run-option", exc.field: exc.value})
        raise
