"""core/render/terminal.py: a run and a drift report as plain text."""

from __future__ import annotations

from promptcanary.core.models import CanaryRunResult, LLMResponse, ProbeResult, ProviderConfig
from promptcanary.core.render.terminal import format_run


def _result(prompt: str, probe: str, sample: int, passed: bool) -> ProbeResult:
    return ProbeResult(
        probe_id=probe,
        prompt_id=prompt,
        passed=passed,
        score=1.0 if passed else 0.0,
        details="missing Paris",
        sample=sample,
    )


def test_failed_list_groups_a_failures_samples_into_one_line_with_the_count() -> None:
    results = [_result("capital", "keywords", sample, passed=False) for sample in range(3)] + [
        _result("json", "schema", 0, passed=False),
        _result("json", "schema", 1, passed=True),
    ]
    run = CanaryRunResult(
        suite_name="demo", provider=ProviderConfig(model_id="m"), probe_results=results
    )
    lines = format_run(run).splitlines()
    failures = [line for line in lines if line.startswith("  ")]
    assert failures == [
        "  capital / keywords (3 samples)  0.000  missing Paris",
        "  json / schema  0.000  missing Paris",
    ]


def test_run_line_pluralises_one_prompt_and_one_result() -> None:
    run = CanaryRunResult(
        suite_name="demo",
        provider=ProviderConfig(model_id="m"),
        probe_results=[_result("capital", "keywords", 0, passed=True)],
        llm_responses=[LLMResponse(prompt_id="capital", provider_model_id="m", content="Paris")],
    )
    first = format_run(run).splitlines()[0]
    assert "(1 result, 1 prompt, 0 errored)" in first


PROVIDER = ProviderConfig(model_id="openai/gpt-4o-mini")


def test_an_all_errored_run_shows_no_score() -> None:
    errored = ProbeResult(probe_id="contains", prompt_id="p", passed=False, score=0.0, errored=True)
    response = LLMResponse(prompt_id="p", provider_model_id=PROVIDER.model_id, error="HTTP 500")
    run = CanaryRunResult(
        suite_name="s", provider=PROVIDER, probe_results=[errored], llm_responses=[response]
    )
    assert "score –, pass rate – (1 result, 1 prompt, 1 errored)" in format_run(run)
