"""Built-in probes, the probe contract and the registry.

Importing this package registers every built-in probe, so YAML ``type:`` names resolve.
"""

from promptcanary.core.probes.base import (
    BaseProbe,
    ProbeRegistryError,
    get_probe,
    get_probe_registry,
    probe,
)
from promptcanary.core.probes.factual import FactualConsistencyProbe, SentimentProbe
from promptcanary.core.probes.format import (
    ExpectedKeywordsProbe,
    JsonKeyOrderProbe,
    JsonPathProbe,
    JsonSchemaProbe,
    JsonValidityProbe,
    KeywordPresenceProbe,
    MarkdownHeaderProbe,
    ResponseLengthProbe,
)
from promptcanary.core.probes.reasoning import (
    ConfidenceLanguageProbe,
    DirectAnswerProbe,
    StepByStepProbe,
    VerbosityProbe,
)
from promptcanary.core.probes.safety import RefusalProbe, SafetyLanguageProbe
from promptcanary.core.probes.tool_use import (
    ToolCallArgsProbe,
    ToolCallNameProbe,
    ToolCallPresenceProbe,
    ToolCallSchemaProbe,
)

__all__ = [
    "BaseProbe",
    "ConfidenceLanguageProbe",
    "DirectAnswerProbe",
    "ExpectedKeywordsProbe",
    "FactualConsistencyProbe",
    "JsonKeyOrderProbe",
    "JsonPathProbe",
    "JsonSchemaProbe",
    "JsonValidityProbe",
    "KeywordPresenceProbe",
    "MarkdownHeaderProbe",
    "ProbeRegistryError",
    "RefusalProbe",
    "ResponseLengthProbe",
    "SafetyLanguageProbe",
    "SentimentProbe",
    "StepByStepProbe",
    "ToolCallArgsProbe",
    "ToolCallNameProbe",
    "ToolCallPresenceProbe",
    "ToolCallSchemaProbe",
    "VerbosityProbe",
    "get_probe",
    "get_probe_registry",
    "probe",
]
