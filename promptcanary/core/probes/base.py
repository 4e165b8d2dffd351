"""The probe contract, the ``@probe`` decorator and the probe registry.

Every :class:`BaseProbe` subclass with a non-empty ``probe_id`` registers itself when its class is
created. A *different* class claiming a taken id is an error naming both classes; re-creating the
same class (same module and qualified name, e.g. a module imported twice) replaces the entry.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult


class ProbeRegistryError(ValueError):
    """Two different probe classes claim the same ``probe_id``, or an id is unknown."""


_PROBE_REGISTRY: dict[str, type[BaseProbe]] = {}


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_probe(cls: type[BaseProbe]) -> type[BaseProbe]:
    """Register ``cls`` under its ``probe_id`` (done automatically for subclasses)."""
    probe_id = cls.probe_id
    existing = _PROBE_REGISTRY.get(probe_id)
    if existing is not None and existing is not cls and _qualname(existing) != _qualname(cls):
        raise ProbeRegistryError(
            f"probe id {probe_id!r} is already registered by {_qualname(existing)}; "
            f"{_qualname(cls)} cannot claim it too. Give one of them a different probe_id."
        )
    _PROBE_REGISTRY[probe_id] = cls
    return cls


def get_probe_registry() -> dict[str, type[BaseProbe]]:
    """A copy of the registry: ``probe_id`` → probe class."""
    return dict(_PROBE_REGISTRY)


def get_probe(probe_id: str) -> type[BaseProbe]:
    """The probe class registered under ``probe_id``; unknown ids list the valid ones."""
    try:
        return _PROBE_REGISTRY[probe_id]
    except KeyError:
        valid = ", ".join(sorted(_PROBE_REGISTRY))
        raise ProbeRegistryError(
            f"unknown probe type {probe_id!r}; valid probe types are: {valid}"
        ) from None


class BaseProbe(abc.ABC):
    """Abstract base class for all PromptCanary probes.

    Attributes:
        probe_id: Stable machine-readable identifier (snake_case).
        name: Human-readable display name.
        category: High-level :class:`ProbeCategory`.
        description: One-sentence description shown in reports.
    """

    probe_id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    category: ClassVar[ProbeCategory] = ProbeCategory.CUSTOM
    description: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.probe_id:
            if not cls.name:
                cls.name = cls.probe_id.replace("_", " ").title()
            register_probe(cls)

    @abc.abstractmethod
    def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        """Run this probe and return a structured result."""

    def __call__(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
        """Make probes callable directly: ``probe(prompt, response)``."""
        return self.evaluate(prompt, response)

    def params(self) -> dict[str, Any]:
        """The constructor parameters of this instance (used for probe keys and config hashes)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def _make_result(
        self,
        prompt_id: str,
        *,
        passed: bool,
        score: float,
        details: str = "",
        metadata: dict[str, Any] | None = None,
        errored: bool = False,
    ) -> ProbeResult:
        """Build a result with the score clamped to [0, 1] and id/name/category filled in.

        ``errored``: the response could not be judged (neither a pass nor a failure).
        """
        clamped = 0.0 if score != score else min(1.0, max(0.0, float(score)))  # NaN → 0
        return ProbeResult(
            probe_id=self.probe_id,
            probe_name=self.name,
            category=self.category,
            prompt_id=prompt_id,
            passed=bool(passed),
            score=clamped,
            details=details,
            metadata=metadata or {},
            errored=errored,
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self.params().items()))
        return f"{type(self).__name__}({args})"


ProbeFunction = Callable[[CanaryPrompt, LLMResponse], ProbeResult]


def probe(
    probe_id: str,
    *,
    name: str = "",
    category: ProbeCategory = ProbeCategory.CUSTOM,
    description: str = "",
) -> Callable[[ProbeFunction], type[BaseProbe]]:
    """Decorator that turns a plain function into a registered ``BaseProbe`` subclass.

    The decorated name becomes the class; instantiate it (``check_code_fence()``) to use it.
    """
    if not probe_id:
        raise ValueError("probe(): probe_id must be a non-empty snake_case string")

    def decorator(fn: ProbeFunction) -> type[BaseProbe]:
        display = name or fn.__name__.replace("_", " ").title()

        def evaluate(self: BaseProbe, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            return fn(prompt, response)

        cls = type(
            fn.__name__,
            (BaseProbe,),
            {
                "probe_id": probe_id,
                "name": display,
                "category": category,
                "description": description or (fn.__doc__ or "").strip().split("\n")[0],
                "evaluate": evaluate,
                "__module__": fn.__module__,
                "__qualname__": fn.__qualname__,
                "__doc__": fn.__doc__,
            },
        )
        return cls

    return decorator
