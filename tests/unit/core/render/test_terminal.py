"""The plain-text run summary: headline figures and the failed list."""

from __future__ import annotations

from promptcanary.core.models import CanaryRunResult, LLMResponse, ProbeResult, ProviderConfig
from promptcanary.core.render.terminal import format_run

PROVIDER = ProviderConfig(model_id="openai/gpt-4o-mini")


def _failed(prompt_id: str, sample: int) -> ProbeResult:
    return ProbeResult(
        probe_id="contains", prompt_id=prompt_id, passed=False, score=0.0, sample=sample,
        details="missing 'Paris'",
    )  # fmt: skip


def test_failed_list_shows_each_failure_once_with_its_sample_count() -> None:
    results = [*(_failed("capital", s) for s in range(3)), _failed("sum", 0)]
    run = CanaryRunResult(suite_name="s", provider=PROVIDER, probe_results=results)
    text = format_run(run)
    assert "Failed (2):" in text
    assert text.count("capital / contains") == 1
    assert "capital / contains (×3)" in text
    assert "sum / contains  0.000" in text  # a single failure has no count


def test_an_all_errored_run_shows_no_score() -> None:
    errored = ProbeResult(probe_id="contains", prompt_id="p", passed=False, score=0.0, errored=True)
    response = LLMResponse(prompt_id="p", provider_model_id=PROVIDER.model_id, error="HTTP 500")
    run = CanaryRunResult(
        suite_name="s", provider=PROVIDER, probe_results=[errored], llm_responses=[response]
    )
    assert "score –, pass rate – (1 results, 1 prompts, 1 errored)" in format_run(run)
