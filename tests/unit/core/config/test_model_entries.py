"""A suite's ``models:`` mappings: known keys, ``litellm:`` passthrough, misspellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcanary.core.config.schema import load_suite
from promptcanary.core.config.source import SuiteConfigError
from promptcanary.core.spec import ModelSpec, requested_models

SUITE = """\
name: entries
prompts:
  - id: a
    text: Say hi.
    probes: [{type: json_validity}]
models:
"""


def load(tmp_path: Path, models: str) -> list[ModelSpec]:
    path = tmp_path / "canary.yaml"
    path.write_text(SUITE + models, encoding="utf-8")
    return load_suite(path).models


def test_a_misspelt_model_key_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(SuiteConfigError) as info:
        load(tmp_path, "  - {model: openai/local, tempreature: 0.3}\n")
    assert info.value.line == 7
    assert "unknown key 'tempreature' in model entry 'openai/local'" in info.value.message
    assert "did you mean 'temperature'?" in info.value.message


def test_litellm_parameters_pass_through_under_litellm(tmp_path: Path) -> None:
    (spec,) = load(
        tmp_path,
        "  - model: anthropic/claude-3-5-haiku-20241022\n    temperature: 0.2\n"
        "    litellm: {drop_params: true, top_p: 0.9}\n",
    )
    assert spec.params == {"temperature": 0.2, "drop_params": True, "top_p": 0.9}


@pytest.mark.parametrize(
    ("litellm", "message"),
    [("[drop_params]", "must be a mapping"), ("{temperature: 1}", "'temperature' is set twice")],
)
def test_a_bad_litellm_mapping_is_an_error(tmp_path: Path, litellm: str, message: str) -> None:
    with pytest.raises(SuiteConfigError) as info:
        load(tmp_path, f"  - {{model: openai/x, temperature: 0, litellm: {litellm}}}\n")
    assert message in info.value.message


def test_a_requested_model_takes_the_parameters_of_the_suite_entry_of_its_id() -> None:
    entries = [ModelSpec("openai/local", {"api_base": "http://h/v1"}), ModelSpec("openai/b")]
    chosen = requested_models(["openai/local", " openai/other "], entries)
    assert chosen == [
        ModelSpec("openai/local", {"api_base": "http://h/v1"}),
        ModelSpec("openai/other"),
    ]


def test_rpm_and_tpm_reach_the_provider_config_and_not_litellm(tmp_path: Path) -> None:
    from promptcanary.providers.factory import make_provider

    (spec,) = load(
        tmp_path, "  - {model: openai/x, api_base: 'http://h/v1', rpm: 500, tpm: 90000}\n"
    )
    assert spec.params == {"api_base": "http://h/v1", "rpm": 500, "tpm": 90000}
    provider = make_provider(spec.model, spec.params)
    assert (provider.config.rpm, provider.config.tpm) == (500, 90000)
    assert "rpm" not in provider.config.extra_params and "tpm" not in provider.config.extra_params


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "lots", "true"])
def test_a_bad_rpm_names_its_line_and_the_fix(tmp_path: Path, value: str) -> None:
    with pytest.raises(SuiteConfigError) as info:
        load(tmp_path, f"  - model: openai/x\n    rpm: {value}\n")
    assert info.value.line == 8
    assert "'rpm' of model entry 'openai/x' must be a whole number of requests per minute" in (
        info.value.message
    )


def test_max_tokens_above_the_cap_in_a_model_entry_is_an_error_naming_the_field(
    tmp_path: Path,
) -> None:
    with pytest.raises(SuiteConfigError) as info:
        load(tmp_path, "  - {model: openai/local, max_tokens: 99999999999999999999999}\n")
    assert info.value.line == 7
    assert info.value.message == (
        "'max_tokens' of model entry 'openai/local' must be an integer ≥ 1 and ≤ 1000000, "
        "got 99999999999999999999999"
    )
    assert load(tmp_path, "  - {model: openai/local, max_tokens: 1000000}\n")[0].params == {
        "max_tokens": 1_000_000
    }
