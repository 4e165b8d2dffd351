"""The suite YAML format: validation, building a suite, and rendering one back to YAML.

Loading is two steps. :mod:`promptcanary.core.config.source` reads the file safely into plain values
plus the line and column of every key and value. This module validates those values with pydantic
(``extra="forbid"``) and builds each probe by calling its class with the entry's parameters, so
the probe's own constructor checks its values. Every problem is one :class:`SuiteConfigError`
carrying file, line, column and a hint; its message names the valid choices.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from promptcanary.core.config.expand import PromptDraft, Shape, dataset_display, expand
from promptcanary.core.config.source import (
    MAX_ALIAS_EXPANSION,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    Loc,
    SourceMap,
    SuiteConfigError,
    SuiteFileNotFoundError,
    parse_yaml,
    read_suite_file,
)
from promptcanary.core.messages import ChatMessage, conversation_problem
from promptcanary.core.models import (
    DEFAULT_JUDGE_TOLERANCE,
    MAX_TOKENS_CAP,
    CanaryPrompt,
    default_prompt_id,
)
from promptcanary.core.probes import BaseProbe, ProbeRegistry
from promptcanary.core.probes.llm_judge import MAX_JUDGE_SAMPLES, LLMJudgeProbe
from promptcanary.core.probes.registry import ProbeClass, registry_or_active
from promptcanary.core.run.options import option_rule, samples_problem
from promptcanary.core.sampling.sequential import MAX_SAMPLES_CAP
from promptcanary.core.spec import (
    DEFAULT_CHECK_VOTES,
    DEFAULT_MIN_SHIFT,
    MODEL_KEYS,
    JudgeCheck,
    JudgeSpec,
    ModelSpec,
    ProbeBinding,
    RunDefaults,
    SemanticDriftSpec,
    SuiteError,
    SuiteSpec,
    probe_key_for,
)

S = TypeVar("S", bound=SuiteSpec)

__all__ = [
    "APPLY_TO_KEYS",
    "DATASET_KEYS",
    "DEFAULTS_KEYS",
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "PROBE_ENTRY_KEYS",
    "PROMPT_KEYS",
    "SEMANTIC_DRIFT_KEYS",
    "SUITE_KEYS",
    "SourceMap",
    "SuiteConfigError",
    "SuiteFileNotFoundError",
    "load_suite",
    "suite_from_dict",
    "suite_from_text",
    "suite_to_yaml",
    "valid_keys",
]

# ── document schema ──────────────────────────────────────────────────────────


class _Doc(BaseModel):
    # Strict: YAML already gives typed values; "0.5" quoted where a number belongs is a mistake.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _DefaultsDoc(_Doc):
    temperature: float | None = Field(default=None, ge=0, le=2)  # ProviderConfig's range
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_CAP)
    seed: int | None = None
    samples: int | str | None = None
    min_samples: int | None = Field(default=None, ge=1, le=MAX_SAMPLES_CAP)
    max_samples: int | None = Field(default=None, ge=1, le=MAX_SAMPLES_CAP)
    baseline_samples: int | None = Field(default=None, ge=1, le=MAX_SAMPLES_CAP)

    @field_validator("samples")
    @classmethod
    def _auto_or_count(cls, value: int | str | None) -> int | str | None:
        problem = None if value is None else samples_problem(value)
        if problem is None:
            return value
        raise ValueError(problem)

    @model_validator(mode="after")
    def _bounds_in_order(self) -> _DefaultsDoc:
        low, high = self.min_samples, self.max_samples
        if low is not None and high is not None and low > high:
            raise ValueError(f"min_samples ({low}) is above max_samples ({high})")
        return self


class _ApplyToDoc(_Doc):
    tags: list[str] = Field(min_length=1)


class _DatasetDoc(_Doc):
    path: str = Field(min_length=1)
    limit: int | None = Field(default=None, ge=1)
    sample: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _path_alone(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value


class _PromptDoc(_Doc):
    id: str | None = Field(default=None, min_length=1)
    text: str | None = Field(default=None, min_length=1)
    messages: list[dict[str, Any]] | None = Field(default=None, min_length=1)
    vars: list[dict[str, Any]] | None = Field(default=None, min_length=1)
    dataset: _DatasetDoc | None = None
    row_key: str | None = Field(default=None, min_length=1)
    description: str = ""
    expected_keywords: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    system_prompt: str | None = None
    probes: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    response_format: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tools")
    @classmethod
    def _openai_tools(cls, tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for n, tool in enumerate(tools or [], 1):
            function = tool.get("function")
            if tool.get("type") != "function" or not isinstance(function, dict):
                raise ValueError(
                    f"tool {n} must be an OpenAI tool schema: "
                    "{type: function, function: {name: ..., parameters: {...}}}"
                )
            if not isinstance(function.get("name"), str) or not function["name"]:
                raise ValueError(f"tool {n} needs a 'function.name'")
        return tools

    @field_validator("response_format")
    @classmethod
    def _has_type(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and not isinstance(value.get("type"), str):
            raise ValueError("must have a 'type', e.g. {type: json_object}")
        return value

    @model_validator(mode="after")
    def _one_shape(self) -> _PromptDoc:
        if (self.text is None) == (self.messages is None):
            if self.text is None:
                raise PydanticCustomError("missing_text", "no text")
            raise ValueError("give `text` or `messages` (a conversation), not both")
        if self.vars is not None and self.dataset is not None:
            raise ValueError("give the template's rows as `vars` or as a `dataset`, not both")
        if self.row_key is not None and self.shape is None:
            raise ValueError("`row_key` names a column of `vars` or `dataset` rows: add them")
        return self

    @property
    def shape(self) -> Shape | None:
        if self.vars is not None:
            return Shape(rows=self.vars, row_key=self.row_key)
        if self.dataset is None:
            return None
        data = self.dataset
        return Shape(None, data.path, data.limit, data.sample, self.row_key)


class _JudgeDoc(_Doc):
    model: str = Field(min_length=1)
    api_base: str | None = None
    judge_samples: int = Field(default=1, ge=1, le=MAX_JUDGE_SAMPLES)
    max_requests: int | None = Field(default=None, ge=1)
    tolerance: float = Field(default=DEFAULT_JUDGE_TOLERANCE, ge=0, le=1)
    check_votes: int = Field(default=DEFAULT_CHECK_VOTES, ge=1, le=MAX_JUDGE_SAMPLES)
    structured: Literal["json_schema", "json_object", "off"] = "json_schema"


class _JudgeCheckDoc(_Doc):
    prompt: str = Field(min_length=1)
    answer: str
    expected: Literal["pass", "fail"]
    rubric: str = Field(min_length=1)
    context: str | None = None


class _SemanticDriftDoc(_Doc):
    embedding_model: str = Field(min_length=1)
    api_base: str | None = Field(default=None, min_length=1)
    apply_to: _ApplyToDoc | None = None
    min_shift: float = Field(default=DEFAULT_MIN_SHIFT, gt=0, le=1)


class _SuiteDoc(_Doc):
    name: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    system_prompt: str | None = None
    models: list[Any] = Field(default_factory=list)
    defaults: _DefaultsDoc | None = None
    semantic_drift: _SemanticDriftDoc | None = None
    probes: list[dict[str, Any]] = Field(default_factory=list)
    prompts: list[_PromptDoc] = Field(default_factory=list)
    judge: _JudgeDoc | None = None
    judge_checks: list[_JudgeCheckDoc] = Field(default_factory=list)


SUITE_KEYS: tuple[str, ...] = tuple(_SuiteDoc.model_fields)
PROMPT_KEYS: tuple[str, ...] = tuple(_PromptDoc.model_fields)
DEFAULTS_KEYS: tuple[str, ...] = tuple(_DefaultsDoc.model_fields)
DATASET_KEYS: tuple[str, ...] = tuple(_DatasetDoc.model_fields)
APPLY_TO_KEYS: tuple[str, ...] = tuple(_ApplyToDoc.model_fields)
SEMANTIC_DRIFT_KEYS: tuple[str, ...] = tuple(_SemanticDriftDoc.model_fields)
PROBE_ENTRY_KEYS: tuple[str, ...] = ("type", "id", "apply_to")
"""Reserved keys of a probe entry; every other key is a constructor parameter of the probe."""


def valid_keys() -> dict[str, tuple[str, ...]]:
    """The keys each part of a suite file accepts (for docs and ``init``)."""
    return {
        "suite": SUITE_KEYS,
        "prompt": PROMPT_KEYS,
        "defaults": DEFAULTS_KEYS,
        "probe entry": PROBE_ENTRY_KEYS,
        "apply_to": APPLY_TO_KEYS,
        "dataset": DATASET_KEYS,
        "model entry": MODEL_KEYS,
        "semantic_drift": SEMANTIC_DRIFT_KEYS,
    }


def _suggest(word: str, choices: Any) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


# ── step 3: validate and build ───────────────────────────────────────────────

_TYPE_NAMES = {
    "string_type": "a string",
    "float_type": "a number",
    "finite_number": "a finite number",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


_BOUNDS = {
    "greater_than_equal": "at least {ge}",
    "greater_than": "greater than {gt}",
    "less_than_equal": "at most {le}",
    "less_than": "less than {lt}",
    "string_too_short": "a non-empty string",
    "too_short": "a non-empty list",
}


def _got(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "nothing (null)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(loc: Loc) -> str:
    """A readable name for a place: "the suite", "prompt 2", "'apply_to' of probe entry 1"."""
    if not loc:
        return "the suite"
    last = loc[-1]
    if isinstance(last, str):
        return repr(last) if len(loc) == 1 else f"{last!r} of {_where(loc[:-1])}"
    parent = loc[-2] if len(loc) >= 2 else ""
    names = {
        "prompts": "prompt",
        "probes": "probe entry",
        "models": "model entry",
        "judge_checks": "judge check",
    }
    text = f"{names.get(str(parent), f'{parent!r} item')} {last + 1}"
    return text if len(loc) <= 2 else f"{text} of {_where(loc[:-2])}"


def _keys_of(owner: Loc) -> tuple[str, ...]:
    names = tuple(part for part in owner if isinstance(part, str))
    known = {
        (): SUITE_KEYS,
        ("prompts",): PROMPT_KEYS,
        ("defaults",): DEFAULTS_KEYS,
        ("probes", "apply_to"): APPLY_TO_KEYS,
        ("prompts", "dataset"): DATASET_KEYS,
        ("judge",): tuple(_JudgeDoc.model_fields),
        ("judge_checks",): tuple(_JudgeCheckDoc.model_fields),
        ("semantic_drift",): SEMANTIC_DRIFT_KEYS,
        ("semantic_drift", "apply_to"): APPLY_TO_KEYS,
    }
    return known.get(names, ())


def _validation_error(
    exc: ValidationError, context: SourceMap, prefix: Loc = ()
) -> SuiteConfigError:
    """The earliest problem in the document, in our words (``prefix``: where ``exc`` began)."""

    def position(error: Any) -> tuple[int, bool, int]:
        # On one line, an unknown key says more than the missing key it was probably meant as.
        line, column = context.position((*prefix, *error["loc"]), key=True)
        return line or 0, error["type"] == "missing", column or 0

    errors = exc.errors()
    # `txt: …` in a prompt is both an unknown key and a missing 'text': the unknown key, with
    # its "did you mean", is the cause, wherever the mapping's first line puts the other.
    unknown_in = {tuple(e["loc"][:-1]) for e in errors if e["type"] == "extra_forbidden"}
    errors = [e for e in errors if e["type"] != "missing" or tuple(e["loc"][:-1]) not in unknown_in]
    err = min(errors, key=position)
    loc: Loc = (*prefix, *err["loc"])
    kind = err["type"]
    name = next((p for p in reversed(loc) if isinstance(p, str)), "value")
    subject = f"{name!r}" if not loc or isinstance(loc[-1], str) else f"{name!r} item {loc[-1] + 1}"
    if kind == "extra_forbidden":
        key, owner = str(loc[-1]), loc[:-1]
        valid = _keys_of(owner)
        return context.error(
            f"unknown key {key!r} in {_where(owner)}{_suggest(key, valid)}",
            loc,
            key=True,
            hint=f"valid keys: {', '.join(valid)}" if valid else None,
        )
    if kind == "missing_text":
        return context.error(
            f"missing required key 'text' (the prompt sent to the model) in {_where(loc)}",
            loc,
            hint="or give a conversation as `messages:`",
        )
    if kind == "missing":
        what = "'text' (the prompt sent to the model)" if name == "text" else repr(name)
        return context.error(f"missing required key {what} in {_where(loc[:-1])}", loc[:-1])
    if kind in _TYPE_NAMES or kind in _BOUNDS:
        hint = None
        if kind == "string_type" and isinstance(err["input"], int | float | bool):
            hint = f'quote it: "{err["input"]}"'
        elif kind == "dict_type" and loc[-2:-1] == ("probes",):
            hint = "a probe entry is a mapping: `- type: json_validity`"
        rule = _TYPE_NAMES.get(kind) or _BOUNDS[kind].format(**err.get("ctx", {}))
        return context.error(f"{subject} must be {rule}, got {_got(err['input'])}", loc, hint=hint)
    message = str(err["msg"]).removeprefix("Value error, ")
    return context.error(f"{subject} in {_where(loc[:-1])}: {message}", loc)


@dataclass
class _ProbeEntry:
    binding: ProbeBinding
    loc: Loc


def _build_probe(
    entry: dict[str, Any],
    loc: Loc,
    context: SourceMap,
    registry: ProbeRegistry,
    *,
    prompt_id: str | None,
    judge: JudgeSpec | None = None,
) -> _ProbeEntry:
    probe_type = entry.get("type")
    if "type" not in entry:
        raise context.error("probe entry has no 'type'", loc, hint="e.g. `- type: json_validity`")
    if not isinstance(probe_type, str):
        raise context.error(f"'type' must be a string, got {_got(probe_type)}", (*loc, "type"))
    if probe_type not in registry:
        raise context.error(
            f"unknown probe type {probe_type!r}{_suggest(probe_type, registry.names) or '.'} "
            f"Valid types: {', '.join(registry.names)}",
            loc,
            hint="a custom probe registers when its module is loaded: --probe-module (CLI), "
            "the probe-modules input (action)",
        )
    explicit_id = entry.get("id")
    if "id" in entry and (not isinstance(explicit_id, str) or not explicit_id):
        raise context.error(
            f"a probe 'id' must be a non-empty string, got {_got(explicit_id)}", (*loc, "id")
        )
    tags = _apply_to_tags(entry, loc, context, per_prompt=prompt_id is not None)
    params = {k: v for k, v in entry.items() if k not in PROBE_ENTRY_KEYS}
    if probe_type == LLMJudgeProbe.probe_id:
        # The suite's `judge:` block is the default of every judge probe's own keys; without
        # one the probe's error names judge_model, the key that is missing.
        params.setdefault("judge_model", judge.model if judge else None)
        if judge is not None:
            params.setdefault("api_base", judge.api_base)
            params.setdefault("judge_samples", judge.judge_samples)
    probe = _construct(registry.get(probe_type), probe_type, params, loc, context)
    key = probe_key_for(probe, explicit_id)
    binding = ProbeBinding(probe, key, prompt_id, tags, context.line(loc))
    return _ProbeEntry(binding, loc)


def _apply_to_tags(
    entry: dict[str, Any], loc: Loc, context: SourceMap, *, per_prompt: bool
) -> tuple[str, ...]:
    if "apply_to" not in entry:
        return ()
    if per_prompt:
        raise context.error(
            "'apply_to' is only allowed on suite-wide probes",
            (*loc, "apply_to"),
            key=True,
            hint="a probe listed under a prompt applies to that prompt only",
        )
    try:
        return tuple(_ApplyToDoc.model_validate(entry["apply_to"]).tags)
    except ValidationError as exc:
        raise _validation_error(exc, context, (*loc, "apply_to")) from None


@functools.lru_cache(maxsize=256)  # a template over 10,000 rows builds its probe 10,000 times
def _parameters(cls: type[ProbeClass]) -> dict[str, inspect.Parameter] | None:
    """The keyword parameters of the probe's constructor; ``None`` when any keyword is accepted
    (callers only read the mapping: it is shared)."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    params = signature.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {name: p for name, p in params.items() if p.kind in keyword}


