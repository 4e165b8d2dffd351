"""The LiteLLM provider: every hosted or local model LiteLLM knows, through one interface.

LiteLLM takes about two seconds to import, so it is imported inside functions only, never when this
module is imported; :func:`prewarm` starts that import in a background thread so a caller can
overlap it with other start-up work.

One call is one HTTP request: LiteLLM's and the OpenAI SDK's own retries are switched off
(``num_retries=0``, ``max_retries=0``) because the runner retries, with backoff that honours
``Retry-After`` and a budget the user configured.

Per call, LiteLLM also does work the engine does not need (pricing, success logging, a thread
hop for its request set-up); :mod:`promptcanary.providers.litellm_tuning` skips it during our
calls only.

Errors become :class:`ProviderError` with ``transient`` set for what is worth retrying: 408, 409,
429 and 5xx answers, timeouts, connection errors and a body that is not JSON (a truncated answer
from a proxy is usually a one-off). An answer that is well-formed but unusable — no ``choices``, or
neither content nor tool calls — is *not* transient: at a fixed temperature and seed the same
request would most likely get the same answer, so retrying it only spends the retry budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import json
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from promptcanary.core.http_headers import retry_after
from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig, ToolCall
from promptcanary.core.redact import is_secret_name
from promptcanary.core.run.embedder import BaseEmbeddingProvider, EmbeddingBatch
from promptcanary.core.run.options import DEFAULT_TIMEOUT
from promptcanary.core.run.provider import (
    BaseLLMProvider,
    MissingCredentialsError,
    ProviderError,
    scope_key,
)
from promptcanary.core.run.rate_headers import rate_limit_header_names
from promptcanary.providers.errors import ModelConfigError
from promptcanary.providers.litellm_tuning import (
    INLINE_SETUP_PROVIDERS,
    our_call,
    skip_unused_bookkeeping,
    use_setup_executor,
)
from promptcanary.providers.wire_time import measured, time_sends

PLACEHOLDER_API_KEY = "no-key"
"""Sent to a local endpoint (``api_base``) when no API key is configured anywhere."""

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_MAX_MESSAGE = 400

# Modules LiteLLM imports lazily on its first request (≈0.5 s); prewarming them too keeps that
# cost out of the first request's latency.
_PREWARM_MODULES = (
    "openai.resources",
    "litellm.llms.openai.openai",
    "litellm.proxy._types",
    "litellm.llms.litellm_proxy.chat.transformation",
    "litellm.proxy.openai_files_endpoints.common_utils",
)

_prewarm_lock = threading.Lock()
_prewarm_thread: threading.Thread | None = None

_tuned = False


def import_litellm() -> Any:
    """Import LiteLLM configured for offline, quiet use (the cost map ships with the package)."""
    global _tuned
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # LiteLLM's OpenAI and Azure embedding paths read `max_retries or DEFAULT_MAX_RETRIES`, so
    # our max_retries=0 would still give the SDK's two retries there; the runner retries.
    litellm.DEFAULT_MAX_RETRIES = 0

    if not _tuned:  # runs on every call: keep that path cheap
        # Its "Give Feedback / Get Help" banner goes to stdout on every error: noise in CI logs.
        litellm.suppress_debug_info = True
        _tune(litellm)
        _tuned = True
    return litellm


def _tune(litellm: Any) -> None:
    try:
        from litellm import utils
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:  # internals move between versions; tuning is only an optimisation
        return
    skip_unused_bookkeeping(litellm, utils, Logging)
    import httpx  # LiteLLM's and the OpenAI SDK's HTTP client

    time_sends((httpx.AsyncClient, httpx.Client))


def _setup_function() -> Any:
    """LiteLLM's synchronous ``completion``, which ``acompletion`` runs as its request set-up."""
    return getattr(sys.modules.get("litellm.main"), "completion", None)


def _warm() -> None:
    import_litellm()
    for name in _PREWARM_MODULES:
        # Internal module names move between LiteLLM versions; warming is only an optimisation.
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def prewarm() -> threading.Thread:
    """Start importing LiteLLM in a daemon thread (once) and return that thread."""
    global _prewarm_thread
    with _prewarm_lock:
        if _prewarm_thread is None:
            _prewarm_thread = threading.Thread(target=_warm, name="litellm-prewarm", daemon=True)
            _prewarm_thread.start()
        return _prewarm_thread


_COST_MAP_FILE = "model_prices_and_context_window_backup.json"


