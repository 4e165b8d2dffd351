"""Built-in probes, the probe contract and the registry object.

Importing this package registers every built-in probe, so YAML ``type:`` names resolve.
"""

from promptcanary.core.probes.base import (
    BaseProbe,
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
from promptcanary.core.probes.llm_judge import LLMJudgeProbe
from promptcanary.core.probes.reasoning import (
    ConfidenceLanguageProbe,
    DirectAnswerProbe,
    StepByStepProbe,
    VerbosityProbe,
)
from promptcanary.core.probes.registry import (
    DEFAULT_REGISTRY,
    ProbeRegistry,
    ProbeRegistryError,
    active_registry,
)
from promptcanary.core.probes.safety import RefusalProbe, SafetyLanguageProbe
from promptcanary.core.probes.semantic import SemanticSimilarityProbe
from promptcanary.core.probes.tool_use import (
    ToolCallArgsProbe,
    ToolCallNameProbe,
    ToolCallPresenceProbe,
    ToolCallSchemaProbe,
)

__all__ = [
    "DEFAULT_REGISTRY",
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
    "LLMJudgeProbe",
    "MarkdownHeaderProbe",
    "ProbeRegistry",
    "ProbeRegistryError",
    "RefusalProbe",
    "ResponseLengthProbe",
    "SafetyLanguageProbe",
    "SemanticSimilarityProbe",
    "SentimentProbe",
    "StepByStepProbe",
    "ToolCallArgsProbe",
    "ToolCallNameProbe",
    "ToolCallPresenceProbe",
    "ToolCallSchemaProbe",
    "VerbosityProbe",
    "active_registry",
    "get_probe",
    "get_probe_registry",
    "probe",
]