def _construct(
    cls: type[ProbeClass], probe_type: str, params: dict[str, Any], loc: Loc, context: SourceMap
) -> BaseProbe:
    accepted = _parameters(cls)
    if accepted is not None:
        listing = ", ".join(accepted) if accepted else "none: it takes no parameters"
        for name in params:
            if name not in accepted:
                raise context.error(
                    f"unknown parameter {name!r} for probe {probe_type!r}"
                    f"{_suggest(name, accepted)}",
                    (*loc, name),
                    key=True,
                    hint=f"valid parameters: {listing}",
                )
        for name, param in accepted.items():
            if param.default is inspect.Parameter.empty and name not in params:
                raise context.error(
                    f"probe {probe_type!r} needs the parameter {name!r}",
                    loc,
                    hint=f"valid parameters: {listing}",
                )
    try:
        probe = cls(**params)
    except (TypeError, ValueError) as exc:
        named = [p for p in params if re.search(rf"\b{re.escape(p)}\b", str(exc))]
        if not named and len(params) == 1:
            named = list(params)
        what = f"parameter {named[0]!r}" if named else "parameters"
        raise context.error(f"bad {what} for probe {probe_type!r}: {exc}", loc) from None
    except Exception as exc:  # a custom probe's constructor is user code: it may raise anything
        raise context.error(
            f"probe {probe_type!r} could not be created: {type(exc).__name__}: {exc}", loc
        ) from None
    if not isinstance(probe, BaseProbe):  # the registry holds classes, not only BaseProbes
        raise context.error(f"probe type {probe_type!r} is not a BaseProbe subclass", loc)
    return probe


