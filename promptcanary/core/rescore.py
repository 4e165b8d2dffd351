"""Re-scoring: apply the current suite's probes to a baseline's stored responses.

When probes were added, removed or re-parameterised since the baseline, comparing old scores
with new ones would report the probe edit as model drift. Scoring the baseline's own responses
with today's probes compares like with like; prompts without a stored response stay "new".
"""

from __future__ import annotations

from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.scoring import score_responses
from promptcanary.core.suite import CanarySuite


def needs_rescore(snapshot: BaselineSnapshot, suite: CanarySuite) -> bool:
    """True when the baseline was scored with a different probe configuration."""
    return snapshot.run_result.provenance.probe_config_hash != suite.probe_config_hash


def rescore(snapshot: BaselineSnapshot, suite: CanarySuite) -> tuple[BaselineSnapshot, int]:
    """The snapshot with every stored response re-scored by ``suite``; and how many were."""
    run = snapshot.run_result
    known = {p.id for p in suite.prompts}
    # Responses to prompts removed from the suite stay unscored: the comparison lists them.
    rescored = sum(1 for response in run.llm_responses if response.prompt_id in known)
    results = score_responses(suite, run.llm_responses)
    provenance = run.provenance.model_copy(update={"probe_config_hash": suite.probe_config_hash})
    new_run = run.model_copy(update={"probe_results": results, "provenance": provenance})
    return snapshot.model_copy(update={"run_result": new_run}), rescored
