"""How a run is executed: :class:`RunOptions` (the caller's choices) and the run defaults."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from promptcanary.core.models import MAX_TOKENS_CAP, TEMPERATURE_RANGE
from promptcanary.core.run.shards import Shard
from promptcanary.core.sampling.pool import DEFAULT_POOL, MAX_POOL
from promptcanary.core.sampling.sequential import (
    MAX_SAMPLES,
    MAX_SAMPLES_CAP,
    MIN_SAMPLES,
    Policy,
    baseline_samples_for,
)
from promptcanary.core.spec import AUTO, RunDefaults


class RunOptionError(ValueError):
    """A run option out of its range. ``field`` names it (the CLI shows it as its flag, the
    action as its input), ``rule`` says what is valid, ``value`` is what was given; ``above``
    names the option (and its value) it may not exceed: ``min_samples`` above ``max_samples``."""

    def __init__(
        self, field: str, rule: str, value: object, *, above: tuple[str, object] | None = None
    ) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        self.above = above
        super().__init__(self.describe())

    @property
    def problem(self) -> str:
        """The rule and the value given, without the option's name."""
        return f"{self.rule}, got {self.value!r}"

    def describe(self, name: Callable[[str], str] = str) -> str:
        """The message, each option named by ``name`` (``--max-retries``, ``input 'timeout'``)."""
        if self.above is not None:
            other, limit = self.above
            return f"{name(self.field)} {self.value!r} is above {name(other)} {limit!r}"
        return f"{name(self.field)} {self.problem}"


DEFAULT_CONCURRENCY = 8
"""Requests in flight at once unless ``concurrency`` says otherwise."""
DEFAULT_TIMEOUT = 60.0
"""Seconds per request unless ``timeout`` says otherwise."""
DEFAULT_MAX_RETRIES = 3
"""Retries of a transient error unless ``max_retries`` says otherwise."""


_DEFAULTABLE = tuple(f.name for f in fields(RunDefaults))


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


SAMPLES_RULE = f"must be auto or an integer ≥ 1 and ≤ {MAX_SAMPLES_CAP}"
SAMPLE_COUNT_RULE = f"must be an integer ≥ 1 and ≤ {MAX_SAMPLES_CAP}"
_LOW, _HIGH = TEMPERATURE_RANGE
_RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    # field: (what is valid, the test). The one set of bounds for the CLI's flags, the action's
    # inputs and Python callers; the suite's ``defaults:`` use the same constants.
    "temperature": (
        f"must be a number ≥ {_LOW:g} and ≤ {_HIGH:g}",
        lambda v: _number(v) and _LOW <= v <= _HIGH,
    ),
    "max_tokens": (
        f"must be an integer ≥ 1 and ≤ {MAX_TOKENS_CAP}",
        lambda v: _whole(v) and 1 <= v <= MAX_TOKENS_CAP,
    ),
    "seed": ("must be an integer", _whole),
    "samples": (SAMPLES_RULE, lambda v: samples_problem(v) is None),
    "min_samples": (SAMPLE_COUNT_RULE, lambda v: _whole(v) and 1 <= v <= MAX_SAMPLES_CAP),
    "max_samples": (SAMPLE_COUNT_RULE, lambda v: _whole(v) and 1 <= v <= MAX_SAMPLES_CAP),
    "baseline_samples": (SAMPLE_COUNT_RULE, lambda v: _whole(v) and 1 <= v <= MAX_SAMPLES_CAP),
    "baseline_pool": (
        f"must be an integer ≥ 1 and ≤ {MAX_POOL}",
        lambda v: _whole(v) and 1 <= v <= MAX_POOL,
    ),
    "concurrency": ("must be an integer ≥ 1", lambda v: _whole(v) and v >= 1),
    "timeout": ("must be a number of seconds > 0", lambda v: _number(v) and v > 0),
    "max_retries": ("must be an integer ≥ 0", lambda v: _whole(v) and v >= 0),
}
"""What each bounded option accepts; ``None`` (not set) is always accepted for those that have
no default of their own."""


def option_rule(field: str) -> str:
    """What the run option ``field`` accepts, in words (``KeyError`` if it has no bounds)."""
    return _RULES[field][0]


def samples_problem(value: object) -> str | None:
    """Why ``value`` is not a valid ``samples`` (``None`` if it is): ``auto`` or 1 … the cap.

    The one rule for the suite's ``defaults:``, the action's input and the CLI flag: a fixed
    run is capped like ``max-samples``, so a typo (``samples: 1000000``) cannot ask millions.
    """
    if value == AUTO:
        return None
    if not _whole(value) or not 1 <= value <= MAX_SAMPLES_CAP:  # type: ignore[operator]
        return f"{SAMPLES_RULE}, got {value!r}"
    return None


@dataclass(frozen=True)
class RunOptions(RunDefaults):
    """How a run is executed: the caller's choices (CLI flags, action inputs, keywords).

    The model parameters it shares with the suite's ``defaults:`` (``temperature``,
    ``max_tokens``, ``seed``, ``samples``, ``min_samples``, ``max_samples``) are ``None`` when
    the caller did not set them: then the suite's ``defaults:`` apply, and after those the
    provider's configuration; ``samples`` left unset everywhere is ``"auto"``. ``None`` is never
    a valid value, so an explicit ``samples=1`` overrides a suite default of 3.
    """

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
    top_up: bool = False
    """``samples: auto``: the run may become the baseline, so prompts whose pool is too small to
    show a drop (or with no pool) are asked up to ``baseline_samples``; without it a prompt with
    no pool gets one answer, as a plain ``run()`` documents."""

    def over(self, defaults: RunDefaults) -> RunOptions:
        """These options with every model parameter they leave unset taken from ``defaults``."""
        update = {
            name: getattr(defaults, name)
            for name in _DEFAULTABLE
            if getattr(self, name) is None and getattr(defaults, name) is not None
        }
        return replace(self, **update) if update else self

    def __post_init__(self) -> None:
        for name, (rule, valid) in _RULES.items():
            value = getattr(self, name)
            if value is not None and not valid(value):
                raise RunOptionError(name, rule, value)
        low, high = self.min_samples, self.max_samples
        if low is not None and high is not None and low > high:
            raise RunOptionError(
                "min_samples", "must not be above max_samples", low, above=("max_samples", high)
            )

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

    def policy(self, comparisons: int = 100) -> Policy:
        """The sequential procedure of an ``auto`` run for a suite of ``comparisons`` (prompt,
        probe) pairs, which set the default ``baseline_samples`` (``ValueError`` names a bad
        bound)."""
        low = self.min_samples if self.min_samples is not None else MIN_SAMPLES
        high = self.max_samples if self.max_samples is not None else MAX_SAMPLES
        if self.min_samples is not None and self.max_samples is None:
            high = max(high, low)
        build = self.baseline_samples
        return Policy(
            min_samples=low,
            max_samples=high,
            baseline_samples=build if build is not None else baseline_samples_for(comparisons),
            top_up=self.top_up,
        )