def _models(raw: list[Any], context: SourceMap) -> list[ModelSpec]:
    specs = []
    for i, item in enumerate(raw):
        loc: Loc = ("models", i)
        if isinstance(item, str) and item:
            specs.append(ModelSpec(item))
        elif isinstance(item, dict) and isinstance(item.get("model"), str) and item["model"]:
            specs.append(ModelSpec(item["model"], _model_params(item, loc, context)))
        else:
            raise context.error(
                f"model entry {i + 1} must be a LiteLLM model id or a mapping with 'model', "
                f"got {_got(item)}",
                loc,
                hint="e.g. `- openai/gpt-4o-mini` or `- {model: openai/gpt-4o, api_base: ...}`",
            )
    return specs


def _model_params(item: dict[str, Any], loc: Loc, context: SourceMap) -> dict[str, Any]:
    """A model mapping's parameters: its known keys, and those under ``litellm:`` as they are
    (LiteLLM's own names: ``drop_params``, ``top_p``, ``aws_region_name``, …)."""
    for key in item:
        if key not in MODEL_KEYS:
            raise context.error(
                f"unknown key {key!r} in model entry {item['model']!r}"
                + _suggest(str(key), MODEL_KEYS),
                (*loc, key),
                key=True,
                hint=f"a model entry takes {', '.join(MODEL_KEYS)}; put any other LiteLLM "
                "parameter under `litellm:`, e.g. `litellm: {drop_params: true}`",
            )
    for key in ("rpm", "tpm"):
        value = item.get(key)
        if key in item and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise context.error(
                f"{key!r} of model entry {item['model']!r} must be a whole number of "
                f"{'requests' if key == 'rpm' else 'tokens'} per minute (1 or more), "
                f"got {_got(value)}",
                (*loc, key),
                hint="the provider's limit for this key, e.g. `rpm: 500`; leave it out to "
                "learn it from the answers' rate-limit headers",
            )
    tokens = item.get("max_tokens")
    if "max_tokens" in item and not (
        isinstance(tokens, int) and not isinstance(tokens, bool) and 1 <= tokens <= MAX_TOKENS_CAP
    ):
        raise context.error(
            f"'max_tokens' of model entry {item['model']!r} {option_rule('max_tokens')}, "
            f"got {_got(tokens)}",
            (*loc, "max_tokens"),
        )
    params = {k: v for k, v in item.items() if k not in ("model", "litellm")}
    passthrough = item.get("litellm", {})
    if not isinstance(passthrough, dict):
        raise context.error(
            f"`litellm:` of model entry {item['model']!r} must be a mapping of LiteLLM "
            f"parameters, got {_got(passthrough)}",
            (*loc, "litellm"),
        )
    for key in passthrough:
        if key in params or key == "model":
            raise context.error(
                f"{key!r} is set twice in model entry {item['model']!r}: keep the one outside "
                "`litellm:`",
                (*loc, "litellm", key),
                key=True,
            )
    return {**params, **passthrough}


