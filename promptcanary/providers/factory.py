"""Build a provider from a suite's or the action's model entry.

``replay:<path>`` answers from a recording (see :mod:`promptcanary.providers.replay`); any other
string is a LiteLLM model id. ``temperature``, ``max_tokens`` and ``seed`` in ``params`` configure
the model; every other parameter (``api_base``, ``api_key``, ``response_format``, …) is passed
through to LiteLLM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptcanary.core.run.provider import BaseLLMProvider

REPLAY_PREFIX = "replay:"
_CONFIG_KEYS = ("temperature", "max_tokens", "seed")


def make_provider(
    model: str, params: dict[str, Any] | None = None, *, base_dir: Path | None = None
) -> BaseLLMProvider:
    """The provider for ``model``; a relative replay path is resolved against ``base_dir``."""
    options = dict(params or {})
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
