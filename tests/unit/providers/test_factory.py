"""make_provider: replay recordings or LiteLLM models from a model entry."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from promptcanary.providers.factory import make_provider
from promptcanary.providers.litellm import LiteLLMProvider
from promptcanary.providers.replay import ReplayProvider


def test_replay_path_is_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").write_text(
        json.dumps({"prompt_id": "a", "content": "x", "model": "openai/m"}) + "\n"
    )
    provider = make_provider("replay:rec.jsonl", base_dir=tmp_path)
    assert isinstance(provider, ReplayProvider)
    assert provider.path == tmp_path / "rec.jsonl"


def test_replay_keeps_run_parameters(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").write_text(json.dumps({"prompt_id": "a", "content": "x"}) + "\n")
    provider = make_provider("replay:rec.jsonl", {"temperature": 0.3}, base_dir=tmp_path)
    assert provider.config.temperature == 0.3


def test_litellm_model_splits_config_and_extra_params() -> None:
    provider = make_provider(
        "openai/gpt-4o-mini",
        {
            "temperature": 0.2,
            "max_tokens": 64,
            "seed": None,
            "api_base": "http://h/v1",
            "top_p": 0.5,
        },
    )
    assert isinstance(provider, LiteLLMProvider)
    config = provider.config
    assert (config.model_id, config.temperature, config.max_tokens, config.seed) == (
        "openai/gpt-4o-mini",
        0.2,
        64,
        None,
    )
    assert config.extra_params == {"api_base": "http://h/v1", "top_p": 0.5}


def test_defaults_without_params() -> None:
    config = make_provider("anthropic/claude-x").config
    assert (config.temperature, config.max_tokens, config.seed, config.extra_params) == (
        0.0,
        1024,
        42,
        {},
    )


def test_building_a_provider_does_not_import_litellm() -> None:
    # Checked in a fresh interpreter: this test process may have imported LiteLLM already.
    import subprocess

    code = (
        "import sys; from promptcanary.providers.factory import make_provider; "
        "make_provider('openai/x', {'api_key': 'k'}); print('litellm' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


def test_providers_for_builds_and_checks_every_model_of_a_suite(tmp_path: Path) -> None:
    import pytest

    from promptcanary.core.models import CanaryPrompt
    from promptcanary.core.probes import get_probe_registry
    from promptcanary.core.spec import ModelSpec, SuiteSpec
    from promptcanary.providers import providers_for
    from promptcanary.providers.errors import ModelConfigError

    (tmp_path / "rec.jsonl").write_text(json.dumps({"prompt_id": "a", "content": "x"}) + "\n")
    probe = get_probe_registry().get("json_validity")()
    prompts = [CanaryPrompt(id="a", text="x")]
    good = SuiteSpec("s", prompts, [probe], models=[ModelSpec("replay:rec.jsonl")])
    bad = SuiteSpec("s", prompts, [probe], models=[*good.models, ModelSpec("gpt-9000")])

    (provider,) = providers_for(good, base_dir=tmp_path)
    assert isinstance(provider, ReplayProvider)
    with pytest.raises(ModelConfigError, match="gpt-9000"):
        providers_for(bad, base_dir=tmp_path)