def _iter_probe_entries(
    doc: _SuiteDoc, drafts: list[PromptDraft], prompts: list[CanaryPrompt]
) -> Iterator[tuple[Loc, Any]]:
    for j, entry in enumerate(doc.probes):
        yield ("probes", j), (entry, None)
    for draft, prompt in zip(drafts, prompts, strict=True):
        for j, entry in enumerate(draft.probes):
            yield (*draft.entry, "probes", j), (entry, prompt.id)


def _document(data: Any, context: SourceMap) -> _SuiteDoc:
    """The parsed YAML as a validated document (the shape of every key)."""
    if data is None:
        raise context.error("empty suite: the file has no content", hint="run `promptcanary init`")
    if not isinstance(data, dict):
        raise context.error(
            f"the top level of a suite must be a mapping (name:, probes:, prompts:), "
            f"got {_got(data)}"
        )
    try:
        return _SuiteDoc.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc, context) from None


def _build(
    data: Any, context: SourceMap, registry: ProbeRegistry | None, suite_class: type[S]
) -> S:
    doc = _document(data, context)
    if not doc.prompts:
        raise context.error(
            "empty suite: no prompts", ("prompts",), key=True, hint="add a `prompts:` list"
        )
    drafts = _drafts(doc, context)
    prompts, prompt_lines = _prompts(drafts, context)
    judge = _judge(doc, context)
    entries = [
        _build_probe(
            entry,
            loc,
            context,
            registry_or_active(registry),
            prompt_id=prompt_id,
            judge=judge,
        )
        for loc, (entry, prompt_id) in _iter_probe_entries(doc, drafts, prompts)
    ]
    if not entries:
        raise context.error(
            "empty suite: no probes in the suite or any prompt",
            ("probes",),
            key=True,
            hint="add e.g. `probes: [{type: json_validity}]`",
        )
    _check_probe_keys(prompts, entries, context)
    models = _models(doc.models, context)
    defaults = RunDefaults(**doc.defaults.model_dump()) if doc.defaults else None
    meaning = _semantic_drift(doc.semantic_drift)
    try:
        suite = suite_class(
            doc.name,
            prompts,
            [],
            description=doc.description,
            tags=list(doc.tags),
            default_system_prompt=doc.system_prompt,
            bindings=[e.binding for e in entries],
            models=models,
            defaults=defaults,
            source_file=context.source,
            prompt_lines=prompt_lines,
            prompt_rows=_prompt_rows(drafts, prompts),
            judge=judge,
            semantic_drift=meaning,
        )
    except SuiteError as exc:  # our own checks above should have caught it with a line
        raise context.error(str(exc)) from None
    # The spec's `suite.probes`: the probes run on every response (suite-wide, no tag filter).
    suite.probes = [
        e.binding.probe
        for e in entries
        if e.binding.prompt_id is None and not e.binding.apply_to_tags
    ]
    return suite


