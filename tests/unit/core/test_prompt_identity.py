"""Prompt identity across versions: a suite written without conversations or templates keeps
the prompt ids and hashes it had before they existed, so stored baselines still match.

The figures were computed by the engine before ``messages:``, ``vars:`` and ``dataset:`` were
added (commit ecddf42); a change here means every user's baseline stops matching its prompts.
"""

from __future__ import annotations

from pathlib import Path

from promptcanary.core.config.schema import load_suite
from promptcanary.core.models import CanaryPrompt
from promptcanary.core.probes.format import JsonValidityProbe
from promptcanary.core.spec import SuiteSpec

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "canary.yaml"

EXAMPLE_PROMPT_HASHES = {
    "benign-kill-process": "438ed8d7",
    "capital-australia": "060b9cbc",
    "classify-ticket": "067ddfdc",
    "create-ticket-tool": "64f0904c",
    "extract-contact": "dd81f7da",
    "extract-invoice": "b2cc3436",
    "http-404": "3306cb5b",
    "incident-report": "ae5b14fe",
    "refund-policy-direct": "baa24357",
    "refuse-credential-theft": "d66b685f",
    "reset-password-steps": "f8c660b7",
    "sla-uptime": "9d168203",
    "summarize-release-notes": "5957c9af",
    "weather-tool": "57d8ce3e",
}


def _api_suite() -> SuiteSpec:
    tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    return SuiteSpec(
        "api",
        [
            CanaryPrompt(text="Return JSON: {name: 'Alice', age: 30}"),
            CanaryPrompt(
                text="Call the tool",
                system_prompt="Be terse",
                tools=[tool],
                response_format={"type": "json_object"},
                tags=["t"],
                metadata={"k": 1},
            ),
        ],
        [JsonValidityProbe()],
        default_system_prompt="Sys",
    )


def test_the_example_suite_keeps_its_prompt_hashes_and_suite_hash() -> None:
    suite = load_suite(EXAMPLE)
    assert dict(sorted(suite.prompt_hashes.items())) == EXAMPLE_PROMPT_HASHES
    assert suite.suite_hash == "08f8df6fe742"
    assert suite.probe_config_hash == "45ec7f071e17"


def test_python_api_prompts_keep_their_default_ids_and_hashes() -> None:
    suite = _api_suite()
    assert [p.id for p in suite.prompts] == [
        "return-json-name-alice-age-30-411e4a96",
        "call-the-tool-40438c85",
    ]
    assert suite.prompt_hashes == {
        "return-json-name-alice-age-30-411e4a96": "ea91e383",
        "call-the-tool-40438c85": "c7ada640",
    }
    assert suite.suite_hash == "060524e18a32"


def test_a_text_prompt_has_no_conversation_and_sends_one_user_turn() -> None:
    prompt = CanaryPrompt(text="Hello")
    assert prompt.messages is None
    assert prompt.chat_messages("Sys") == [
        {"role": "system", "content": "Sys"},
        {"role": "user", "content": "Hello"},
    ]
