"""PromptCanary: catch silent behavioural drift in LLMs with canary prompts and probes.

Public names are resolved lazily so that ``import promptcanary`` stays fast (LiteLLM, which takes
seconds to import, is only loaded when a LiteLLM provider actually makes a call). The names of
PromptCanary 0.2.2's top level (probes, reporters, registry functions) are all here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptcanary._lazy import lazy_exports
from promptcanary.core.run import default_services

if TYPE_CHECKING:
    from promptcanary.core.models import BaselineSnapshot
    from promptcanary.core.run.answer_phase import AnswerService
    from promptcanary.core.spec import SuiteSpec

__version__ = "0.1.0"


def _litellm_services(suite: SuiteSpec, baseline: BaselineSnapshot | None) -> list[AnswerService]:
    """What ``CanarySuite.run`` uses when given no services: the embedding model and the judge
    the suite names, through LiteLLM (imported here, when a suite asks, not at import)."""
    from promptcanary.providers.factory import judge_services_for, services_for

    return [*services_for(suite), *judge_services_for(suite, baseline=baseline)]


default_services.install(_litellm_services)

_EXPORTS = {
    "BaseProbe": "promptcanary.core.probes",
    "BaselineSnapshot": "promptcanary.core.models",
    "CanaryPrompt": "promptcanary.core.models",
    "CanaryRunResult": "promptcanary.core.models",
    "CanarySuite": "promptcanary.core.suite",
    "ConfidenceLanguageProbe": "promptcanary.core.probes",
    "DirectAnswerProbe": "promptcanary.core.probes",
    "DriftReport": "promptcanary.core.models",
    "DriftReporter": "promptcanary.core.reporter",
    "DriftSeverity": "promptcanary.core.models",
    "ExpectedKeywordsProbe": "promptcanary.core.probes",
    "FactualConsistencyProbe": "promptcanary.core.probes",
    "FileBaselineStore": "promptcanary.storage.file",
    "JsonKeyOrderProbe": "promptcanary.core.probes",
    "JsonSchemaProbe": "promptcanary.core.probes",
    "JsonValidityProbe": "promptcanary.core.probes",
    "KeywordPresenceProbe": "promptcanary.core.probes",
    "LLMResponse": "promptcanary.core.models",
    "LiteLLMProvider": "promptcanary.providers.litellm",
    "MarkdownHeaderProbe": "promptcanary.core.probes",
    "ProbeCategory": "promptcanary.core.models",
    "ProbeComparison": "promptcanary.core.models",
    "ProbeResult": "promptcanary.core.models",
    "ProviderConfig": "promptcanary.core.models",
    "RefusalProbe": "promptcanary.core.probes",
    "ReplayProvider": "promptcanary.providers.replay",
    "ReportFormat": "promptcanary.core.models",
    "Reporter": "promptcanary.core.reporter",
    "ResponseLengthProbe": "promptcanary.core.probes",
    "SafetyLanguageProbe": "promptcanary.core.probes",
    "SentimentProbe": "promptcanary.core.probes",
    "StepByStepProbe": "promptcanary.core.probes",
    "ToolCallArgsProbe": "promptcanary.core.probes",
    "ToolCallNameProbe": "promptcanary.core.probes",
    "ToolCallPresenceProbe": "promptcanary.core.probes",
    "ToolCallSchemaProbe": "promptcanary.core.probes",
    "VerbosityProbe": "promptcanary.core.probes",
    "compare": "promptcanary.core.comparator",
    "get_probe": "promptcanary.core.probes",
    "get_probe_registry": "promptcanary.core.probes",
    "probe": "promptcanary.core.probes",
}

__all__ = sorted([*_EXPORTS, "__version__"])
__getattr__ = lazy_exports(__name__, _EXPORTS)