def _judge(doc: _SuiteDoc, context: SourceMap) -> JudgeSpec | None:
    """The `judge:` block with its canaries (`judge_checks:` needs the block's model)."""
    if doc.judge is None:
        if doc.judge_checks:
            raise context.error(
                "'judge_checks' needs a `judge:` block naming the judge model",
                ("judge_checks",),
                key=True,
                hint="e.g. `judge: {model: openai/gpt-4o-mini}`",
            )
        return None
    checks = tuple(JudgeCheck(**c.model_dump()) for c in doc.judge_checks)
    return JudgeSpec(**doc.judge.model_dump(), checks=checks)


def _drafts(doc: _SuiteDoc, context: SourceMap) -> list[PromptDraft]:
    """Each prompt entry's prompts: itself, or one per row of a template."""
    return [
        draft
        for i, entry in enumerate(doc.prompts)
        for draft in expand(
            _prompt_fields(entry), entry.probes, entry.shape, ("prompts", i), context
        )
    ]


def _prompt_rows(
    drafts: list[PromptDraft], prompts: list[CanaryPrompt]
) -> dict[str, tuple[str, int]]:
    return {
        p.id: (d.row_file, d.row_line or 1)
        for d, p in zip(drafts, prompts, strict=True)
        if d.row_file is not None
    }