def _in_cost_map(model_id: str, cost_map: Mapping[str, Any]) -> bool:
    return model_id in cost_map or model_id.split("/", 1)[-1] in cost_map


@functools.lru_cache(maxsize=1)
def _bundled_cost_map() -> Mapping[str, Any] | None:
    """The cost map LiteLLM ships and loads offline (``LITELLM_LOCAL_MODEL_COST_MAP``), read as
    data: ~0.1 s instead of LiteLLM's ~3 s import, enough to tell that a model has no price.
    None when LiteLLM keeps it elsewhere (the caller then asks LiteLLM)."""
    spec = importlib.util.find_spec("litellm")  # locates the package without running it
    if spec is None or spec.origin is None:
        return None
    try:
        loaded = json.loads(Path(spec.origin).with_name(_COST_MAP_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


@functools.lru_cache(maxsize=4096)
def cost_usd(model_id: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price in USD of one answer, from the cost map bundled with LiteLLM (never fetched).

    None when the model is not in the map, under its full id or without its provider prefix:
    LiteLLM prices some unknown models at 0 by provider (every ``ollama/…``), which would be a
    guess. Deterministic, so cached.
    """
    if "litellm" not in sys.modules:  # a merge job or report that made no request
        bundled = _bundled_cost_map()
        if bundled is not None and not _in_cost_map(model_id, bundled):
            return None  # known without importing LiteLLM
    litellm = import_litellm()
    if not _in_cost_map(model_id, litellm.model_cost):
        return None
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model_id, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except (litellm.exceptions.ModelNotMappedError, ValueError, KeyError):
        return None
    return float(prompt_cost) + float(completion_cost)


class LiteLLMProvider(BaseLLMProvider):
    """LLM provider backed by the LiteLLM library.

    Args:
        model_id_or_config: A LiteLLM model string (``"openai/gpt-4o"``) or a ProviderConfig.
        temperature: Sampling temperature (0.0 for reproducibility).
        max_tokens: Maximum tokens in the response.
        seed: Determinism seed, sent when not ``None``.
        **extra_params: Forwarded to ``litellm.completion()`` (``api_base``, ``api_key``,
            ``response_format``, ``timeout``, …). ``extra_params={...}`` is accepted too.
    """

    def __init__(
        self,
        model_id_or_config: str | ProviderConfig,
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = 42,
        **extra_params: Any,
    ) -> None:
        if isinstance(model_id_or_config, ProviderConfig):
            config = model_id_or_config
        else:
            nested = extra_params.pop("extra_params", None)
            params = {**nested, **extra_params} if isinstance(nested, Mapping) else extra_params
            config = ProviderConfig(
                model_id=model_id_or_config,
                temperature=temperature,
                max_tokens=max_tokens,
                seed=seed,
                extra_params=params,
            )
        super().__init__(config)
        self._placeholder_key: bool | None = None
        self._setup_inline: bool | None = None
        self._provider: str | None = None
        self._supported: frozenset[str] | bool | None = False

    @classmethod
    def from_config(cls, config: ProviderConfig) -> LiteLLMProvider:
        """Create a provider directly from a :class:`ProviderConfig`."""
        return cls(config)

    @classmethod
    def prewarm(cls) -> threading.Thread:
        """Start importing LiteLLM in the background; see :func:`prewarm`."""
        return prewarm()

    # ── environment ──────────────────────────────────────────────────────────

    def check_environment(self) -> None:
        """Raise :class:`MissingCredentialsError` when the model's API key is not configured.

        A model with an ``api_base`` (in its parameters or as ``<PROVIDER>_API_BASE`` /
        ``<PROVIDER>_BASE_URL`` in the environment) is a local or proxied endpoint whose needs
        LiteLLM cannot know, so it is not checked.
        """
        self.resolve_provider()
        prefix = self._custom_endpoint_prefix()
        if prefix is None:
            return
        litellm = import_litellm()
        model = self.config.model_id
        api_key = self.config.extra_params.get("api_key")
        missing = list(litellm.validate_environment(model=model, api_key=api_key)["missing_keys"])
        if not missing and not api_key:
            missing = _blank_key_variables(prefix)
        if missing:
            names = " and ".join(missing)
            raise MissingCredentialsError(
                f"model {model!r} needs {names} in the environment: export it locally, or in a "
                "workflow pass it to the step with `env:` from a secret; for a local or proxied "
                "endpoint give the model an `api_base` instead",
                model_id=model,
                transient=False,
            )

    def _custom_endpoint_prefix(self) -> str | None:
        """The provider's variable prefix (``OPENAI``), or ``None`` when the model is a local or
        proxied endpoint: an ``api_base`` in its parameters or ``<PREFIX>_API_BASE`` /
        ``<PREFIX>_BASE_URL`` in the environment (or a model LiteLLM does not know)."""
        params = self.config.extra_params
        if params.get("api_base") or params.get("base_url"):
            return None
        provider = self._provider_or_none()
        if provider is None:  # an unknown model: resolve_provider() says so
            return None
        prefix = provider.upper()
        if _env(f"{prefix}_API_BASE") or _env(f"{prefix}_BASE_URL"):
            return None
        return prefix

    def resolve_provider(self) -> str:
        """The LiteLLM provider of the model (``openai``, ``anthropic``, …), decided once.

        Raises:
            ModelConfigError: LiteLLM does not know the model string; its whole hint is kept.
        """
        if self._provider is None:
            params = self.config.extra_params
            litellm = import_litellm()
            try:
                _, provider, _, _ = litellm.get_llm_provider(
                    model=self.config.model_id,
                    custom_llm_provider=params.get("custom_llm_provider"),
                    api_base=params.get("api_base"),
                )
            except litellm.BadRequestError as exc:  # LiteLLM's "LLM Provider NOT provided"
                detail = " ".join(_strip_prefix(str(getattr(exc, "message", exc))).split())
                raise ModelConfigError(
                    f"model {self.config.model_id!r} is not a model string LiteLLM knows: "
                    f"{detail} (write it as <provider>/<model>, e.g. openai/gpt-4o-mini)"
                ) from None
            self._provider = str(provider)
        return self._provider

    def _provider_or_none(self) -> str | None:
        try:
            return self.resolve_provider()
        except ModelConfigError:
            return None

    def _accepts(self, parameter: str) -> bool:
        """Whether LiteLLM sends ``parameter`` to this model's provider (it refuses, before any
        request, a parameter the provider lacks: Anthropic's and Bedrock's ``seed``). True when
        LiteLLM cannot tell: the request then shows what the server says."""
        if self._supported is False:
            provider = self._provider_or_none()
            litellm = import_litellm()
            try:
                supported = litellm.get_supported_openai_params(
                    model=self.config.model_id.split("/", 1)[-1], custom_llm_provider=provider
                )
            except Exception:  # LiteLLM's lookup raises bare exceptions for odd models
                supported = None
            self._supported = frozenset(supported) if supported is not None else None
        return not isinstance(self._supported, frozenset) or parameter in self._supported

    def _needs_placeholder_key(self) -> bool:
        """A local endpoint with no API key anywhere (most self-hosted servers check none): the
        OpenAI client under LiteLLM refuses to send a request without one, with an error LiteLLM
        reports as a retryable HTTP 500. Decided once per provider."""
        if self._placeholder_key is None:
            self._placeholder_key = False
            if not self.config.extra_params.get("api_key") and not self._has_provider_key():
                self._placeholder_key = self._custom_endpoint_prefix() is None
        return self._placeholder_key

    def _has_provider_key(self) -> bool:
        litellm = import_litellm()
        try:
            missing = litellm.validate_environment(model=self.config.model_id)["missing_keys"]
        except Exception:  # an unknown model: nothing to look for
            return True
        return not missing

    # ── calls ────────────────────────────────────────────────────────────────

    def request_kwargs(
        self, prompt: CanaryPrompt, system_prompt: str | None, timeout: float | None
    ) -> dict[str, Any]:
        """The keyword arguments of ``litellm.completion`` for one prompt."""
        config = self.config
        messages = prompt.chat_messages(system_prompt)
        kwargs: dict[str, Any] = {
            **config.extra_params,
            "model": config.model_id,
            "messages": messages,
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "timeout": timeout or config.extra_params.get("timeout") or DEFAULT_TIMEOUT,
            # One call = one HTTP request; the runner owns retrying.
            "num_retries": 0,
            "max_retries": 0,
        }
        # The seed (42 unless set) makes repeated runs comparable where the provider honours
        # one; a provider without seeds (Anthropic, Bedrock) gets none rather than an error.
        if config.seed is not None and self._accepts("seed"):
            kwargs["seed"] = config.seed
        if self._needs_placeholder_key():
            kwargs["api_key"] = PLACEHOLDER_API_KEY
        if prompt.tools:
            kwargs["tools"] = prompt.tools
            # "auto" is OpenAI's default with tools, but some OpenAI-compatible servers
            # (llama-cpp-python's function-calling chat formats) only call tools when asked.
            kwargs.setdefault("tool_choice", "auto")
        else:
            # A model entry's tool_choice without tools is a 400 on OpenAI-compatible APIs.
            kwargs.pop("tool_choice", None)
        if prompt.response_format:
            kwargs["response_format"] = prompt.response_format
        return kwargs

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        """Call the model (blocking) and return a structured :class:`LLMResponse`.

        Raises:
            ProviderError: On API errors, auth failures, network issues or an unusable answer.
        """
        litellm = import_litellm()
        kwargs = self.request_kwargs(prompt, system_prompt, None)
        started = time.perf_counter()
        try:
            with measured() as wire:
                response = litellm.completion(**kwargs)
        except Exception as exc:  # LiteLLM raises many unrelated types; all become ProviderError
            raise self._error(exc, kwargs["timeout"]) from exc
        return self._parse(response, prompt, 0, _latency_ms(wire, started))

    async def acomplete(
        self,
        prompt: CanaryPrompt,
        *,
        system_prompt: str | None = None,
        sample: int = 0,
        timeout: float | None = None,
    ) -> LLMResponse:
        """The asynchronous call the runner uses (LiteLLM's native async client)."""
        litellm = import_litellm()
        kwargs = self.request_kwargs(prompt, system_prompt, timeout)
        inline = self._inline_setup()
        setup = _setup_function() if inline else None
        if setup is not None:
            use_setup_executor(asyncio.get_running_loop(), setup)
        started = time.perf_counter()
        try:
            with our_call(inline_setup=setup is not None), measured() as wire:
                response = await litellm.acompletion(**kwargs)
        except Exception as exc:  # see complete()
            raise self._error(exc, kwargs["timeout"]) from exc
        return self._parse(response, prompt, sample, _latency_ms(wire, started))

    def _inline_setup(self) -> bool:
        """Whether LiteLLM's request set-up for this model may run in the event loop's thread: its
        provider is one whose set-up does no I/O (see litellm_tuning). Decided once."""
        if self._setup_inline is None:
            self._setup_inline = self._provider_or_none() in INLINE_SETUP_PROVIDERS
        return self._setup_inline

    async def aclose(self) -> None:
        """Let LiteLLM's background logging finish on this event loop before it closes."""
        if "litellm" not in sys.modules:
            return
        try:
            from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
        except ImportError:
            return
        # Left pending, these tasks make LiteLLM warn "event loop changed" on the next run.
        with contextlib.suppress(TimeoutError, RuntimeError):
            await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), 2.0)

    # ── responses and errors ─────────────────────────────────────────────────

    def _parse(
        self, response: Any, prompt: CanaryPrompt, sample: int, latency_ms: float
    ) -> LLMResponse:
        model_id = self.config.model_id
        choices = getattr(response, "choices", None)
        if not choices:
            raise ProviderError("empty choices in response", model_id=model_id, transient=False)
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        tool_calls = [_tool_call(call) for call in getattr(message, "tool_calls", None) or []]
        finish_reason = getattr(choice, "finish_reason", None)
        if content is None and not tool_calls:
            raise ProviderError(
                f"model returned no content and no tool calls (finish_reason={finish_reason!r})",
                model_id=model_id,
                transient=False,
            )
        usage = getattr(response, "usage", None)
        raw = _small_raw(response, usage)
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=model_id,
            content=content if isinstance(content, str) else "",
            tool_calls=tool_calls,
            finish_reason=finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            total_tokens=getattr(usage, "total_tokens", None),
            latency_ms=latency_ms,
            raw_response=raw,
            sample=sample,
            served_model=raw.get("model"),
            system_fingerprint=raw.get("system_fingerprint"),
            rate_limit_headers=_response_headers(response),
        )

    def _error(self, exc: BaseException, timeout: float) -> ProviderError:
        litellm = import_litellm()
        model_id = self.config.model_id
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        kind = type(exc).__name__
        if isinstance(exc, litellm.Timeout):
            message = f"request timed out after {timeout:g} s"
            transient = True
        elif _connection_failed(exc):
            # LiteLLM reports a refused connection as an HTTP 500 of its own making.
            status, transient = None, True
            message = f"cannot connect to {self._endpoint()} ({_clean(str(exc))})"
        elif _caused_by(exc, json.JSONDecodeError):
            # LiteLLM reports an unparseable body as a 500 of its own making.
            message, status, transient = "malformed response body (not valid JSON)", None, True
        else:
            detail = getattr(exc, "message", None) or str(exc) or kind
            message = f"{kind}: {_clean(str(detail))}"
            transient = isinstance(
                exc,
                (
                    litellm.APIConnectionError,
                    litellm.RateLimitError,
                    litellm.InternalServerError,
                    litellm.ServiceUnavailableError,
                ),
            ) or (status is not None and (status in _TRANSIENT_STATUS or status >= 500))
        if status is not None:
            message = f"HTTP {status} {message}"
        return ProviderError(
            self._scrub(message),
            model_id=model_id,
            status_code=status,
            raw_error=exc,
            retry_after=_retry_after(exc),
            transient=transient,
            rate_limit_headers=_error_headers(exc),
        )

    def rate_limit_scope(self) -> str:
        """The provider, the endpoint and the key (from the model's parameters or LiteLLM's
        ``<PROVIDER>_API_KEY`` variable): what shares one rate limit."""
        prefix = (self._provider_or_none() or self.config.model_id.split("/", 1)[0]).upper()
        key = self.config.extra_params.get("api_key") or _env(f"{prefix}_API_KEY")
        return scope_key(prefix.lower(), self._endpoint(), key)

    def _endpoint(self) -> str:
        """Where the request went: the model's ``api_base``, the provider's ``*_API_BASE`` /
        ``*_BASE_URL`` variable, or the provider's own address."""
        params = self.config.extra_params
        given = params.get("api_base") or params.get("base_url")
        if given:
            return str(given)
        provider = self._provider_or_none() or "the provider"
        for name in (f"{provider.upper()}_API_BASE", f"{provider.upper()}_BASE_URL"):
            if _env(name):
                return f"{_env(name)} (from {name})"
        return f"{provider}'s default endpoint"

    def _scrub(self, text: str) -> str:
        """Remove the API key (and anything else secret-looking) from an error message."""
        secrets = {
            value
            for name, value in self.config.extra_params.items()
            if isinstance(value, str) and len(value) >= 4 and is_secret_name(name)
        }
        # LiteLLM also reads keys from the environment (OPENAI_API_KEY, ...), and a proxy or a
        # misbehaving endpoint may echo the key it got; short values would over-match.
        secrets.update(v for n, v in os.environ.items() if len(v) >= 8 and is_secret_name(n))
        for value in sorted(secrets, key=len, reverse=True):
            text = text.replace(value, "***")
        return text


