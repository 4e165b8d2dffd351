"""mode: merge's leg reader: the legs' folders, their refusals, and a leg's activity."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import CanaryPrompt, CanaryRunResult, LLMResponse
from promptcanary.core.run.provider import BaseLLMProvider, ProviderConfig
from promptcanary.core.run.shards import Shard
from promptcanary.core.suite import CanarySuite
from promptcanary_action.errors import UsageError
from promptcanary_action.legs import judge_legs, leg_activity, read_legs
from promptcanary_action.outcome import PairOutcome, StepOutcome
from promptcanary_action.pipeline import LoadedSuite
from tests.unit.action.outcomes import push_activity

SUITE = """\
name: legs
probes:
  - type: keyword_presence
    required_keywords: [fine]
prompts:
{prompts}"""


class FineProvider(BaseLLMProvider):
    def __init__(self) -> None:
        super().__init__(ProviderConfig(model_id="fake/model"))

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        return LLMResponse(prompt_id=prompt.id, provider_model_id="fake/model", content="fine")


def suite(count: int = 9, text: str = "Question") -> CanarySuite:
    prompts = "".join(f"  - id: q{k}\n    text: {text} {k}\n" for k in range(count))
    return suite_from_text(
        SUITE.format(prompts=prompts), source="canary.yaml", suite_class=CanarySuite
    )


def loaded(of: CanarySuite) -> LoadedSuite:
    return LoadedSuite(of, Path("canary.yaml"), "canary.yaml")


def write_leg(report: Path, name: str, of: CanarySuite, shard: str, sha: str = "a" * 40) -> None:
    run = of.run(FineProvider(), show_progress=False, shard=Shard.parse(shard), git_sha=sha)
    pair = PairOutcome(suite_name=of.name, suite_file="canary.yaml", model="fake/model", run=run)
    outcome = StepOutcome(
        pairs=[pair], fail_on="regression", gate_failed=False, verdict="ok", sha=sha
    )
    (report / name).mkdir(parents=True)
    (report / name / "step.json").write_text(outcome.model_dump_json(), encoding="utf-8")


def judged(report: Path, of: CanarySuite) -> list[CanaryRunResult]:
    def judge(suite_: LoadedSuite, model: str, run: CanaryRunResult) -> PairOutcome:
        return PairOutcome(suite_name=suite_.suite.name, suite_file="x", model=model, run=run)

    return [p.run for p in judge_legs(read_legs(report), [loaded(of)], judge)]


def test_legs_in_numbered_folders_merge_into_the_whole_suite(tmp_path: Path) -> None:
    of = suite()
    for i in (1, 2, 3, 10):  # leg-10 sorts after leg-3, as the matrix numbers it
        write_leg(tmp_path, f"promptcanary-leg-{i}", of, f"{[1, 2, 3, 10].index(i) + 1}/4")
    assert [leg.name for leg in read_legs(tmp_path)] == [
        f"promptcanary-leg-{i}" for i in (1, 2, 3, 10)
    ]
    [run] = judged(tmp_path, of)
    assert run.prompt_ids == [p.id for p in of.prompts]


def test_an_empty_report_dir_says_how_to_download_the_legs(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="pattern: promptcanary-leg-"):
        read_legs(tmp_path)


def test_a_file_that_is_not_a_step_json_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "promptcanary-leg-1").mkdir()
    (tmp_path / "promptcanary-leg-1" / "step.json").write_text('{"pairs": 3}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"promptcanary-leg-1/step.json is not a leg's step.json"):
        read_legs(tmp_path)


def test_legs_of_two_commits_are_refused_even_without_a_pair_in_common(tmp_path: Path) -> None:
    write_leg(tmp_path, "leg-a", suite(), "1/1", sha="a" * 40)
    write_leg(tmp_path, "leg-b", suite(text="Other"), "1/1", sha="b" * 40)
    with pytest.raises(UsageError, match="legs of different commits") as caught:
        read_legs(tmp_path)
    assert f"{'b' * 40} in leg-b" in str(caught.value)


def test_a_missing_shard_is_refused_naming_the_pair(tmp_path: Path) -> None:
    of = suite()
    write_leg(tmp_path, "leg-1", of, "1/2")
    with pytest.raises(UsageError, match=r"legs on fake/model: shard\(s\) 2/2 missing"):
        judged(tmp_path, of)


def test_a_leg_of_another_suite_version_is_refused(tmp_path: Path) -> None:
    write_leg(tmp_path, "leg-1", suite(), "1/1")
    with pytest.raises(UsageError, match=r"ran another version of canary\.yaml"):
        judged(tmp_path, suite(text="Edited"))


def test_a_leg_activity_publishes_nothing_and_says_so() -> None:
    normal = push_activity(comment=True, issue_on_drift=True)
    leg = leg_activity(normal, Shard(2, 4))
    assert (leg.compare, leg.baseline_ref) == (True, "main")
    assert not (leg.comment or leg.check_run or leg.issue_on_drift or leg.may_create_baseline)
    assert leg.promotion == "never"
    assert any("leg 2/4 of a matrix job" in note for note in leg.notes)
