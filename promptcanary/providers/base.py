"""The provider interface (documented import path; it lives in
:mod:`promptcanary.core.run.provider`, the stage that calls it)."""

from __future__ import annotations

from promptcanary.core.run.provider import BaseLLMProvider, MissingCredentialsError, ProviderError

__all__ = ["BaseLLMProvider", "MissingCredentialsError", "ProviderError"]
