"""The public names of ``promptcanary``: changed only on purpose, each resolving to a real object.

The package resolves them lazily (``__getattr__``) so that ``import promptcanary`` stays fast;
this test makes sure every advertised name really resolves and nothing slips in unlisted.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import promptcanary

EXPECTED = [
    "BaseProbe",
    "BaselineSnapshot",
    "CanaryPrompt",
    "CanaryRunResult",
    "CanarySuite",
    "ConfidenceLanguageProbe",
    "DirectAnswerProbe",
    "DriftReport",
    "DriftReporter",
    "DriftSeverity",
    "ExpectedKeywordsProbe",
    "FactualConsistencyProbe",
    "FileBaselineStore",
    "JsonKeyOrderProbe",
    "JsonSchemaProbe",
    "JsonValidityProbe",
    "KeywordPresenceProbe",
    "LLMResponse",
    "LiteLLMProvider",
    "MarkdownHeaderProbe",
    "ProbeCategory",
    "ProbeComparison",
    "ProbeResult",
    "ProviderConfig",
    "RefusalProbe",
    "ReplayProvider",
    "ReportFormat",
    "Reporter",
    "ResponseLengthProbe",
    "SafetyLanguageProbe",
    "SentimentProbe",
    "StepByStepProbe",
    "ToolCallArgsProbe",
    "ToolCallNameProbe",
    "ToolCallPresenceProbe",
    "ToolCallSchemaProbe",
    "VerbosityProbe",
    "__version__",
    "compare",
    "get_probe",
    "get_probe_registry",
    "probe",
]


def test_all_lists_exactly_the_public_names_sorted() -> None:
    assert promptcanary.__all__ == sorted(EXPECTED)


@pytest.mark.parametrize("name", [n for n in EXPECTED if n != "__version__"])
def test_every_public_name_resolves_to_the_documented_object(name: str) -> None:
    obj = getattr(promptcanary, name)
    assert obj.__name__ == name
    assert obj.__module__.startswith("promptcanary.")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'CanarySuit'"):
        promptcanary.CanarySuit  # noqa: B018


def test_the_spec_quick_start_imports_without_loading_litellm() -> None:
    # `from promptcanary import CanarySuite, LiteLLMProvider` is the documented first line.
    code = (
        "import sys\n"
        "from promptcanary import CanarySuite, LiteLLMProvider\n"
        "LiteLLMProvider('openai/gpt-4o-mini')\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