def _latency_ms(wire: list[float], started: float) -> float:
    """The answer's time on the wire (see :mod:`promptcanary.providers.wire_time`); the whole
    call's time for a provider whose client is not httpx (nothing was recorded)."""
    seconds = wire[-1] if wire else time.perf_counter() - started
    return round(seconds * 1000, 2)


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def _blank_key_variables(prefix: str) -> list[str]:
    """``<PREFIX>_API_KEY`` when it is set but blank (an unset secret in a workflow's ``env:``)."""
    name = f"{prefix}_API_KEY"
    if name not in os.environ or _env(name):
        return []
    # Another credential variable of the provider (ANTHROPIC_AUTH_TOKEN, …) may stand in for it.
    others = [
        k
        for k, v in os.environ.items()
        if k.startswith(f"{prefix}_") and k != name and v.strip() and ("KEY" in k or "TOKEN" in k)
    ]
    return [] if others else [name]


def _tool_call(call: Any) -> ToolCall:
    function = getattr(call, "function", None)
    name = getattr(function, "name", None) or ""
    raw = getattr(function, "arguments", None)
    arguments: Any
    if isinstance(raw, str):
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            arguments = None
    else:  # some providers hand back already-parsed arguments
        arguments, raw = raw, json.dumps(raw) if raw is not None else ""
    return ToolCall(name=name, arguments=arguments, arguments_raw=raw, id=getattr(call, "id", None))


