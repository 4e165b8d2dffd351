"""LLM providers: the abstract interface, LiteLLM (real models) and replay (recorded answers).

Resolved lazily: naming ``promptcanary.providers.LiteLLMProvider`` does not import LiteLLM.
"""

from __future__ import annotations

from promptcanary._lazy import lazy_exports

_EXPORTS = {
    "BaseLLMProvider": "promptcanary.core.run.provider",
    "LiteLLMProvider": "promptcanary.providers.litellm",
    "ProviderError": "promptcanary.core.run.provider",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
