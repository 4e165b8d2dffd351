"""LLM providers: the abstract interface, LiteLLM (real models) and replay (recorded answers).

Resolved lazily: naming ``promptcanary.providers.LiteLLMProvider`` does not import LiteLLM.
"""

from __future__ import annotations

from promptcanary._lazy import lazy_exports

_EXPORTS = {
    "BaseLLMProvider": "promptcanary.core.run.provider",
    "LiteLLMProvider": "promptcanary.providers.litellm",
    "ModelConfigError": "promptcanary.providers.errors",
    "ProviderError": "promptcanary.core.run.provider",
    "build_providers": "promptcanary.providers.factory",
    "make_provider": "promptcanary.providers.factory",
    "providers_for": "promptcanary.providers.factory",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
