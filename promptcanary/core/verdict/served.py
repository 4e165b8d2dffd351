"""Which model answered: the served model ids and fingerprints of a run against its baseline's.

Providers change what stands behind a name (another snapshot behind ``gpt-4o``, a new
``system_fingerprint``, a router falling back to another deployment), and every answer says
which served it. A run that was served by an id or a fingerprint its baseline never saw gets a
finding of its own. A baseline already served by several (a router's mixture) is reported only
when a new one appears: a run that saw part of the mixture has not changed. Answers that name no
served model (a provider that sends none, errored answers) count on neither side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from promptcanary.core.models import CanaryRunResult, LLMResponse


def served_ids(responses: Sequence[LLMResponse]) -> Counter[str]:
    """How many answers each served model id gave."""
    return Counter(r.served_model for r in responses if not r.errored and r.served_model)


def fingerprints(responses: Sequence[LLMResponse]) -> Counter[str]:
    """How many answers each ``system_fingerprint`` gave."""
    return Counter(
        r.system_fingerprint for r in responses if not r.errored and r.system_fingerprint
    )


class ServedModelChange(BaseModel):
    """The finding: this run was served by an id (or fingerprint) the baseline never saw."""

    model_config = ConfigDict(frozen=True)

    model: str
    """The model id the suite asked for (``openai/gpt-4o``)."""
    current: dict[str, int]
    """Served model id → answers, in this run."""
    baseline: dict[str, int]
    current_fingerprints: dict[str, int] = {}
    baseline_fingerprints: dict[str, int] = {}

    @property
    def new_ids(self) -> list[str]:
        """Served ids the baseline never saw (none when either side named none)."""
        if not (self.current and self.baseline):
            return []
        return sorted(set(self.current) - set(self.baseline))

    @property
    def new_fingerprints(self) -> list[str]:
        if not (self.current_fingerprints and self.baseline_fingerprints):
            return []
        return sorted(set(self.current_fingerprints) - set(self.baseline_fingerprints))

    @property
    def message(self) -> str:
        """``openai/gpt-4o answered as gpt-4o-2024-11-20; the baseline as gpt-4o-2024-08-06``."""
        if self.new_ids:
            return (
                f"{self.model} answered as {_listed(self.current)}; "
                f"the baseline as {_listed(self.baseline)}"
            )
        return (
            f"{self.model} answered with system_fingerprint "
            f"{_listed(self.current_fingerprints)}; the baseline with "
            f"{_listed(self.baseline_fingerprints)}"
        )


def _listed(counts: dict[str, int]) -> str:
    if len(counts) == 1:
        return next(iter(counts))
    total = sum(counts.values())
    return " and ".join(f"{k} ({n} of {total})" for k, n in sorted(counts.items()))


def served_change(
    baseline: CanaryRunResult | None, run: CanaryRunResult, model: str | None = None
) -> ServedModelChange | None:
    """The finding when ``run`` was served by an id or fingerprint ``baseline`` never saw;
    ``None`` when it was not, or when either side names none (nothing to compare)."""
    if baseline is None:
        return None
    ids, base_ids = served_ids(run.llm_responses), served_ids(baseline.llm_responses)
    prints = fingerprints(run.llm_responses)
    base_prints = fingerprints(baseline.llm_responses)
    new_id = bool(ids and base_ids and set(ids) - set(base_ids))
    new_print = bool(prints and base_prints and set(prints) - set(base_prints))
    if not (new_id or new_print):
        return None
    return ServedModelChange(
        model=model or run.provider.model_id,
        current=dict(ids),
        baseline=dict(base_ids),
        current_fingerprints=dict(prints),
        baseline_fingerprints=dict(base_prints),
    )
