"""PromptCanary: catch silent behavioural drift in LLMs with canary prompts and probes.

Public names are resolved lazily so that ``import promptcanary`` stays fast (LiteLLM, which takes
seconds to import, is only loaded when a LiteLLM provider actually makes a call).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "BaselineSnapshot": "promptcanary.core.models",
    "CanaryPrompt": "promptcanary.core.models",
    "CanaryRunResult": "promptcanary.core.models",
    "CanarySuite": "promptcanary.core.suite",
    "DriftReport": "promptcanary.core.models",
    "DriftSeverity": "promptcanary.core.models",
    "FileBaselineStore": "promptcanary.storage.file",
    "LiteLLMProvider": "promptcanary.providers.litellm",
    "LLMResponse": "promptcanary.core.models",
    "ProbeCategory": "promptcanary.core.models",
    "ProbeResult": "promptcanary.core.models",
    "ProviderConfig": "promptcanary.core.models",
    "ReplayProvider": "promptcanary.providers.replay",
    "compare": "promptcanary.core.comparator",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'promptcanary' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
