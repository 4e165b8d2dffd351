"""docs/providers.md's recipes: each model string is one LiteLLM knows, under the provider the
row names, and the variables LiteLLM asks for are among those the row lists."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from promptcanary.providers.litellm import import_litellm

PAGE = Path(__file__).resolve().parents[3] / "docs" / "providers.md"
EXPECTED_PROVIDER = {
    "OpenAI": "openai",
    "Azure OpenAI": "azure",
    "Anthropic": "anthropic",
    "AWS Bedrock": "bedrock",
    "Google Vertex AI": "vertex_ai",
    "Ollama": "ollama",
}


def recipes() -> list[tuple[str, str, str]]:
    section = PAGE.read_text("utf-8").split("## Recipes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([^|]+) \| `([^`]+)` \| ([^\n]+) \|$", section, flags=re.M)
    return [(name.strip(), model, env) for name, model, env in rows]


def test_every_recipe_of_the_issue_is_on_the_page() -> None:
    names = [name for name, _, _ in recipes()]
    assert set(EXPECTED_PROVIDER) <= set(names)
    assert any(name.startswith("Any OpenAI-compatible") for name in names)


@pytest.mark.parametrize(("name", "model", "env"), recipes())
def test_a_recipes_model_string_and_variables_are_litellms(
    name: str, model: str, env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm = import_litellm()
    model = model.replace("<your deployment name>", "my-deployment").replace(
        "<the server's model name>", "local"
    )
    _, provider, _, _ = litellm.get_llm_provider(model=model)
    assert provider in litellm.provider_list
    assert provider == EXPECTED_PROVIDER.get(name, "openai")
    for variable in list(os.environ):
        monkeypatch.delenv(variable)
    missing = litellm.validate_environment(model=model)["missing_keys"]
    listed = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", env))
    assert set(missing) <= listed
