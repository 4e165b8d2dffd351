"""The spec's documented examples, run as written against the fake OpenAI-compatible server.

Each test follows one example or documented default of /work/shared/spec/api-reference.txt:
code written against those pages must run unchanged. The model is reached through real LiteLLM
(``llm_env`` points ``OPENAI_API_BASE`` at the fake server, as a user's environment would).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcanary import (
    BaselineSnapshot,
    CanaryPrompt,
    CanarySuite,
    DriftReport,
    DriftSeverity,
    FileBaselineStore,
    LiteLLMProvider,
    ProbeCategory,
    ProviderConfig,
    compare,
)
from promptcanary.core.probes import JsonValidityProbe, KeywordPresenceProbe, StepByStepProbe
from tests.fakes.llm_server import FakeLLMServer
from tests.suite_texts import SPEC_YAML

ALICE = '{"name": "Alice", "age": 30}'


def spec_suite() -> CanarySuite:
    """The CanarySuite example of the API reference, verbatim."""
    return CanarySuite(
        name="production-agent",
        prompts=[CanaryPrompt(text="Return JSON: {name: 'Alice', age: 30}")],
        probes=[JsonValidityProbe(), StepByStepProbe(expect_steps=False)],
    )


def test_canary_suite_quick_start_runs_as_documented(llm_env: FakeLLMServer) -> None:
    llm_env.default(content=ALICE)
    suite = spec_suite()
    provider = LiteLLMProvider("openai/gpt-4o-mini")
    result = suite.run(provider, show_progress=False)

    assert result.overall_score == 1.0 and result.pass_rate == 1.0
    assert result.suite_name == "production-agent"
    # LiteLLMProvider's documented defaults reach the model: temperature 0.0, 1024 tokens, seed 42.
    request = llm_env.last_request
    assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.0, 1024, 42)
    assert request["messages"] == [
        {"role": "user", "content": "Return JSON: {name: 'Alice', age: 30}"}
    ]


def test_run_overrides_reach_the_request_and_the_result(llm_env: FakeLLMServer) -> None:
    llm_env.default(content=ALICE)
    result = spec_suite().run(
        LiteLLMProvider("openai/gpt-4o-mini"),
        temperature=0.3,
        max_tokens=64,
        seed=7,
        show_progress=False,
    )
    request = llm_env.last_request
    assert (request["temperature"], request["max_tokens"], request["seed"]) == (0.3, 64, 7)
    assert (result.provider.temperature, result.provider.max_tokens, result.provider.seed) == (
        0.3,
        64,
        7,
    )


def test_default_system_prompt_is_sent_when_a_prompt_has_none(llm_env: FakeLLMServer) -> None:
    suite = CanarySuite(
        name="s",
        prompts=[
            CanaryPrompt(id="a", text="hi"),
            CanaryPrompt(id="b", text="yo", system_prompt="B"),
        ],
        probes=[JsonValidityProbe()],
        default_system_prompt="Be terse.",
    )
    suite.run(LiteLLMProvider("openai/gpt-4o-mini"), show_progress=False)
    systems = {r["last_user"]: r["system"] for r in llm_env.requests}
    assert systems == {"hi": "Be terse.", "yo": "B"}


def test_full_config_example_forwards_extra_params(llm_env: FakeLLMServer) -> None:
    provider = LiteLLMProvider(
        "openai/gpt-4o",
        temperature=0.0,
        max_tokens=2048,
        extra_params={"response_format": {"type": "json_object"}},
    )
    assert provider.config.extra_params == {"response_format": {"type": "json_object"}}
    spec_suite().run(provider, show_progress=False)
    assert llm_env.last_request["response_format"] == {"type": "json_object"}
    assert llm_env.last_request["max_tokens"] == 2048


def test_provider_from_a_provider_config(llm_env: FakeLLMServer) -> None:
    config = ProviderConfig(model_id="openai/gpt-4o-mini", temperature=0.5, seed=None)
    for provider in (LiteLLMProvider(config), LiteLLMProvider.from_config(config)):
        assert provider.config == config
        spec_suite().run(provider, show_progress=False)
        assert llm_env.last_request["temperature"] == 0.5
        assert llm_env.last_request["seed"] is None  # seed None is not sent


def test_run_result_properties(llm_env: FakeLLMServer) -> None:
    llm_env.script("France", content="1. Look it up.\n2. It is Lyon.")
    llm_env.default(content=ALICE)
    suite = CanarySuite(
        name="props",
        prompts=[
            CanaryPrompt(id="json", text="Return JSON"),
            CanaryPrompt(id="capital", text="Capital of France?"),
        ],
        probes=[
            JsonValidityProbe(),
            StepByStepProbe(expect_steps=False),
            KeywordPresenceProbe(required_keywords=["Paris"]),
        ],
    )
    result = suite.run(LiteLLMProvider("openai/gpt-4o-mini"), show_progress=False)

    by_prompt = {(r.prompt_id, r.probe_id): r for r in result.probe_results}
    assert len(by_prompt) == 6
    failed = {(r.prompt_id, r.probe_id) for r in result.failed_probes}
    assert ("capital", "json_validity") in failed and ("capital", "keyword_presence") in failed
    assert ("json", "json_validity") not in failed
    assert result.pass_rate == pytest.approx((6 - len(failed)) / 6)
    assert result.overall_score == pytest.approx(sum(r.score for r in result.probe_results) / 6)
    assert set(result.by_category) == {ProbeCategory.FORMAT, ProbeCategory.REASONING}
    assert len(result.by_category[ProbeCategory.FORMAT]) == 4
    assert result.finished_at is not None and result.duration_ms > 0


def test_file_baseline_store_example(
    llm_env: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    llm_env.default(content=ALICE)
    run_result = spec_suite().run(LiteLLMProvider("openai/gpt-4o"), show_progress=False)

    store = FileBaselineStore("baselines/")
    snapshot = store.save(run_result)
    loaded = store.load(snapshot.snapshot_id)
    latest = store.load_latest("production-agent", "openai/gpt-4o")

    assert isinstance(snapshot, BaselineSnapshot)
    assert loaded.snapshot_id == latest.snapshot_id == snapshot.snapshot_id
    assert loaded.run_result.overall_score == run_result.overall_score
    (saved,) = (tmp_path / "baselines").iterdir()
    assert saved.name.startswith("production-agent__openai-gpt-4o__")
    (entry,) = store.list_baselines()
    assert entry["snapshot_id"] == snapshot.snapshot_id and entry["model_id"] == "openai/gpt-4o"
    assert store.delete(snapshot.snapshot_id) is True
    with pytest.raises(FileNotFoundError):
        store.load_latest("production-agent", "openai/gpt-4o")


def test_compare_a_drifted_run_with_the_stored_baseline(
    llm_env: FakeLLMServer, tmp_path: Path
) -> None:
    llm_env.default(content=ALICE, drifted={"content": "Sure! Here it is: name Alice, age 30"})
    suite, provider = spec_suite(), LiteLLMProvider("openai/gpt-4o-mini")
    baseline = FileBaselineStore(tmp_path).save(suite.run(provider, show_progress=False))

    same = compare(baseline, suite.run(provider, show_progress=False))
    assert (same.severity, same.has_regressions) == (DriftSeverity.NONE, False)

    llm_env.drift = True
    current = suite.run(provider, show_progress=False)
    report = compare(baseline, current)
    assert isinstance(report, DriftReport)
    assert [(c.prompt_id, c.probe_id) for c in report.regressions] == [
        (suite.prompts[0].id, "json_validity")
    ]
    # One of two comparisons regressed from 1.0 to 0.0: the worst severity.
    assert report.severity is DriftSeverity.CRITICAL
    assert report.summary == (
        "production-agent on openai/gpt-4o-mini: 1 regression, 0 improvements across "
        "2 comparisons (score 1.000 → 0.500, severity critical)."
    )


def test_compare_refuses_runs_of_another_suite(llm_env: FakeLLMServer) -> None:
    provider = LiteLLMProvider("openai/gpt-4o-mini")
    run_result = spec_suite().run(provider, show_progress=False)
    baseline = BaselineSnapshot(
        suite_name="another-suite", provider=run_result.provider, run_result=run_result
    )
    with pytest.raises(ValueError, match="Suite name mismatch"):
        compare(baseline, run_result)


def test_spec_yaml_example_loads_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "canary.yaml"
    path.write_text(SPEC_YAML, encoding="utf-8")
    suite = CanarySuite.from_yaml(path)
    assert suite.name == "my-suite" and suite.description == "Tests production agent behaviour."
    assert [p.probe_id for p in suite.probes] == [
        "json_validity",
        "step_by_step",
        "keyword_presence",
    ]
    (prompt,) = suite.prompts
    assert (prompt.expected_keywords, prompt.description) == (["Paris"], "Basic geography canary")

    again = tmp_path / "again.yaml"
    again.write_text(suite.to_yaml_template(), encoding="utf-8")
    copy = CanarySuite.from_yaml(again)
    assert copy.suite_hash == suite.suite_hash
    assert [p.id for p in copy.prompts] == [prompt.id]


def test_from_yaml_of_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.yaml"):
        CanarySuite.from_yaml(tmp_path / "nope.yaml")


def test_suite_without_prompts_or_probes_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="at least one prompt"):
        CanarySuite(name="x", prompts=[], probes=[JsonValidityProbe()])
    with pytest.raises(ValueError, match="at least one probe"):
        CanarySuite(name="x", prompts=[CanaryPrompt(text="t")], probes=[])
