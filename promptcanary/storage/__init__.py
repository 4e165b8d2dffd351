"""Baseline storage: snapshot files on disk (``FileBaselineStore`` resolves lazily)."""

from __future__ import annotations

from promptcanary._lazy import lazy_exports

_EXPORTS = {"FileBaselineStore": "promptcanary.storage.file"}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