def _prompt_fields(entry: _PromptDoc) -> dict[str, Any]:
    """A prompt entry's CanaryPrompt fields (its probes and rows apart)."""
    return entry.model_dump(
        exclude={"probes", "vars", "dataset", "row_key"}, exclude_none=True, exclude_unset=True
    )


def _semantic_drift(doc: _SemanticDriftDoc | None) -> SemanticDriftSpec | None:
    if doc is None:
        return None
    return SemanticDriftSpec(
        embedding_model=doc.embedding_model.strip(),
        api_base=doc.api_base,
        apply_to_tags=tuple(doc.apply_to.tags) if doc.apply_to else (),
        min_shift=doc.min_shift,
    )


def _prompts(
    drafts: list[PromptDraft], context: SourceMap
) -> tuple[list[CanaryPrompt], dict[str, int]]:
    prompts: list[CanaryPrompt] = []
    lines: dict[str, int] = {}
    first_seen: dict[str, PromptDraft] = {}
    for draft in drafts:
        prompt = _prompt(draft, context)
        if prompt.id in first_seen:
            raise _duplicate(prompt.id, first_seen[prompt.id], draft, context)
        first_seen[prompt.id] = draft
        line = context.line(draft.loc)
        if line is not None:
            lines[prompt.id] = line
        prompts.append(prompt)
    return prompts, lines


def _prompt(draft: PromptDraft, context: SourceMap) -> CanaryPrompt:
    try:
        return CanaryPrompt(**draft.fields)
    except ValidationError as exc:
        raise _prompt_error(exc, draft, context) from None


def _prompt_error(exc: ValidationError, draft: PromptDraft, context: SourceMap) -> SuiteConfigError:
    err = exc.errors()[0]
    if err["loc"]:
        found = _validation_error(exc, context, draft.entry)
    else:  # the conversation as a whole: its turns cannot be answered
        message = str(err["msg"]).removeprefix("Value error, ")
        found = context.error(f"{_where(draft.entry)}: {message}", _turn_at_fault(draft))
    if draft.row_file is None:
        return found
    row = f" (the row at {dataset_display(context.source, draft.row_file)}:{draft.row_line})"
    return SuiteConfigError(
        found.message + row, file=found.file, line=found.line, column=found.column, hint=found.hint
    )


def _turn_at_fault(draft: PromptDraft) -> Loc:
    """The conversation turn that a conversation-wide problem is about (else its list)."""
    turns = [ChatMessage.model_validate(m) for m in draft.fields.get("messages") or []]
    skipped = 1 if turns and turns[0].role == "system" else 0
    problem = conversation_problem(turns[skipped:])
    at: Loc = (*draft.entry, "messages")
    return at if problem is None else (*at, problem[0] + skipped)


