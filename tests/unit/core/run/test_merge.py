"""Merging shard runs: the run one job makes, or a refusal that names the legs."""

from __future__ import annotations

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import CanaryPrompt, CanaryRunResult, LLMResponse
from promptcanary.core.probes.format import KeywordPresenceProbe, ResponseLengthProbe
from promptcanary.core.run.judge import JudgeService
from promptcanary.core.run.provider import BaseLLMProvider, ProviderConfig
from promptcanary.core.run.shards import MergeError, RunPart, Shard, merge_runs
from promptcanary.core.suite import CanarySuite
from tests.fakes.judge_server import JudgeFactory, JudgePolicy, JudgeProvider

# Not compared: they name or date one run, whoever makes it.
VOLATILE_RUN = {"run_id", "started_at", "finished_at", "duration_ms"}
VOLATILE_RESPONSE = {"latency_ms", "created_at"}


class EchoProvider(BaseLLMProvider):
    """Answers with the prompt's text, and fails the prompts it is told to."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        super().__init__(ProviderConfig(model_id="echo/model"))
        self.failing = failing

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(
            prompt_id=prompt.id,
            provider_model_id=self.config.model_id,
            content=prompt.text,
            error="HTTP 500" if prompt.id in self.failing else None,
        )


def make_suite(count: int = 23, *, edited: str | None = None) -> CanarySuite:
    prompts = [
        CanaryPrompt(id=f"q{k:02d}", text=f"answer {k} {'x' * k}" if f"q{k:02d}" != edited else "?")
        for k in range(count)
    ]
    return CanarySuite(
        "merge-test",
        prompts,
        [KeywordPresenceProbe(required_keywords=["answer"]), ResponseLengthProbe(max_chars=20)],
    )


def leg(
    suite: CanarySuite, shard: str | None, *, sha: str = "a" * 40, samples: int = 2
) -> CanaryRunResult:
    chosen = Shard.parse(shard) if shard else None
    return suite.run(
        EchoProvider(frozenset({"q03"})),
        show_progress=False,
        samples=samples,
        git_sha=sha,
        git_ref="main",
        shard=chosen,
    )


def legs(suite: CanarySuite, total: int, **kwargs: str) -> list[RunPart]:
    return [
        RunPart(leg(suite, f"{i}/{total}", **kwargs), f"promptcanary-leg-{i}")
        for i in range(1, total + 1)
    ]


def comparable(run: CanaryRunResult) -> dict[str, object]:
    document = run.model_dump(mode="json", exclude=VOLATILE_RUN)
    for response in document["llm_responses"]:
        for key in VOLATILE_RESPONSE:
            response.pop(key)
    return document


def test_a_shard_run_answers_its_prompts_and_says_which_shard() -> None:
    suite = make_suite()
    run = leg(suite, "2/4")
    expected = [p.id for p in Shard(2, 4).select(suite.prompts)]
    assert run.prompt_ids == expected
    assert len(run.llm_responses) == 2 * len(expected)
    assert run.provenance.shard == "2/4"
    assert list(run.provenance.prompt_hashes) == [p.id for p in suite.prompts]


@pytest.mark.parametrize("total", [1, 2, 4, 5])
def test_merged_shards_are_the_run_one_job_makes(total: int) -> None:
    suite = make_suite()
    merged = merge_runs(legs(suite, total))
    whole = leg(suite, None)
    assert comparable(merged) == comparable(whole)
    assert merged.provenance.shard is None
    assert merged.error_count == whole.error_count > 0


def test_the_order_the_legs_arrive_in_does_not_matter() -> None:
    suite = make_suite()
    parts = legs(suite, 4)
    forward, backward = merge_runs(parts), merge_runs(list(reversed(parts)))
    assert forward.model_dump() == backward.model_dump()


def test_merging_again_gives_the_same_run_id_and_a_new_one_for_other_legs() -> None:
    suite = make_suite()
    parts = legs(suite, 2)
    assert merge_runs(parts).run_id == merge_runs(parts).run_id
    assert merge_runs(parts).run_id != merge_runs(legs(suite, 2)).run_id


def test_the_merged_run_spans_the_legs() -> None:
    parts = legs(make_suite(), 3)
    merged = merge_runs(parts)
    assert merged.started_at == min(p.run.started_at for p in parts)
    assert merged.finished_at == max(p.run.finished_at for p in parts if p.run.finished_at)


def test_the_merged_run_counts_every_legs_429s_and_pacing() -> None:
    # Each leg paced against its own share of the limit: the one job waited their sum.
    figures = [(3, 1.25), (0, 0.0), (7, 2.5)]
    parts = [
        RunPart(p.run.model_copy(update={"rate_limited": n, "paced_seconds": s}), p.source)
        for p, (n, s) in zip(legs(make_suite(), 3), figures, strict=True)
    ]
    summed = (sum(n for n, _ in figures), sum(s for _, s in figures))
    merged = merge_runs(parts)
    assert (merged.rate_limited, merged.paced_seconds) == summed
    reloaded = CanaryRunResult.model_validate_json(merged.model_dump_json())
    assert (reloaded.rate_limited, reloaded.paced_seconds) == summed


def test_one_whole_run_is_its_own_merge() -> None:
    whole = leg(make_suite(), None)
    assert merge_runs([RunPart(whole, "leg-model-a")]) is whole


def test_a_missing_shard_is_refused_by_name() -> None:
    parts = legs(make_suite(), 4)
    with pytest.raises(MergeError, match=r"shard\(s\) 3/4 missing") as caught:
        merge_runs([parts[0], parts[1], parts[3]])
    assert "promptcanary-leg-4" in str(caught.value)


def test_a_shard_twice_is_refused_naming_both_legs() -> None:
    suite = make_suite()
    parts = legs(suite, 2)
    again = RunPart(leg(suite, "2/2"), "promptcanary-leg-2-rerun")
    with pytest.raises(MergeError, match="there twice") as caught:
        merge_runs([*parts, again])
    assert "2/2 in promptcanary-leg-2 and promptcanary-leg-2-rerun" in str(caught.value)


def test_legs_of_two_commits_are_refused_naming_both() -> None:
    suite = make_suite()
    first, _ = legs(suite, 2)
    second = RunPart(leg(suite, "2/2", sha="b" * 40), "promptcanary-leg-2")
    with pytest.raises(MergeError, match="different commits") as caught:
        merge_runs([first, second])
    message = str(caught.value)
    assert f"'{'a' * 40}' in promptcanary-leg-1" in message
    assert f"'{'b' * 40}' in promptcanary-leg-2" in message


def test_legs_of_two_suite_versions_are_refused() -> None:
    first, _ = legs(make_suite(), 2)
    second = RunPart(leg(make_suite(edited="q05"), "2/2"), "promptcanary-leg-2")
    with pytest.raises(MergeError, match=r"different suite versions \(suite hash\)"):
        merge_runs([first, second])


def test_legs_of_different_sample_counts_are_refused() -> None:
    suite = make_suite()
    first = RunPart(leg(suite, "1/2", samples=1), "leg-1")
    second = RunPart(leg(suite, "2/2", samples=3), "leg-2")
    with pytest.raises(MergeError, match="different sample counts: 1 in leg-1; 3 in leg-2"):
        merge_runs([first, second])


def test_shards_of_two_splits_are_refused() -> None:
    suite = make_suite()
    with pytest.raises(MergeError, match="different splits: 1/2 in a; 2/3 in b"):
        merge_runs([RunPart(leg(suite, "1/2"), "a"), RunPart(leg(suite, "2/3"), "b")])


def test_a_whole_run_with_shards_is_refused() -> None:
    suite = make_suite()
    with pytest.raises(MergeError, match="whole suite"):
        merge_runs([RunPart(leg(suite, None), "whole"), *legs(suite, 2)])


def test_legs_that_split_the_suite_another_way_are_refused() -> None:
    """A leg whose provenance says 2/2 but which answered shard 1's prompts (a hand-made file)."""
    suite = make_suite()
    one = leg(suite, "1/2")
    relabelled = one.model_copy(
        update={"provenance": one.provenance.model_copy(update={"shard": "2/2"})}
    )
    with pytest.raises(MergeError, match="answered by both a and b"):
        merge_runs([RunPart(one, "a"), RunPart(relabelled, "b")])


