"""The engine's core: models, probes, suite, comparison, statistics and reports.

The names PromptCanary 0.2.2 exported here resolve lazily (importing ``promptcanary.core.models``
must not import the whole engine).
"""

from __future__ import annotations

from promptcanary._lazy import lazy_exports

_EXPORTS = {
    "BaselineSnapshot": "promptcanary.core.models",
    "CanaryPrompt": "promptcanary.core.models",
    "CanaryRunResult": "promptcanary.core.models",
    "CanarySuite": "promptcanary.core.suite",
    "DriftReport": "promptcanary.core.models",
    "DriftReporter": "promptcanary.core.reporter",
    "DriftSeverity": "promptcanary.core.models",
    "LLMResponse": "promptcanary.core.models",
    "ProbeCategory": "promptcanary.core.models",
    "ProbeComparison": "promptcanary.core.models",
    "ProbeResult": "promptcanary.core.models",
    "ProviderConfig": "promptcanary.core.models",
    "ReportFormat": "promptcanary.core.models",
    "Reporter": "promptcanary.core.reporter",
    "compare": "promptcanary.core.comparator",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
