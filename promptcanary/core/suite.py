"""CanarySuite: prompts plus probes (data), and the documented entry points of a run.

The suite is data: which probes apply to which prompt (``ProbeBinding``), deterministic probe
keys and hashes, run defaults and YAML lines. Running lives in :mod:`promptcanary.core.runner`,
scoring in :mod:`promptcanary.core.scoring`, YAML parsing in :mod:`promptcanary.core.config`;
``run``/``arun``/``score`` are thin doorways to them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from promptcanary.core.models import (
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
)
from promptcanary.core.pool import DEFAULT_POOL
from promptcanary.core.probes.base import BaseProbe
from promptcanary.core.sequential import MAX_SAMPLES, MIN_SAMPLES, Policy
from promptcanary.core.shard import Shard

if TYPE_CHECKING:
    from promptcanary.core.probes.registry import ProbeRegistry
    from promptcanary.core.runner import Baseline
    from promptcanary.providers.base import BaseLLMProvider


def stable_hash(value: Any, length: int = 12) -> str:
    """A short, deterministic hash of JSON-able data (dict key order does not matter)."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def probe_key_for(probe: BaseProbe, explicit_id: str | None = None) -> str:
    """The probe's identity in comparisons: its explicit id, else ``probe_id`` + parameter hash.

    A probe without parameters keeps its bare ``probe_id`` so keys stay readable.
    """
    if explicit_id:
        return explicit_id
    params = probe.params()
    return f"{probe.probe_id}-{stable_hash(params, 6)}" if params else probe.probe_id


@dataclass(frozen=True)
class ProbeBinding:
    """One probe entry of a suite: the probe, its key, where it applies and its YAML line."""

    probe: BaseProbe
    key: str
    prompt_id: str | None = None
    """Set for a probe listed under one prompt; ``None`` for a suite-wide probe."""
    apply_to_tags: tuple[str, ...] = ()
    """A suite-wide probe with tags applies only to prompts carrying one of them."""
    line: int | None = None

    def applies_to(self, prompt: CanaryPrompt) -> bool:
        if self.prompt_id is not None:
            return self.prompt_id == prompt.id
        return not self.apply_to_tags or bool(set(self.apply_to_tags) & set(prompt.tags))

    def config(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "type": self.probe.probe_id,
            "params": self.probe.params(),
            "prompt": self.prompt_id,
            "tags": list(self.apply_to_tags),
        }


def probe_line_key(prompt_id: str, probe_key: str) -> str:
    return f"{prompt_id}/{probe_key}"


def resolve_line(
    prompt_lines: dict[str, int],
    probe_lines: dict[str, int],
    prompt_id: str,
    probe_key: str | None = None,
) -> int | None:
    """A result's line: its per-prompt probe entry when it has one, else the prompt entry."""
    if probe_key is not None:
        line = probe_lines.get(probe_line_key(prompt_id, probe_key))
        if line is not None:
            return line
    return prompt_lines.get(prompt_id)


@dataclass(frozen=True)
class ModelSpec:
    """A model from the suite's ``models:`` list: a LiteLLM model id plus call parameters."""

    model: str
    params: dict[str, Any] = field(default_factory=dict)


DEFAULT_CONCURRENCY = 8
"""Requests in flight at once unless ``concurrency`` says otherwise."""
DEFAULT_TIMEOUT = 60.0
"""Seconds per request unless ``timeout`` says otherwise."""
DEFAULT_MAX_RETRIES = 3
"""Retries of a transient error unless ``max_retries`` says otherwise."""

AUTO = "auto"
Samples = int | Literal["auto"]
"""Answers per prompt: a fixed number, or ``"auto"`` (stages until every comparison is decided)."""


