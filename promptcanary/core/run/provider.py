"""The provider interface and its errors.

A provider turns one :class:`CanaryPrompt` into one :class:`LLMResponse`. The runner calls
:meth:`BaseLLMProvider.acomplete`; providers with a native async client override it, others get
``complete`` run in a worker thread.
"""

from __future__ import annotations

import abc
import asyncio
import hashlib

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig


def scope_key(provider: str, endpoint: str, key: object) -> str:
    """A rate-limit scope's name: provider, endpoint and a short hash of the key (never the key)."""
    digest = hashlib.sha256(str(key).encode()).hexdigest()[:16] if key else "-"
    return f"{provider}|{endpoint}|{digest}"


class ProviderError(Exception):
    """A provider call failed.

    ``transient`` marks errors worth retrying (429, 5xx, connection errors, timeouts);
    ``retry_after`` is the server's ``Retry-After`` in seconds when it sent one;
    ``rate_limit_headers`` its rate-limit headers (for the run's pacing).
    """

    def __init__(
        self,
        message: str,
        *,
        model_id: str | None = None,
        status_code: int | None = None,
        raw_error: BaseException | None = None,
        retry_after: float | None = None,
        transient: bool | None = None,
        rate_limit_headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.rate_limit_headers = rate_limit_headers
        self.model_id = model_id
        self.status_code = status_code
        self.raw_error = raw_error
        self.retry_after = retry_after
        if transient is None:
            transient = status_code is not None and (status_code == 429 or status_code >= 500)
        self.transient = transient


class MissingCredentialsError(ProviderError):
    """The model needs an API key (or an ``api_base``) that the environment does not provide."""


class BaseLLMProvider(abc.ABC):
    """Abstract base class for LLM provider adapters. Subclasses must implement :meth:`complete`."""

    def __init__(self, config: ProviderConfig) -> None:
        self._config = config

    @property
    def config(self) -> ProviderConfig:
        return self._config

    def with_config(self, config: ProviderConfig) -> BaseLLMProvider:
        """A provider like this one with another configuration (overrides of a run)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._config = config
        return clone

    def rate_limit_scope(self) -> str:
        """What shares one rate limit with this model: requests to the same provider, endpoint
        and key. Held in memory only (the key as a hash); adapters that know more override it."""
        params = self.config.extra_params
        endpoint = params.get("api_base") or params.get("base_url") or ""
        provider = self.config.model_id.split("/", 1)[0]
        return scope_key(provider, str(endpoint), params.get("api_key"))

    def check_environment(self) -> None:
        """Raise :class:`MissingCredentialsError` when a call could not possibly succeed."""

    @abc.abstractmethod
    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        """Send a prompt to the provider and return a structured response.

        Raises:
            ProviderError: On any API or network error.
        """

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        """Async form used by the runner. ``sample`` is the repetition index (0-based)."""
        response = await asyncio.to_thread(self.complete, prompt, system_prompt=system_prompt)
        return (
            response.model_copy(update={"sample": sample})
            if response.sample != sample
            else response
        )

    async def aclose(self) -> None:
        """Release connections held by the provider (called once at the end of a run)."""
