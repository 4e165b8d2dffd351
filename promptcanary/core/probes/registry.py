"""ProbeRegistry: probe type id → probe class, as an object that can be passed around.

``DEFAULT_REGISTRY`` is the one ``@probe`` and ``BaseProbe`` subclasses fill when they are
defined, and the one YAML ``type:`` names resolve in. Another registry can be passed to the
loader (``load_suite(..., registry=r)``) and to ``import_probe_modules``, or made the *active*
registry for a block (``with r.active(): ...``), so that probes defined in the block register
there and the default registry stays as it was: tests never touch module state.

A *different* class claiming a taken id is an error naming both classes; re-creating the same
class (same module and qualified name, e.g. a module imported twice) replaces the entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ClassVar, Protocol, TypeVar


class ProbeClass(Protocol):
    """What the registry reads of a probe class: its id. :class:`~promptcanary.core.probes.base.
    BaseProbe` subclasses satisfy it; the registry stays below the probe contract (it is handed
    classes, it never imports them)."""

    probe_id: ClassVar[str]


C = TypeVar("C", bound=type[ProbeClass])


class ProbeRegistryError(ValueError, KeyError):
    """Two different probe classes claim the same ``probe_id``, or an id is unknown.

    Also a ``KeyError``: PromptCanary 0.2.2's ``get_probe`` raised one for an unknown id.
    """

    __str__ = ValueError.__str__  # not KeyError's, which would print the message quoted


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class ProbeRegistry:
    """Probe classes by ``probe_id``.

    Args:
        probes: Classes to register at once (e.g. ``DEFAULT_REGISTRY.classes()``).
    """

    def __init__(self, probes: Iterable[type[ProbeClass]] = ()) -> None:
        self._probes: dict[str, type[ProbeClass]] = {}
        for cls in probes:
            self.register(cls)

    def register(self, cls: C) -> C:
        """Register ``cls`` under its ``probe_id``; returns it (usable as a class decorator)."""
        probe_id = cls.probe_id
        existing = self._probes.get(probe_id)
        if existing is not None and existing is not cls and _qualname(existing) != _qualname(cls):
            raise ProbeRegistryError(
                f"probe id {probe_id!r} is already registered by {_qualname(existing)}; "
                f"{_qualname(cls)} cannot claim it too. Give one of them a different probe_id."
            )
        self._probes[probe_id] = cls
        return cls

    def get(self, probe_id: str) -> type[ProbeClass]:
        """The class registered under ``probe_id``; an unknown id lists the valid ones."""
        try:
            return self._probes[probe_id]
        except KeyError:
            raise ProbeRegistryError(
                f"unknown probe type {probe_id!r}; valid probe types are: {', '.join(self.names)}"
            ) from None

    @property
    def names(self) -> list[str]:
        """Every registered id, sorted."""
        return sorted(self._probes)

    def as_dict(self) -> dict[str, type[ProbeClass]]:
        """A copy: ``probe_id`` → class (changing it does not change the registry)."""
        return dict(self._probes)

    def copy(self) -> ProbeRegistry:
        return ProbeRegistry(self._probes.values())

    def __contains__(self, probe_id: object) -> bool:
        return probe_id in self._probes

    def __getitem__(self, probe_id: str) -> type[ProbeClass]:
        return self.get(probe_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self._probes)

    def values(self) -> list[type[ProbeClass]]:
        return list(self._probes.values())

    @contextmanager
    def active(self) -> Iterator[ProbeRegistry]:
        """Within the block, probes defined register here and lookups default to here."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def __repr__(self) -> str:
        return f"ProbeRegistry({len(self)} probes)"


DEFAULT_REGISTRY = ProbeRegistry()
"""Filled by every ``@probe`` and ``BaseProbe`` subclass defined outside an ``active()`` block."""

_ACTIVE: ContextVar[ProbeRegistry] = ContextVar("promptcanary_probe_registry")


def active_registry() -> ProbeRegistry:
    """The registry in force here: the innermost ``active()`` block's, else the default one."""
    return _ACTIVE.get(DEFAULT_REGISTRY)


def registry_or_active(registry: ProbeRegistry | None) -> ProbeRegistry:
    """``registry`` when one is given (even an empty one), else the active registry."""
    return registry if registry is not None else active_registry()
