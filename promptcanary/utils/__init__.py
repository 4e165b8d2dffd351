"""PromptCanary 0.2.2 shipped plotting helpers here (``plot_score_history`` and friends, on plotly).

This engine does not: importing them fails with a message saying what to use instead.
"""

from __future__ import annotations

from typing import Any

_PLOTS = ("plot_drift_timeline", "plot_probe_heatmap", "plot_score_history")


def __getattr__(name: str) -> Any:
    if name in _PLOTS or name == "visualization":
        raise ImportError(
            f"promptcanary.utils.{name} (PromptCanary 0.2.2's plots) is not part of this "
            "promptcanary: plot from the run JSON (`promptcanary run --output-json`, "
            "CanaryRunResult.model_dump()) or read the markdown report"
        )
    raise AttributeError(f"module 'promptcanary.utils' has no attribute {name!r}")