def _small_raw(response: Any, usage: Any) -> dict[str, Any]:
    """The few fields of the provider's answer worth keeping (a 5,000-prompt run keeps them all)."""
    raw: dict[str, Any] = {}
    for field in ("id", "model", "system_fingerprint"):
        value = getattr(response, field, None)
        if isinstance(value, str):
            raw[field] = value
    if usage is not None:
        raw["usage"] = {
            k: v
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
            if isinstance(v := getattr(usage, k, None), int)
        }
    return raw


def _connection_failed(exc: BaseException) -> bool:
    import httpx
    from openai import APIConnectionError

    # A timeout is a connection error to the OpenAI SDK too; it is reported as a timeout.
    return _caused_by(exc, (httpx.ConnectError, APIConnectionError)) and not _caused_by(
        exc, (httpx.TimeoutException,)
    )


def _caused_by(
    exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]
) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _strip_prefix(detail: str) -> str:
    """LiteLLM's message without its ``litellm.<Exception>:`` prefix."""
    head, sep, rest = detail.partition(": ")
    return rest if sep and head.startswith("litellm.") else detail


def _clean(detail: str) -> str:
    # LiteLLM prefixes its messages with the exception names ("litellm.RateLimitError: ...").
    for marker in ("OpenAIException - ", "Exception - "):
        if marker in detail:
            detail = detail.split(marker, 1)[1]
            break
    detail = " ".join(detail.split())
    return detail if len(detail) <= _MAX_MESSAGE else detail[: _MAX_MESSAGE - 1] + "…"


