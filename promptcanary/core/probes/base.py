"""The probe contract and the ``@probe`` decorator.

Every :class:`BaseProbe` subclass with a non-empty ``probe_id`` registers itself when its class is
created: in the registry given as a class keyword (``class P(BaseProbe, registry=r)``), else in the
active one (:mod:`promptcanary.core.probes.registry`: the default registry unless a block made
another one active).
"""

from __future__ import annotations

import abc
import types
from collections.abc import Callable
from typing import Any, ClassVar, cast

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeCategory, ProbeResult
from promptcanary.core.probes.registry import (
    ProbeRegistry,
    ProbeRegistryError,
    active_registry,
    registry_or_active,
)

__all__ = [
    "BaseProbe",
    "ProbeFunction",
    "ProbeRegistry",
    "ProbeRegistryError",
    "get_probe",
    "get_probe_registry",
    "probe",
    "register_probe",
]


def register_probe(cls: type[BaseProbe]) -> type[BaseProbe]:
    """Register ``cls`` in the active registry (done automatically for subclasses)."""
    return active_registry().register(cls)


def get_probe_registry() -> dict[str, type[BaseProbe]]:
    """A copy of the active registry: ``probe_id`` → probe class."""
    # The registry holds what BaseProbe subclasses and register_probe() put there.
    return cast(dict[str, type[BaseProbe]], active_registry().as_dict())


def get_probe(probe_id: str) -> type[BaseProbe]:
    """The probe class registered under ``probe_id``; unknown ids list the valid ones."""
    return cast(type[BaseProbe], active_registry().get(probe_id))


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

    def __init_subclass__(cls, registry: ProbeRegistry | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only a class that declares its own id registers: a subclass of a built-in that keeps
        # the inherited id is a variant used from Python, not a second claim on the id.
        if "probe_id" in cls.__dict__ and cls.probe_id:
            if not cls.name:
                cls.name = cls.probe_id.replace("_", " ").title()
            registry_or_active(registry).register(cls)

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
    registry: ProbeRegistry | None = None,
) -> Callable[[ProbeFunction], type[BaseProbe]]:
    """Decorator that turns a plain function into a registered ``BaseProbe`` subclass.

    The decorated name becomes the class; instantiate it (``check_code_fence()``) to use it.
    It registers in ``registry``, else in the active one (normally the default registry).
    """
    if not probe_id:
        raise ValueError("probe(): probe_id must be a non-empty snake_case string")

    def decorator(fn: ProbeFunction) -> type[BaseProbe]:
        display = name or fn.__name__.replace("_", " ").title()

        def evaluate(self: BaseProbe, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            return fn(prompt, response)

        namespace: dict[str, Any] = {
            "probe_id": probe_id,
            "name": display,
            "category": category,
            "description": description or (fn.__doc__ or "").strip().split("\n")[0],
            "evaluate": evaluate,
            "__module__": fn.__module__,
            "__qualname__": fn.__qualname__,
            "__doc__": fn.__doc__,
        }
        cls = types.new_class(
            fn.__name__,
            (BaseProbe,),
            {"registry": registry},
            lambda ns: ns.update(namespace),
        )
        return cls

    return decorator
