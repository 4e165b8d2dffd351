"""Lazily resolved package exports, so that importing a package does not import its modules.

``import promptcanary`` must stay fast (LiteLLM takes seconds to import) while the names that code
written for PromptCanary 0.2.2 imports from ``promptcanary``, ``promptcanary.core``,
``promptcanary.providers`` and ``promptcanary.storage`` keep resolving.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving each name of ``exports`` (name → defining module)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