def _response_headers(response: Any) -> dict[str, str] | None:
    """The rate-limit headers of an answer, as LiteLLM hands them back (``_hidden_params``)."""
    hidden = getattr(response, "_hidden_params", None)
    headers = hidden.get("additional_headers") if isinstance(hidden, Mapping) else None
    if not isinstance(headers, Mapping):
        headers = getattr(response, "_response_headers", None)
    return (rate_limit_header_names(headers) or None) if isinstance(headers, Mapping) else None


def _error_headers(exc: BaseException) -> dict[str, str] | None:
    """The rate-limit headers of a failed answer (a 429 usually carries them)."""
    for headers in _headers_of(exc):
        kept = rate_limit_header_names(headers)
        if kept:
            return kept
    return None


def _headers_of(exc: BaseException) -> list[Mapping[str, str]]:
    found = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    )
    return [h for h in found if isinstance(h, Mapping) and h]


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from the ``Retry-After`` (or ``retry-after-ms``) header of the failed answer."""
    for headers in _headers_of(exc):
        wait = retry_after(headers)
        if wait is not None:
            return wait
    return None


# ── embeddings (semantic_drift:, semantic_similarity) ──


class LiteLLMEmbedder(BaseEmbeddingProvider):
    """Embeddings through ``litellm.aembedding``: any embedding model LiteLLM knows, or any
    OpenAI-compatible ``/v1/embeddings`` server through ``api_base``.

    Model checks, API keys, error mapping (which errors are transient) and secret scrubbing are
    the chat provider's, so a 429 from an embedding endpoint is retried like one from a model.
    """

    def __init__(self, model_id: str, **params: Any) -> None:
        super().__init__(model_id)
        self.params = {k: v for k, v in params.items() if v is not None}
        self._chat = LiteLLMProvider(model_id, seed=None, **self.params)

    def check_environment(self) -> None:
        self._chat.check_environment()

    async def aembed(self, texts: Sequence[str], *, timeout: float) -> EmbeddingBatch:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            **self.params,
            "model": self.model_id,
            "input": list(texts),
            "timeout": timeout,
            "num_retries": 0,  # the answer phase retries
            "max_retries": 0,
        }
        if self._chat._needs_placeholder_key():
            kwargs["api_key"] = PLACEHOLDER_API_KEY
        try:
            response = await litellm.aembedding(**kwargs)
        except Exception as exc:  # see LiteLLMProvider.complete()
            raise self._chat._error(exc, timeout) from exc
        items = sorted(getattr(response, "data", None) or [], key=_embedding_index)
        vectors = [_embedding_values(item) for item in items]
        usage = getattr(response, "usage", None)
        tokens = getattr(usage, "prompt_tokens", None)
        tokens = tokens if isinstance(tokens, int) else None
        cost = cost_usd(self.model_id, tokens, 0) if tokens is not None else None
        return EmbeddingBatch(vectors, tokens, cost)

    async def aclose(self) -> None:
        await self._chat.aclose()


def _embedding_index(item: Any) -> int:
    index = item.get("index") if isinstance(item, dict) else getattr(item, "index", None)
    return index if isinstance(index, int) else 0


def _embedding_values(item: Any) -> Sequence[float]:
    values = item.get("embedding") if isinstance(item, dict) else getattr(item, "embedding", None)
    return values if isinstance(values, list) else []
