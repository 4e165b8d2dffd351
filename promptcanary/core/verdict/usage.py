"""Latency, tokens and cost of a run, their change against the baseline, and the usage gates.

Pure: prices come from a :data:`CostLookup` the caller passes in (the LiteLLM provider module
offers one over LiteLLM's bundled cost map), so the engine never imports LiteLLM here.

What is measured, per (suite, model) run, over the answered (not errored) responses:

* latency p50 and p95 over all answers, in milliseconds;
* prompt and completion tokens **per answer**, each prompt weighted equally (the mean over
  prompts of each prompt's mean), so that a prompt sampled more often — adaptive sampling gives
  undecided prompts more answers — does not move the figure;
* cost: the run's total in USD, and per answer (weighted as tokens) for the change.

A change is ``100 * (current / baseline - 1)`` percent. With several samples per prompt on both
sides it carries a 95% interval (:func:`promptcanary.core.stats.bootstrap_change`).

The gates (``max-latency-increase``, ``max-token-increase``, ``max-cost-increase``, in percent)
read p95 latency, completion tokens per answer and cost per answer. Completion tokens, because
they are what the model chose to say: prompt tokens change only when the suite does, and the cost
gate covers both. A gate trips when the change is above its limit and, when there is an interval,
the interval lies above zero (the increase is not sampling noise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from promptcanary.core.models import CanaryRunResult, LLMResponse
from promptcanary.core.stats import Interval, Strata, bootstrap_change, percent_change, quantile

CostLookup = Callable[[str, int, int], float | None]
"""``(model id, prompt tokens, completion tokens) -> USD``; None when the price is unknown."""

Metric = Literal[
    "latency_p50_ms", "latency_p95_ms", "prompt_tokens", "completion_tokens", "cost_per_answer"
]

METRIC_LABELS: dict[Metric, str] = {
    "latency_p50_ms": "p50 latency",
    "latency_p95_ms": "p95 latency",
    "prompt_tokens": "prompt tokens per answer",
    "completion_tokens": "completion tokens per answer",
    "cost_per_answer": "cost per answer",
}


@dataclass(frozen=True)
class UsageStats:
    """Latency, tokens and cost of one run (None: not recorded, or the price is unknown)."""

    answers: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    prompt_tokens: float | None
    completion_tokens: float | None
    cost_usd: float | None
    """The whole run: every answer, every sample."""
    cost_per_answer: float | None

    def value(self, metric: Metric) -> float | None:
        value: float | None = getattr(self, metric)
        return value


@dataclass(frozen=True)
class MetricChange:
    metric: Metric
    baseline: float | None
    current: float | None
    change_pct: float | None
    """None when either side has no value, or the baseline is 0."""
    interval_pct: Interval | None = None

    @property
    def label(self) -> str:
        return METRIC_LABELS[self.metric]


@dataclass(frozen=True)
class UsageComparison:
    current: UsageStats
    baseline: UsageStats | None
    changes: dict[Metric, MetricChange]


@dataclass(frozen=True)
class UsageLimits:
    """The usage gates in percent; None turns a gate off."""

    latency_pct: float | None = None
    tokens_pct: float | None = None
    cost_pct: float | None = None

    def active(self) -> list[tuple[str, Metric, float]]:
        """``(input name, metric, limit)`` of every gate that is on."""
        gates: list[tuple[str, Metric, float | None]] = [
            ("max-latency-increase", "latency_p95_ms", self.latency_pct),
            ("max-token-increase", "completion_tokens", self.tokens_pct),
            ("max-cost-increase", "cost_per_answer", self.cost_pct),
        ]
        return [(name, metric, limit) for name, metric, limit in gates if limit is not None]


@dataclass(frozen=True)
class UsageFinding:
    """A usage gate that tripped: its own kind of finding, never a probe regression."""

    gate: str
    """The input that set the limit, e.g. ``max-token-increase``."""
    limit_pct: float
    change: MetricChange

    @property
    def message(self) -> str:
        c = self.change
        interval = ""
        if c.interval_pct is not None:
            interval = f", 95% interval {c.interval_pct[0]:+.0f}% to {c.interval_pct[1]:+.0f}%"
        return (
            f"{c.label} rose {c.change_pct:+.1f}% ({format_metric(c.metric, c.baseline)} → "
            f"{format_metric(c.metric, c.current)}{interval}), above {self.gate} "
            f"{self.limit_pct:g}%"
        )


def format_metric(metric: Metric, value: float | None) -> str:
    """A value as reports show it; "—" when unknown (never a guess)."""
    if value is None:
        return "—"
    if metric.startswith("latency"):
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
    if metric == "cost_per_answer":
        return format_usd(value)
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def format_usd(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 1:
        return f"${value:.2f}"
    return f"${value:.4f}" if value >= 0.0001 else f"${value:.2g}"


# ------------------------------------------------------------------------------------------------
# measuring


def _strata(
    responses: Sequence[LLMResponse], value: Callable[[LLMResponse], float | None]
) -> Strata | None:
    """Values grouped by prompt; None when any answer lacks the value (no partial figures)."""
    groups: dict[str, list[float]] = {}
    for response in responses:
        v = value(response)
        if v is None:
            return None
        groups.setdefault(response.prompt_id, []).append(float(v))
    return list(groups.values()) or None


def _per_answer(strata: Strata) -> float:
    return sum(sum(s) / len(s) for s in strata) / len(strata)


def _p50(strata: Strata) -> float:
    return quantile([v for s in strata for v in s], 0.5)


def _p95(strata: Strata) -> float:
    return quantile([v for s in strata for v in s], 0.95)


_STATISTIC: dict[Metric, Callable[[Strata], float]] = {
    "latency_p50_ms": _p50,
    "latency_p95_ms": _p95,
    "prompt_tokens": _per_answer,
    "completion_tokens": _per_answer,
    "cost_per_answer": _per_answer,
}


def _cost_of(model_id: str, cost: CostLookup | None) -> Callable[[LLMResponse], float | None]:
    def one(response: LLMResponse) -> float | None:
        if cost is None or response.prompt_tokens is None or response.completion_tokens is None:
            return None
        return cost(model_id, response.prompt_tokens, response.completion_tokens)

    return one


def _all_strata(run: CanaryRunResult, cost: CostLookup | None) -> dict[Metric, Strata | None]:
    answered = [r for r in run.llm_responses if not r.errored]
    latency = _strata(answered, lambda r: r.latency_ms)
    return {
        "latency_p50_ms": latency,
        "latency_p95_ms": latency,
        "prompt_tokens": _strata(answered, lambda r: r.prompt_tokens),
        "completion_tokens": _strata(answered, lambda r: r.completion_tokens),
        "cost_per_answer": _strata(answered, _cost_of(run.provider.model_id, cost)),
    }


def _stats(strata: dict[Metric, Strata | None]) -> UsageStats:
    values = {m: (_STATISTIC[m](s) if s else None) for m, s in strata.items()}
    costs = strata["cost_per_answer"]
    answers = strata["latency_p50_ms"] or strata["completion_tokens"] or []
    return UsageStats(
        answers=sum(len(s) for s in answers),
        latency_p50_ms=values["latency_p50_ms"],
        latency_p95_ms=values["latency_p95_ms"],
        prompt_tokens=values["prompt_tokens"],
        completion_tokens=values["completion_tokens"],
        cost_usd=sum(v for s in costs for v in s) if costs else None,
        cost_per_answer=values["cost_per_answer"],
    )


def compare_usage(
    baseline: CanaryRunResult | None, current: CanaryRunResult, cost: CostLookup | None = None
) -> UsageComparison:
    """The current run's usage, and its change against ``baseline`` when there is one; cost only
    when ``cost`` knows the model's price."""
    now = _all_strata(current, cost)
    if baseline is None:
        return UsageComparison(_stats(now), None, {})
    before = _all_strata(baseline, cost)
    changes: dict[Metric, MetricChange] = {}
    for metric, statistic in _STATISTIC.items():
        b, c = before[metric], now[metric]
        b_value = statistic(b) if b else None
        c_value = statistic(c) if c else None
        if b and c and b_value is not None and c_value is not None:
            change = percent_change(b_value, c_value)
            interval = bootstrap_change(b, c, statistic) if change is not None else None
            changes[metric] = MetricChange(metric, b_value, c_value, change, interval)
        else:
            changes[metric] = MetricChange(metric, b_value, c_value, None)
    return UsageComparison(_stats(now), _stats(before), changes)


# ------------------------------------------------------------------------------------------------
# gating


def usage_findings(
    usage: UsageComparison, limits: UsageLimits
) -> tuple[list[UsageFinding], list[str]]:
    """The gates that tripped, and notes for gates that could not be checked."""
    findings: list[UsageFinding] = []
    notes: list[str] = []
    if usage.baseline is None:
        return findings, notes
    for gate, metric, limit in limits.active():
        change = usage.changes[metric]
        if change.change_pct is None:
            notes.append(_unchecked(gate, change))
            continue
        significant = change.interval_pct is None or change.interval_pct[0] > 0
        if change.change_pct > limit and significant:
            findings.append(UsageFinding(gate, limit, change))
    return findings, notes


def _unchecked(gate: str, change: MetricChange) -> str:
    if change.baseline == 0:
        return f"{gate} could not be checked: the baseline's {change.label} is 0."
    why = (
        "the model is not in LiteLLM's cost map, or answers carry no token counts"
        if change.metric == "cost_per_answer"
        else "answers do not record it"
    )
    return f"{gate} could not be checked: the {change.label} is unknown ({why})."