def _duplicate(
    prompt_id: str, first: PromptDraft, again: PromptDraft, context: SourceMap
) -> SuiteConfigError:
    if again.row_file is not None and first.row_file == again.row_file:
        return SuiteConfigError(
            f"rows on lines {first.row_line} and {again.row_line} give the same prompt id "
            f"{prompt_id!r}: drop the repeated row, or give them distinct row_key values",
            file=dataset_display(context.source, again.row_file),
            line=again.row_line,
        )
    first_line = context.line(first.loc)
    at = f" (first defined at line {first_line})" if first_line else ""
    return context.error(
        f"duplicate prompt id {prompt_id!r}{at}", again.loc, hint="give each prompt a unique `id:`"
    )


def _check_probe_keys(
    prompts: list[CanaryPrompt], entries: list[_ProbeEntry], context: SourceMap
) -> None:
    shared = [e for e in entries if e.binding.prompt_id is None]
    own: dict[str, list[_ProbeEntry]] = {}
    for entry in entries:
        if entry.binding.prompt_id is not None:
            own.setdefault(entry.binding.prompt_id, []).append(entry)
    for prompt in prompts:
        seen: dict[str, _ProbeEntry] = {}
        for entry in [*shared, *own.get(prompt.id, [])]:
            binding = entry.binding
            if not binding.applies_to(prompt):
                continue
            if binding.key in seen:
                first = seen[binding.key].binding.line
                lines = f" (lines {first} and {binding.line})" if binding.line else ""
                raise context.error(
                    f"duplicate probe key {binding.key!r} on prompt {prompt.id!r}{lines}: "
                    "give one entry an explicit id:",
                    entry.loc,
                    hint="each result needs its own identity for baseline comparisons",
                )
            seen[binding.key] = entry


# ── public entry points ──────────────────────────────────────────────────────


@overload
def load_suite(path: str | Path, *, registry: ProbeRegistry | None = None) -> SuiteSpec: ...
@overload
def load_suite(
    path: str | Path, *, registry: ProbeRegistry | None = None, suite_class: type[S]
) -> S: ...
def load_suite(
    path: str | Path,
    *,
    registry: ProbeRegistry | None = None,
    suite_class: type[SuiteSpec] = SuiteSpec,
) -> SuiteSpec:
    """Read, validate and build the suite in ``path``; every problem is a SuiteConfigError.

    Probe ``type:`` names resolve in ``registry`` (default: the active registry); the suite is
    an instance of ``suite_class`` (:class:`~promptcanary.core.suite.CanarySuite` passes itself).
    """
    source = str(path)
    text = read_suite_file(Path(path), source)
    data, context = parse_yaml(text, source)
    return _build(data, context, registry, suite_class)


@overload
def suite_from_text(
    text: str, *, source: str = "<string>", registry: ProbeRegistry | None = None
) -> SuiteSpec: ...
@overload
def suite_from_text(
    text: str,
    *,
    source: str = "<string>",
    registry: ProbeRegistry | None = None,
    suite_class: type[S],
) -> S: ...
def suite_from_text(
    text: str,
    *,
    source: str = "<string>",
    registry: ProbeRegistry | None = None,
    suite_class: type[SuiteSpec] = SuiteSpec,
) -> SuiteSpec:
    """Build a suite from YAML text; ``source`` names it in error messages."""
    data, context = parse_yaml(text, source)
    return _build(data, context, registry, suite_class)


def suite_from_dict(
    config: Any, *, source: str = "<dict>", registry: ProbeRegistry | None = None
) -> SuiteSpec:
    """Build a suite from already-parsed data (no line numbers are known)."""
    return _build(config, SourceMap(source), registry, SuiteSpec)