@dataclass(frozen=True)
class RunDefaults:
    """The suite's ``defaults:``; ``None`` means "not set here"."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    samples: Samples | None = None
    min_samples: int | None = None
    max_samples: int | None = None


_DEFAULTABLE = tuple(f.name for f in fields(RunDefaults))


@dataclass(frozen=True)
class RunOptions:
    """How a run is executed: the caller's choices (CLI flags, action inputs, keywords).

    The model parameters (``temperature``, ``max_tokens``, ``seed``, ``samples``) are ``None``
    when the caller did not set them: then the suite's ``defaults:`` apply, and after those the
    provider's configuration (one sample). ``None`` is never a valid value, so an explicit
    ``samples=1`` overrides a suite default of 3.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    samples: Samples | None = None
    """``None``: the suite's default, else ``"auto"``."""
    min_samples: int | None = None
    max_samples: int | None = None
    baseline_pool: int = DEFAULT_POOL
    """Promoted runs pooled as the baseline of an ``auto`` run."""
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    show_progress: bool = True
    record: str | Path | None = None
    git_sha: str | None = None
    git_ref: str | None = None
    shard: Shard | None = None
    """Answer only this shard's prompts (the run records it; merge the shards' runs after)."""

    def over(self, defaults: RunDefaults) -> RunOptions:
        """These options with every model parameter they leave unset taken from ``defaults``."""
        update = {
            name: getattr(defaults, name)
            for name in _DEFAULTABLE
            if getattr(self, name) is None and getattr(defaults, name) is not None
        }
        return replace(self, **update) if update else self

    def __post_init__(self) -> None:
        if self.samples is not None and self.samples != AUTO:
            if isinstance(self.samples, bool) or not isinstance(self.samples, int):
                raise ValueError(f"samples must be 'auto' or a whole number, got {self.samples!r}")
            if self.samples < 1:
                raise ValueError(f"samples must be 'auto' or at least 1, got {self.samples}")
        if self.baseline_pool < 1:
            raise ValueError(f"baseline_pool must be at least 1, got {self.baseline_pool}")

    @property
    def adaptive(self) -> bool:
        """``samples: auto``, the default when neither the caller nor the suite sets a number."""
        return self.samples is None or self.samples == AUTO

    @property
    def sample_count(self) -> int:
        """Responses per prompt of a fixed-sample run (the most answers a prompt gets, if auto)."""
        if isinstance(self.samples, int):
            return max(1, self.samples)
        return self.policy().max_samples

    def policy(self) -> Policy:
        """The sequential procedure of an ``auto`` run (``ValueError`` names a bad bound)."""
        low = self.min_samples if self.min_samples is not None else MIN_SAMPLES
        high = self.max_samples if self.max_samples is not None else MAX_SAMPLES
        if self.min_samples is not None and self.max_samples is None:
            high = max(high, low)
        return Policy(min_samples=low, max_samples=high)


class SuiteError(ValueError):
    """A suite that cannot be built (duplicate ids or keys, no prompts, no probes)."""


