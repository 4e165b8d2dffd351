"""Scoring: a suite's probes applied to responses, one way (runner → scoring → probes).

The runner obtains responses and hands them here; re-scoring a stored baseline uses the same
functions. A probe that raises, or returns something other than a ``ProbeResult``, becomes a
scored failure: one user probe must never end a run. Errored responses are not scored.
"""

from __future__ import annotations

from collections.abc import Iterable

from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, LLMResponse, ProbeResult
from promptcanary.core.probes.served import Served, ServedProbe
from promptcanary.core.spec import ProbeBinding, SuiteSpec


def score_response(
    bindings: Iterable[ProbeBinding],
    prompt: CanaryPrompt,
    response: LLMResponse,
    served: Served | None = None,
) -> list[ProbeResult]:
    """Apply each binding's probe to one response, keyed and numbered by its sample.

    ``served``: what the answer phase produced (a :class:`ServedProbe` reads it; without it such
    a probe's results are errored)."""
    results: list[ProbeResult] = []
    for binding in bindings:
        update: dict[str, object] = {"probe_key": binding.key, "sample": response.sample}
        if response.errored:
            # Not the model's failure: there is nothing to score, and comparisons skip it.
            result = binding.probe._make_result(
                prompt.id, passed=False, score=0.0, details=f"No response: {response.error}"
            )
            update["errored"] = True
        else:
            result = _evaluate(binding, prompt, response, served or {})
        results.append(result.model_copy(update=update))
    return results


def _evaluate(
    binding: ProbeBinding, prompt: CanaryPrompt, response: LLMResponse, served: Served
) -> ProbeResult:
    probe = binding.probe
    try:
        if isinstance(probe, ServedProbe):
            result = probe.evaluate_served(prompt, response, served)
        else:
            result = probe.evaluate(prompt, response)
        if not isinstance(result, ProbeResult):
            raise TypeError(f"evaluate() returned {type(result).__name__}, not ProbeResult")
    except Exception as exc:  # a user's probe may raise anything; it must not end the run
        return probe._make_result(
            prompt.id,
            passed=False,
            score=0.0,
            details=f"Probe raised an exception: {type(exc).__name__}: {exc}",
            metadata={"exception": type(exc).__name__},
        )
    return result


def score(
    suite: SuiteSpec, prompt: CanaryPrompt, response: LLMResponse, served: Served | None = None
) -> list[ProbeResult]:
    """Every probe of ``suite`` that applies to ``prompt``, on one response."""
    return score_response(suite.bindings_for(prompt), prompt, response, served)


def score_responses(
    suite: SuiteSpec, responses: Iterable[LLMResponse], served: Served | None = None
) -> list[ProbeResult]:
    """Every response scored by ``suite``, in the responses' order.

    Responses to prompts the suite no longer has are skipped: a comparison lists them as removed.
    """
    prompts = {p.id: p for p in suite.prompts}
    results: list[ProbeResult] = []
    for response in responses:
        prompt = prompts.get(response.prompt_id)
        if prompt is not None:
            results.extend(score(suite, prompt, response, served))
    return results


# ── re-scoring: apply the current suite's probes to a baseline's stored responses ──
# When probes were added, removed or re-parameterised since the baseline, comparing old scores
# with new ones would report the probe edit as model drift. Scoring the baseline's own responses
# with today's probes compares like with like; prompts without a stored response stay "new".


def needs_rescore(snapshot: BaselineSnapshot, suite: SuiteSpec) -> bool:
    """True when the baseline was scored with a different probe configuration."""
    return snapshot.run_result.provenance.probe_config_hash != suite.probe_config_hash


def rescore(snapshot: BaselineSnapshot, suite: SuiteSpec) -> tuple[BaselineSnapshot, int]:
    """The snapshot with every stored response re-scored by ``suite``; and how many were."""
    run = snapshot.run_result
    known = {p.id for p in suite.prompts}
    # Responses to prompts removed from the suite stay unscored: the comparison lists them.
    rescored = sum(1 for response in run.llm_responses if response.prompt_id in known)
    results = _kept_served(suite, score_responses(suite, run.llm_responses), run.probe_results)
    provenance = run.provenance.model_copy(update={"probe_config_hash": suite.probe_config_hash})
    new_run = run.model_copy(update={"probe_results": results, "provenance": provenance})
    return snapshot.model_copy(update={"run_result": new_run}), rescored


def _kept_served(
    suite: SuiteSpec, results: list[ProbeResult], stored: list[ProbeResult]
) -> list[ProbeResult]:
    """``results`` with the stored result of each served probe (a judge's verdict) kept for the
    same prompt, key and sample: re-scoring asks no answer service, and an unrelated probe edit
    must not turn every judged result into an errored one. A served probe whose key changed
    (its rubric, say) has no stored result and stays errored: it is a new probe."""
    served = {b.key for b in suite.bindings if isinstance(b.probe, ServedProbe)}
    if not served:
        return results
    old = {(r.prompt_id, r.probe_key, r.sample): r for r in stored if r.probe_key in served}
    return [
        old.get((r.prompt_id, r.probe_key, r.sample), r) if r.probe_key in served else r
        for r in results
    ]