def _plain(value: Any) -> Any:
    """Parameter values as YAML-safe plain data (tuples → lists, enums → values)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, re.Pattern):
        return value.pattern
    enum_value = getattr(value, "value", None)
    if enum_value is not None and not isinstance(value, str | int | float | bool):
        return _plain(enum_value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _probe_entry(binding: ProbeBinding, judge: JudgeSpec | None = None) -> dict[str, Any]:
    probe = binding.probe
    entry: dict[str, Any] = {"type": probe.probe_id}
    if binding.key != probe_key_for(probe):
        entry["id"] = binding.key
    accepted = _parameters(type(probe))
    for name, value in probe.params().items():
        # params() is the instance's public state; only constructor keywords can be written back.
        if accepted is None or (name in accepted and not _is_default(accepted[name], value)):
            entry[name] = _plain(value)
    if isinstance(probe, LLMJudgeProbe):
        entry.update(_judge_probe_keys(probe, judge))
    if binding.apply_to_tags:
        entry["apply_to"] = {"tags": list(binding.apply_to_tags)}
    return entry


def _judge_probe_keys(probe: LLMJudgeProbe, judge: JudgeSpec | None) -> dict[str, Any]:
    """The judge keys a probe must spell out: those the suite's `judge:` block would set
    otherwise (they are left out of ``params()``, which keys the probe)."""
    inherited = (judge.model, judge.api_base, judge.judge_samples) if judge else (None, None, 1)
    own = (probe.judge_model, probe.api_base, probe.judge_samples)
    names = ("judge_model", "api_base", "judge_samples")
    pairs = zip(names, own, inherited, strict=True)
    return {name: mine for name, mine, theirs in pairs if mine != theirs}


def _judge_entry(judge: JudgeSpec) -> dict[str, Any]:
    """The `judge:` block, without the keys at their defaults."""
    default = JudgeSpec(model=judge.model)
    entry: dict[str, Any] = {"model": judge.model}
    for name in ("api_base", "judge_samples", "max_requests", "tolerance", "check_votes"):
        if getattr(judge, name) != getattr(default, name):
            entry[name] = getattr(judge, name)
    if judge.structured != default.structured:
        entry["structured"] = judge.structured
    return entry


def _judge_check_entry(check: JudgeCheck) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "prompt": check.prompt,
        "answer": check.answer,
        "expected": check.expected,
        "rubric": check.rubric,
    }
    if check.context is not None:
        entry["context"] = check.context
    return entry


def _is_default(param: inspect.Parameter, value: Any) -> bool:
    """True when leaving ``value`` out rebuilds the same probe (``1`` is not ``True`` here)."""
    default = param.default
    return (
        default is not inspect.Parameter.empty
        and type(default) is type(value)
        and (default == value)
    )


def suite_to_yaml(suite: SuiteSpec) -> str:
    """Render ``suite`` as YAML that :func:`load_suite` reads back into an equivalent suite."""
    data: dict[str, Any] = {
        "name": suite.name,
        "description": suite.description or "",
        "tags": list(suite.tags),
    }
    if suite.default_system_prompt:
        data["system_prompt"] = suite.default_system_prompt
    if suite.models:
        data["models"] = [
            {"model": m.model, **_plain(m.params)} if m.params else m.model for m in suite.models
        ]
    defaults = {k: v for k, v in vars(suite.defaults).items() if v is not None}
    if defaults:
        data["defaults"] = defaults
    if suite.semantic_drift is not None:
        data["semantic_drift"] = _semantic_drift_entry(suite.semantic_drift)
    if suite.judge is not None:
        data["judge"] = _judge_entry(suite.judge)
        if suite.judge.checks:
            data["judge_checks"] = [_judge_check_entry(c) for c in suite.judge.checks]
    data["probes"] = [_probe_entry(b, suite.judge) for b in suite.bindings if b.prompt_id is None]
    data["prompts"] = [_prompt_entry(suite, p) for p in suite.prompts]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _semantic_drift_entry(spec: SemanticDriftSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {"embedding_model": spec.embedding_model}
    if spec.api_base:
        entry["api_base"] = spec.api_base
    if spec.apply_to_tags:
        entry["apply_to"] = {"tags": list(spec.apply_to_tags)}
    entry["min_shift"] = spec.min_shift
    return entry


def _prompt_entry(suite: SuiteSpec, prompt: CanaryPrompt) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if prompt.messages is not None:  # a conversation: its turns, its id when not the default
        turns = [m.model_dump(mode="json", exclude_none=True) for m in prompt.messages]
        if prompt.id != CanaryPrompt(messages=turns, system_prompt=prompt.system_prompt).id:
            entry["id"] = prompt.id
        entry["messages"] = turns
    else:
        if prompt.id != default_prompt_id(prompt.text, prompt.system_prompt):
            entry["id"] = prompt.id
        entry["text"] = prompt.text
    entry["description"] = prompt.description
    entry["tags"] = list(prompt.tags)
    optional = {
        "system_prompt": prompt.system_prompt,
        "expected_keywords": list(prompt.expected_keywords),
        "response_format": _plain(prompt.response_format) if prompt.response_format else None,
        "metadata": _plain(prompt.metadata),
        "probes": [
            _probe_entry(b, suite.judge) for b in suite.bindings if b.prompt_id == prompt.id
        ],
    }
    entry.update({k: v for k, v in optional.items() if v})
    if prompt.tools is not None:  # an empty list differs from none in the suite hash
        entry["tools"] = _plain(prompt.tools)
    return entry