def test_nothing_to_merge_is_refused() -> None:
    with pytest.raises(MergeError, match="nothing to merge"):
        merge_runs([])


JUDGED_SUITE = """
name: judged-merge
judge: {model: fake/judge, check_votes: 15}
judge_checks:
  - {prompt: Greet., answer: a good hello, expected: pass, rubric: Polite.}
  - {prompt: Greet., answer: go away, expected: fail, rubric: Polite.}
probes:
  - {type: llm_judge, rubric: The answer is good., id: judged}
prompts:
""" + "".join(f"  - {{id: j{k}, text: 'a good answer {k}'}}\n" for k in range(6))


def judged_leg(shard: str | None) -> CanaryRunResult:
    """One leg of the judged suite, judged in-process (the judge's fingerprint names the leg)."""
    suite = suite_from_text(JUDGED_SUITE, suite_class=CanarySuite)
    fingerprint = f"fp_{shard or 'whole'}".replace("/", "_")
    judge = JudgeProvider("fake/judge", JudgePolicy(fingerprint=fingerprint))
    return suite.run(
        EchoProvider(),
        show_progress=False,
        samples=2,
        git_sha="a" * 40,
        shard=Shard.parse(shard) if shard else None,
        services=[JudgeService(JudgeFactory(judge))],
    )


def test_merged_shards_keep_the_judges_cost_its_canaries_and_its_verdicts() -> None:
    parts = [RunPart(judged_leg(f"{i}/2"), f"leg-{i}") for i in (1, 2)]
    merged = merge_runs(parts)

    (usage,) = merged.services
    assert usage.service == "judge"
    assert usage.requests == sum(p.run.services[0].requests for p in parts) > 0
    assert usage.items == sum(p.run.services[0].items for p in parts)
    judge = merged.provenance.judge
    assert judge is not None
    # Every leg asked each canary 15 times: the merged run holds all 30 votes of each.
    assert [len(c.verdicts) for c in judge.checks] == [30, 30]
    assert judge.fingerprints == ["fp_1_2", "fp_2_2"]
    assert judge.models == ["fake/judge"]
    judged = [r for r in merged.probe_results if r.probe_key == "judged"]
    assert len(judged) == 12 and all(r.passed and not r.errored for r in judged)


def test_merged_shards_keep_the_noisiest_legs_attenuation() -> None:
    parts = [RunPart(judged_leg(f"{i}/2"), f"leg-{i}") for i in (1, 2)]
    first, second = (p.run.provenance.judge for p in parts)
    assert first is not None and second is not None
    noisy = second.model_copy(update={"attenuation": {"judged": 0.4}})
    parts[1] = RunPart(
        parts[1].run.model_copy(
            update={"provenance": parts[1].run.provenance.model_copy(update={"judge": noisy})}
        ),
        "leg-2",
    )
    merged = merge_runs(parts)
    assert first.attenuation["judged"] > 0.4
    assert merged.provenance.judge is not None
    assert merged.provenance.judge.attenuation == {"judged": 0.4}
