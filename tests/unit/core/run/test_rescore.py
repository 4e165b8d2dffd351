"""Re-scoring a baseline's stored responses when the suite's probes changed since it was taken."""

from __future__ import annotations

from textwrap import dedent

from promptcanary.core.comparator import compare
from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryPrompt,
    CanaryRunResult,
    LLMResponse,
    ProviderConfig,
)
from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.core.run.scoring import needs_rescore, rescore
from promptcanary.core.suite import CanarySuite

MODEL = "fake/model"

OLD_SUITE = """
name: s
probes:
  - type: keyword_presence
    id: kw
    required_keywords: [alpha]
  - type: response_length
    id: short
    max_chars: 3
prompts:
  - {id: p1, text: one}
  - {id: p2, text: two}
  - {id: gone, text: three}
"""

# Edited parameters under a stable key, a probe removed, a probe added, a prompt removed and one
# added.
NEW_SUITE = """
name: s
probes:
  - type: keyword_presence
    id: kw
    required_keywords: [beta]
  - type: json_validity
prompts:
  - {id: p1, text: one}
  - {id: p2, text: two}
  - {id: p3, text: four}
"""

ANSWERS = {"p1": "alpha", "p2": "beta", "gone": "alpha", "p3": "beta"}


class ScriptedProvider(BaseLLMProvider):
    """Answers each prompt id with a fixed text: the model did not change."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__(ProviderConfig(model_id=MODEL))
        self.answers = answers

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id=MODEL, content=self.answers[prompt.id]
        )


def suite(text: str) -> CanarySuite:
    return suite_from_text(dedent(text), suite_class=CanarySuite)


def run(s: CanarySuite, samples: int = 1) -> CanaryRunResult:
    return s.run(ScriptedProvider(ANSWERS), show_progress=False, samples=samples)


def baseline_of(result: CanaryRunResult) -> BaselineSnapshot:
    return BaselineSnapshot.of_run(result)


def test_needs_rescore_follows_the_probe_configuration() -> None:
    old, new = suite(OLD_SUITE), suite(NEW_SUITE)
    base = baseline_of(run(old))
    assert needs_rescore(base, new) is True
    assert needs_rescore(base, old) is False
    rescored, _ = rescore(base, new)
    assert needs_rescore(rescored, new) is False


def test_unchanged_responses_give_no_false_regressions_after_rescore() -> None:
    old, new = suite(OLD_SUITE), suite(NEW_SUITE)
    base = baseline_of(run(old))
    current = run(new)

    # The control: comparing old scores with new ones reports the probe edit as drift.
    naive = compare(base, current)
    assert [(c.prompt_id, c.probe_key) for c in naive.regressions] == [("p1", "kw")]

    rescored, count = rescore(base, new)
    report = compare(rescored, current)
    assert report.regressions == []
    assert report.improvements == []
    assert all(c.score_delta == 0 for c in report.comparisons)
    assert {(c.prompt_id, c.probe_key) for c in report.comparisons} == {
        ("p1", "kw"),
        ("p1", "json_validity"),
        ("p2", "kw"),
        ("p2", "json_validity"),
    }
    # The added probe was scored on the stored responses: not "new" where a response exists.
    assert report.new_probes == []
    assert report.removed_probes == []
    assert report.removed_prompts == ["gone"]
    assert report.new_prompts == ["p3"]
    # p1, p2 and the removed prompt's response are stored; only p1 and p2 are still in the suite.
    assert count == 2


def test_rescore_counts_every_sample_and_keeps_the_snapshot_identity() -> None:
    old, new = suite(OLD_SUITE), suite(NEW_SUITE)
    base = baseline_of(run(old, samples=3))
    rescored, count = rescore(base, new)
    assert count == 6
    assert rescored.snapshot_id == base.snapshot_id
    assert rescored.created_at == base.created_at
    assert rescored.run_result.llm_responses == base.run_result.llm_responses
    assert rescored.run_result.provenance.probe_config_hash == new.probe_config_hash
    samples = sorted(
        r.sample
        for r in rescored.run_result.probe_results
        if (r.prompt_id, r.probe_key) == ("p1", "kw")
    )
    assert samples == [0, 1, 2]
    report = compare(rescored, run(new, samples=3))
    assert report.regressions == []
    # The original snapshot is unchanged (frozen models, copies only).
    assert base.run_result.provenance.probe_config_hash == old.probe_config_hash


def test_a_real_change_is_still_a_regression_after_rescore() -> None:
    old, new = suite(OLD_SUITE), suite(NEW_SUITE)
    base = baseline_of(run(old))
    drifted = new.run(
        ScriptedProvider({**ANSWERS, "p2": "gamma"}), show_progress=False, samples=1
    )  # p2 lost "beta"
    rescored, _ = rescore(base, new)
    report = compare(rescored, drifted)
    assert [(c.prompt_id, c.probe_key) for c in report.regressions] == [("p2", "kw")]


def test_a_prompt_without_stored_response_is_new_not_compared_with_stale_scores() -> None:
    old, new = suite(OLD_SUITE), suite(NEW_SUITE)
    result = run(old)
    # A baseline holding p2's old scores but not its response (e.g. written by an older tool):
    # those scores came from the old probes, so they must not be compared with today's.
    trimmed = result.model_copy(
        update={"llm_responses": [r for r in result.llm_responses if r.prompt_id != "p2"]}
    )
    rescored, count = rescore(baseline_of(trimmed), new)
    assert count == 1
    assert {r.prompt_id for r in rescored.run_result.probe_results} == {"p1"}
    report = compare(rescored, run(new))
    assert report.regressions == []
    assert "p2" in report.new_prompts
    assert {c.prompt_id for c in report.comparisons} == {"p1"}
