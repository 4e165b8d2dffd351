"""What a suite is: prompts, probe bindings, keys and hashes, run defaults, YAML lines.

:class:`SuiteSpec` is the data that every stage types against (the runner, scoring, the
comparison, the evaluation); :class:`promptcanary.core.suite.CanarySuite` adds the documented
entry points (``run``, ``arun``, ``score``, ``from_yaml``) on top of it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from promptcanary.core.models import DEFAULT_JUDGE_TOLERANCE, CanaryPrompt
from promptcanary.core.probes.base import BaseProbe


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


def _unsent(prompt: CanaryPrompt, *fields: str) -> set[str]:
    """Fields left out of a prompt's hashes: ``fields``, and ``messages`` when the prompt is
    one text, so a suite written before conversations existed keeps its hashes."""
    return {*fields, *(("messages",) if prompt.messages is None else ())}


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


MODEL_KEYS = (
    "model",
    "temperature",
    "max_tokens",
    "seed",
    "api_base",
    "api_key",
    "api_version",
    "timeout",
    "tool_choice",
    "response_format",
    "custom_llm_provider",
    "rpm",
    "tpm",
    "litellm",
)
"""The keys of a ``models:`` mapping; ``litellm:`` holds any other LiteLLM parameter as is."""


@dataclass(frozen=True)
class ModelSpec:
    """A model from the suite's ``models:`` list: a LiteLLM model id plus call parameters
    (the mapping's keys, with those under ``litellm:`` merged in)."""

    model: str
    params: dict[str, Any] = field(default_factory=dict)


def requested_models(requested: Sequence[str], entries: Sequence[ModelSpec]) -> list[ModelSpec]:
    """The models a caller asked for by id (``--model``, the action's ``models`` input), each
    with the parameters of the suite's ``models:`` entry of the same id (its ``api_base``, …);
    an id the suite does not name runs with none. The one rule of the CLI and the action."""
    by_id = {entry.model: entry for entry in entries}
    return [by_id.get(model.strip(), ModelSpec(model.strip())) for model in requested]


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
    baseline_samples: int | None = None
    """``samples: auto``: answers per prompt the pool is built to (unset: from the suite's size)."""


DEFAULT_MIN_SHIFT = 0.05
"""``semantic_drift: min_shift`` by default (see docs/statistics.md, "Meaning")."""


@dataclass(frozen=True)
class SemanticDriftSpec:
    """The suite's ``semantic_drift:``: compare the meaning of today's answers with the pooled
    baseline answers, in the space of ``embedding_model``."""

    embedding_model: str
    api_base: str | None = None
    apply_to_tags: tuple[str, ...] = ()
    """Only prompts carrying one of these tags; empty: every prompt."""
    min_shift: float = DEFAULT_MIN_SHIFT
    """The smallest centroid shift (cosine scale) that counts as a change of meaning."""

    def applies_to(self, prompt: CanaryPrompt) -> bool:
        return not self.apply_to_tags or bool(set(self.apply_to_tags) & set(prompt.tags))

    @property
    def params(self) -> dict[str, Any]:
        """The embedding model's call parameters."""
        return {"api_base": self.api_base} if self.api_base else {}


DEFAULT_CHECK_VOTES = 15
"""``judge: check_votes`` by default: how many times each canary is asked (distinct seeds). The
canaries measure the judge's error rates (:mod:`promptcanary.core.run.judge_noise`): 30 votes a
kind (4 canaries) keep a judge flipping one verdict in five under the tolerance in about 95% of
runs."""


@dataclass(frozen=True)
class JudgeCheck:
    """One of ``judge_checks:``: a fixed case whose verdict the judge must keep giving."""

    prompt: str
    answer: str
    expected: Literal["pass", "fail"]
    rubric: str
    context: str | None = None


@dataclass(frozen=True)
class JudgeSpec:
    """The suite's ``judge:`` block: the defaults of its ``llm_judge`` probes, the request cap and
    the judge's own canaries (``judge_checks:``)."""

    model: str
    api_base: str | None = None
    judge_samples: int = 1
    max_requests: int | None = None
    """Judge requests one run may send (the action's ``max-judge-requests`` overrides it)."""
    tolerance: float = DEFAULT_JUDGE_TOLERANCE
    check_votes: int = DEFAULT_CHECK_VOTES
    structured: Literal["json_schema", "json_object", "off"] = "json_schema"
    """How the judge's reply is asked for (``json_object`` for servers without JSON schema)."""
    checks: tuple[JudgeCheck, ...] = ()


class SuiteError(ValueError):
    """A suite that cannot be built (duplicate ids or keys, no prompts, no probes)."""


class SuiteSpec:
    """A collection of prompts and the probes that score their answers.

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
        prompt_rows: dict[str, tuple[str, int]] | None = None,
        semantic_drift: SemanticDriftSpec | None = None,
        judge: JudgeSpec | None = None,
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
        self.prompt_rows = dict(prompt_rows or {})
        """prompt id → (dataset file as the suite names it, line) of a templated prompt's row."""
        self.semantic_drift = semantic_drift
        self.judge = judge
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
        shared, own = self._binding_index()
        found = [(n, b) for n, b in shared if b.applies_to(prompt)] + own.get(prompt.id, [])
        return [b for _, b in sorted(found, key=lambda item: item[0])]

    def _binding_index(
        self,
    ) -> tuple[list[tuple[int, ProbeBinding]], dict[str, list[tuple[int, ProbeBinding]]]]:
        """Suite-wide entries and each prompt's own, with their places in ``bindings``; a
        suite of thousands of templated rows would be quadratic without it. Rebuilt when
        ``bindings`` is replaced or grows (it is a public list)."""
        stamp = (id(self.bindings), len(self.bindings))
        cached = getattr(self, "_index", None)
        if cached is None or cached[0] != stamp:
            shared: list[tuple[int, ProbeBinding]] = []
            own: dict[str, list[tuple[int, ProbeBinding]]] = {}
            for n, binding in enumerate(self.bindings):
                if binding.prompt_id is None:
                    shared.append((n, binding))
                else:
                    own.setdefault(binding.prompt_id, []).append((n, binding))
            cached = (stamp, shared, own)
            self._index = cached
        return cached[1], cached[2]

    def compares_meaning(self, prompt: CanaryPrompt) -> bool:
        """Whether ``semantic_drift:`` compares the meaning of ``prompt``'s answers."""
        return self.semantic_drift is not None and self.semantic_drift.applies_to(prompt)

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
            p.model_dump(mode="json", exclude=_unsent(p, "description", "metadata"))
            for p in self.prompts
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
                        mode="json",
                        include={"text", "tools", "response_format", "messages"},
                        exclude=_unsent(p),
                    ),
                    "system": self.system_prompt_for(p),
                },
                8,
            )
            for p in self.prompts
        }

    def __repr__(self) -> str:
        counts = f"prompts={len(self.prompts)}, probes={len(self.bindings)}"
        return f"{type(self).__name__}(name={self.name!r}, {counts})"
