"""How a run is executed: :class:`RunOptions` (the caller's choices) and the run defaults."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

from promptcanary.core.run.shards import Shard
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.sampling.sequential import (
    MAX_SAMPLES,
    MAX_SAMPLES_CAP,
    MIN_SAMPLES,
    Policy,
    baseline_samples_for,
)
from promptcanary.core.spec import AUTO, RunDefaults


class RunOptionError(ValueError):
    """A run option out of its range; ``field`` names it (the CLI shows it as its flag)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field} {problem}")


DEFAULT_CONCURRENCY = 8
"""Requests in flight at once unless ``concurrency`` says otherwise."""
DEFAULT_TIMEOUT = 60.0
"""Seconds per request unless ``timeout`` says otherwise."""
DEFAULT_MAX_RETRIES = 3
"""Retries of a transient error unless ``max_retries`` says otherwise."""


_DEFAULTABLE = tuple(f.name for f in fields(RunDefaults))


def samples_problem(value: object) -> str | None:
    """Why ``value`` is not a valid ``samples`` (``None`` if it is): ``auto`` or 1 … the cap.

    The one rule for the suite's ``defaults:``, the action's input and the CLI flag: a fixed
    run is capped like ``max-samples``, so a typo (``samples: 1000000``) cannot ask millions.
    """
    if value == AUTO:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be 'auto' or a whole number, got {value!r}"
    if not 1 <= value <= MAX_SAMPLES_CAP:
        return f"must be 'auto' or a whole number from 1 to {MAX_SAMPLES_CAP}, got {value}"
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
        problem = None if self.samples is None else samples_problem(self.samples)
        if problem is not None:
            raise ValueError(f"samples {problem}")
        if self.baseline_samples is not None and not 1 <= self.baseline_samples <= MAX_SAMPLES_CAP:
            raise RunOptionError(
                "baseline_samples",
                f"must be from 1 to {MAX_SAMPLES_CAP}, got {self.baseline_samples}",
            )
        if self.baseline_pool < 1:
            raise ValueError(f"baseline_pool must be at least 1, got {self.baseline_pool}")
        # The same bounds as the action's inputs: every caller (CLI, action, Python) meets them.
        if self.concurrency < 1:
            raise RunOptionError("concurrency", f"must be at least 1, got {self.concurrency}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise RunOptionError("timeout", f"must be a number of seconds > 0, got {self.timeout}")
        if self.max_retries < 0:
            raise RunOptionError("max_retries", f"must be 0 or more, got {self.max_retries}")

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
