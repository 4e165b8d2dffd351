"""Build the providers of a run from a suite's or the action's model entries, and check them all
before the first request.

``replay:<path>`` answers from a recording (see :mod:`promptcanary.providers.replay`); any other
string is a LiteLLM model id. ``temperature``, ``max_tokens`` and ``seed`` in ``params`` configure
the model; every other parameter (``api_base``, ``api_key``, those of a ``litellm:`` mapping, …)
is passed through to LiteLLM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptcanary.core.run.answer_phase import AnswerService
from promptcanary.core.run.provider import BaseLLMProvider

if TYPE_CHECKING:
    from promptcanary.core.models import BaselineSnapshot
    from promptcanary.core.spec import ModelSpec, SuiteSpec

REPLAY_PREFIX = "replay:"
_CONFIG_KEYS = ("temperature", "max_tokens", "seed")
_RATE_KEYS = ("rpm", "tpm")  # the runner's pacing, never sent to the provider

Factory = Callable[[str, dict[str, Any], Path], BaseLLMProvider]
"""Builds one provider from a model id, its parameters and the folder of relative replay paths."""


def make_provider(
    model: str, params: dict[str, Any] | None = None, *, base_dir: Path | None = None
) -> BaseLLMProvider:
    """The provider for ``model``; a relative replay path is resolved against ``base_dir``."""
    options = dict(params or {})
    rates = {k: options.pop(k) for k in _RATE_KEYS if k in options}
    provider = _provider(model, options, base_dir)
    if not rates:
        return provider
    config = provider.config
    return provider.with_config(type(config).model_validate({**config.model_dump(), **rates}))


def _provider(model: str, options: dict[str, Any], base_dir: Path | None) -> BaseLLMProvider:
    config_keys = {k: options.pop(k) for k in _CONFIG_KEYS if k in options}
    if model.startswith(REPLAY_PREFIX):
        from promptcanary.providers.replay import ReplayProvider

        path = Path(model[len(REPLAY_PREFIX) :].strip())
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        replay = ReplayProvider(path)
        # The recorded answers do not change, but the run should still report its parameters.
        if config_keys:
            return replay.with_config(replay.config.model_copy(update=config_keys))
        return replay

    from promptcanary.providers.litellm import LiteLLMProvider

    return LiteLLMProvider(model, **config_keys, **options)


def _make(model: str, params: dict[str, Any], base_dir: Path) -> BaseLLMProvider:
    return make_provider(model, params, base_dir=base_dir)


def build_providers(
    models: Sequence[tuple[ModelSpec, Path]], factory: Factory = _make
) -> list[BaseLLMProvider]:
    """The provider of every model of a run, each checked before any of them is asked anything:
    a model string LiteLLM does not know (``ModelConfigError``), a missing API key
    (``MissingCredentialsError``), an unreadable recording (``ReplayFileError``) stop the run
    before the first request, not after the earlier models ran. The CLI and the action call it.
    """
    providers = [factory(spec.model, dict(spec.params), base_dir) for spec, base_dir in models]
    for provider in providers:
        provider.check_environment()
    return providers


def providers_for(suite: SuiteSpec, *, base_dir: Path | None = None) -> list[BaseLLMProvider]:
    """The checked providers of a suite's ``models:`` (relative replay paths resolve against
    ``base_dir``, by default the working directory: give the suite file's folder)."""
    folder = base_dir if base_dir is not None else Path.cwd()
    return build_providers([(spec, folder) for spec in suite.models])


def embedding_model_of(suite: SuiteSpec) -> tuple[str, dict[str, Any]] | None:
    """The suite's embedding model and its parameters: ``semantic_drift:``'s, else the one its
    ``semantic_similarity`` probes name; ``None`` when nothing needs one.

    Raises:
        ModelConfigError: probes that name different embedding models (one model a run).
    """
    from promptcanary.core.probes.served import EMBEDDING, ServedProbe
    from promptcanary.providers.errors import ModelConfigError

    named = {
        (str(getattr(b.probe, "embedding_model", "")), str(getattr(b.probe, "api_base", "") or ""))
        for b in suite.bindings
        if isinstance(b.probe, ServedProbe) and EMBEDDING in getattr(b.probe, "services", ())
    }
    named.discard(("", ""))
    if suite.semantic_drift is not None:
        spec = suite.semantic_drift
        others = sorted(m for m, _ in named if m and m != spec.embedding_model)
        if others:
            raise ModelConfigError(
                f"a semantic_similarity probe names embedding model {others[0]!r} but "
                f"semantic_drift uses {spec.embedding_model!r}: a run embeds with one model; "
                "drop the probe's embedding_model"
            )
        return spec.embedding_model, spec.params
    if len(named) > 1:
        models = ", ".join(sorted(m for m, _ in named))
        raise ModelConfigError(
            f"the suite's semantic_similarity probes name different embedding models ({models}): "
            "a run embeds with one model; set it once in `semantic_drift: embedding_model`"
        )
    if not named:
        return None
    model, api_base = named.pop()
    return model, {"api_base": api_base} if api_base else {}


def services_for(suite: SuiteSpec) -> list[AnswerService]:
    """The answer services a suite needs (its embedding model through LiteLLM), checked before
    the first request: an unknown model (``ModelConfigError``) or a missing key
    (``MissingCredentialsError``) stops the run before it starts."""
    found = embedding_model_of(suite)
    if found is None:
        return []
    from promptcanary.core.run.embedder import EmbeddingService
    from promptcanary.providers.litellm import LiteLLMEmbedder

    model, params = found
    service = EmbeddingService(LiteLLMEmbedder(model, **params))
    service.check_environment()
    return [service]


def judge_services_for(
    suite: SuiteSpec,
    *,
    base_dir: Path | None = None,
    baseline: BaselineSnapshot | None = None,
) -> list[AnswerService]:
    """The LLM judge a suite names (``llm_judge`` probes, ``judge_checks:``) through LiteLLM,
    priced by LiteLLM's cost map; none when the suite judges nothing. Pairwise probes compare
    with ``baseline``'s answers."""
    from promptcanary.core.run.judge import judge_services
    from promptcanary.providers.litellm import cost_usd

    return judge_services(
        suite,
        lambda model, params: make_provider(model, params, base_dir=base_dir),
        baseline=baseline,
        cost=cost_usd,
    )