class CanarySuite:
    """Holds a collection of prompts and probes, and drives the canary run.

    Args:
        name: Human-readable name for this suite.
        prompts: The :class:`CanaryPrompt` objects.
        probes: :class:`BaseProbe` instances to run on every response.
        description: Optional description shown in reports.
        tags: Optional tags for categorisation.
        default_system_prompt: System prompt for prompts that set none.
        bindings: Extra probe entries (per-prompt probes, tag filters, explicit keys, YAML lines).
    """

    def __init__(
        self,
        name: str,
        prompts: list[CanaryPrompt],
        probes: list[BaseProbe],
        *,
        description: str = "",
        tags: list[str] | None = None,
        default_system_prompt: str | None = None,
        bindings: Sequence[ProbeBinding] | None = None,
        models: Sequence[ModelSpec] | None = None,
        defaults: RunDefaults | None = None,
        source_file: str | None = None,
        prompt_lines: dict[str, int] | None = None,
    ) -> None:
        if not prompts:
            raise SuiteError("CanarySuite requires at least one prompt.")
        extra = list(bindings or [])
        if not probes and not extra:
            raise SuiteError("CanarySuite requires at least one probe.")
        self.name = name
        self.prompts = list(prompts)
        self.probes = list(probes)
        self.description = description
        self.tags = tags or []
        self.default_system_prompt = default_system_prompt
        self.bindings = [ProbeBinding(p, probe_key_for(p)) for p in self.probes] + extra
        self.models = list(models or [])
        self.defaults = defaults or RunDefaults()
        self.source_file = source_file
        self.prompt_lines = dict(prompt_lines or {})
        self._check_identities()

    def _check_identities(self) -> None:
        seen: set[str] = set()
        for prompt in self.prompts:
            if prompt.id in seen:
                raise SuiteError(f"duplicate prompt id {prompt.id!r}: give each prompt a unique id")
            seen.add(prompt.id)
        for prompt in self.prompts:
            keys: set[str] = set()
            for binding in self.bindings_for(prompt):
                if binding.key in keys:
                    raise SuiteError(
                        f"duplicate probe key {binding.key!r} on prompt {prompt.id!r}: give one "
                        "of the entries an explicit `id:` so each result has its own identity"
                    )
                keys.add(binding.key)

    # ── structure ────────────────────────────────────────────────────────────

    def bindings_for(self, prompt: CanaryPrompt) -> list[ProbeBinding]:
        """The probe entries that score ``prompt``: suite-wide ones first, then its own."""
        return [b for b in self.bindings if b.applies_to(prompt)]

    def system_prompt_for(self, prompt: CanaryPrompt) -> str | None:
        return prompt.system_prompt or self.default_system_prompt

    @property
    def probe_lines(self) -> dict[str, int]:
        """``"<prompt id>/<probe key>"`` → YAML line of each per-prompt probe entry."""
        return {
            probe_line_key(b.prompt_id, b.key): b.line
            for b in self.bindings
            if b.prompt_id is not None and b.line is not None
        }

    def line_for(self, prompt_id: str, probe_key: str | None = None) -> int | None:
        """The YAML line that a result points at: the prompt's own probe entry, else the prompt."""
        return resolve_line(self.prompt_lines, self.probe_lines, prompt_id, probe_key)

    @property
    def probe_config_hash(self) -> str:
        """Changes whenever a probe is added, removed, re-keyed or re-parameterised."""
        return stable_hash([b.config() for b in self.bindings])

    @property
    def suite_hash(self) -> str:
        """Changes whenever anything sent to the model or anything scored changes."""
        prompts = [
            p.model_dump(mode="json", exclude={"description", "metadata"}) for p in self.prompts
        ]
        return stable_hash(
            {
                "name": self.name,
                "system": self.default_system_prompt,
                "prompts": prompts,
                "probes": self.probe_config_hash,
            }
        )

    @property
    def prompt_hashes(self) -> dict[str, str]:
        """prompt id → hash of what the model receives, to tell an edited prompt from drift."""
        return {
            p.id: stable_hash(
                {
                    "request": p.model_dump(
                        mode="json", include={"text", "tools", "response_format"}
                    ),
                    "system": self.system_prompt_for(p),
                },
                8,
            )
            for p in self.prompts
        }

    # ── scoring ──────────────────────────────────────────────────────────────

    def score(self, prompt: CanaryPrompt, response: LLMResponse) -> list[ProbeResult]:
        """Every applicable probe's result for one response (errored responses are not scored)."""
        from promptcanary.core.scoring import score

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
        **options: Any,
    ) -> CanaryRunResult:
        """Run all prompts against the provider, apply all probes, return results.

        ``samples`` is a number of answers per prompt or ``"auto"`` (the default unless the
        suite's ``defaults:`` set one): answers in stages until every comparison with
        ``baseline`` (a snapshot, or a list of snapshots = the pool) is decided. ``options`` are
        further :class:`RunOptions` fields (``min_samples``, ``max_samples``, ``baseline_pool``,
        ``concurrency``, ``timeout``, ``max_retries``, ``record``, ``git_sha``, ``git_ref``,
        ``shard``).
        """
        from promptcanary.core.runner import run_suite_blocking

        given = _given(temperature, max_tokens, seed, show_progress, samples, options)
        return run_suite_blocking(self, provider, given, baseline=baseline)

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
        **options: Any,
    ) -> CanaryRunResult:
        """The asynchronous form of :meth:`run`."""
        from promptcanary.core.runner import run_suite

        given = _given(temperature, max_tokens, seed, show_progress, samples, options)
        return await run_suite(self, provider, given, baseline=baseline)

    # ── YAML ─────────────────────────────────────────────────────────────────

    @classmethod
    def from_yaml(cls, path: str | Path, *, registry: ProbeRegistry | None = None) -> CanarySuite:
        """Load a CanarySuite from a YAML file (format: :mod:`promptcanary.core.config`).

        Probe ``type:`` names resolve in ``registry`` (default: the active registry).
        """
        from promptcanary.core.config import load_suite

        return load_suite(path, registry=registry)

    @classmethod
    def _from_dict(
        cls,
        config: dict[str, Any],
        *,
        source: str = "<dict>",
        registry: ProbeRegistry | None = None,
    ) -> CanarySuite:
        from promptcanary.core.config import suite_from_dict

        return suite_from_dict(config, source=source, registry=registry)

    def to_yaml_template(self) -> str:
        """Render this suite back to a YAML config string (useful for ``init``)."""
        from promptcanary.core.config import suite_to_yaml

        return suite_to_yaml(self)

    def __repr__(self) -> str:
        counts = f"prompts={len(self.prompts)}, probes={len(self.bindings)}"
        return f"CanarySuite(name={self.name!r}, {counts})"


def _given(
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
    show_progress: bool,
    samples: Samples | None,
    options: dict[str, Any],
) -> RunOptions:
    """``run``/``arun`` keywords as one :class:`RunOptions` (an unknown keyword is a TypeError)."""
    return RunOptions(
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        show_progress=show_progress,
        samples=samples,
        **options,
    )
