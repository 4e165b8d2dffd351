"""CanarySuite identities: probe keys and the hashes that tell an edit from drift."""

from __future__ import annotations

from promptcanary.core.models import CanaryPrompt
from promptcanary.core.probes import JsonValidityProbe, KeywordPresenceProbe
from promptcanary.core.suite import CanarySuite


def _suite(*prompts: CanaryPrompt, system: str | None = None) -> CanarySuite:
    return CanarySuite("s", list(prompts), [JsonValidityProbe()], default_system_prompt=system)


def test_prompt_hash_changes_with_what_the_model_receives_only() -> None:
    base = CanaryPrompt(id="p", text="Return JSON", description="old note")
    same = _suite(base.model_copy(update={"description": "new note", "tags": ["x"]}))
    edited = _suite(base.model_copy(update={"text": "Return JSON, please"}))
    with_tools = _suite(base.model_copy(update={"tools": [{"type": "function"}]}))
    original = _suite(base).prompt_hashes["p"]

    assert same.prompt_hashes["p"] == original  # notes and tags are not sent
    assert edited.prompt_hashes["p"] != original
    assert with_tools.prompt_hashes["p"] != original
    # The suite-wide system prompt is part of what a prompt without its own receives.
    assert _suite(base, system="Be terse.").prompt_hashes["p"] != original


def test_probe_keys_tell_two_parameter_sets_of_one_probe_apart() -> None:
    suite = CanarySuite(
        "s",
        [CanaryPrompt(id="p", text="t")],
        [
            KeywordPresenceProbe(required_keywords=["a"]),
            KeywordPresenceProbe(required_keywords=["b"]),
        ],
    )
    keys = [b.key for b in suite.bindings]
    assert len(set(keys)) == 2 and all(k.startswith("keyword_presence-") for k in keys)
    assert suite.probe_config_hash != _suite(CanaryPrompt(id="p", text="t")).probe_config_hash
