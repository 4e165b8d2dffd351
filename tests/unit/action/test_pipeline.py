"""The pipeline: suite discovery, model choice, the gate, verdicts, and run_pair with fakes."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import (
    BaselineSnapshot,
)
from promptcanary.core.run.provider import ProviderError
from promptcanary.core.spec import ModelSpec
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.evaluate import promotion_allowed
from promptcanary.storage.base import BaselineFileError
from promptcanary_action.activity import Activity
from promptcanary_action.baselines.base import BaselineStoreError
from promptcanary_action.errors import UsageError
from promptcanary_action.outcome import BaselineStatus, PairOutcome, build_outcome
from promptcanary_action.pipeline import (
    LoadedSuite,
    PairJudging,
    find_suite_files,
    judge_run,
    models_for,
    run_pair,
)
from promptcanary_action.render import comment_marker, render_comment, render_summary
from promptcanary_action.settings import Settings
from tests.fakes.provider_fake import FakeProvider, FakeProviderFactory
from tests.unit.action.outcomes import pr_activity, push_activity, run_result

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

SUITE = """
name: demo
models: [model-a]
probes:
  - type: keyword_presence
    id: kw
    required_keywords: [ok]
prompts:
  - id: p1
    text: first
  - id: p2
    text: second
    probes:
      - type: json_validity
        id: json
"""


# ── fakes ───────────────────────────────────────────────────────────────────


GOOD: dict[str, str | Exception] = {"p1": "ok", "p2": '{"ok": true}'}


class Factory(FakeProviderFactory):
    def __init__(self, answers: dict[str, str | Exception] | None = None) -> None:
        super().__init__(answers or GOOD)


class DictBackend:
    """A baseline backend held in a dict; load or save can be made to fail."""

    def __init__(
        self,
        *,
        load_error: Exception | None = None,
        save_error: Exception | None = None,
    ) -> None:
        self.baselines: dict[tuple[str, str], BaselineSnapshot] = {}
        self.load_error = load_error
        self.save_error = save_error
        self.loads: list[tuple[str, str, str]] = []
        self.saves: list[tuple[BaselineSnapshot, str, str, int | None]] = []

    def load(self, suite_name: str, model_id: str, *, for_ref: str) -> BaselineSnapshot | None:
        self.loads.append((suite_name, model_id, for_ref))
        if self.load_error is not None:
            raise self.load_error
        return self.baselines.get((suite_name, model_id))

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str:
        if self.save_error is not None:
            raise self.save_error
        self.saves.append((snapshot, sha, ref, regressions))
        self.baselines[(snapshot.suite_name, snapshot.provider.model_id)] = snapshot
        return f"mem://{snapshot.suite_name}/{snapshot.provider.model_id}"

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]:
        return []


PR = pr_activity()

# One answer per prompt unless a test asks for more: these tests are about the pipeline.
SETTINGS = dataclasses.replace(Settings(), max_retries=0, concurrency=2, samples=1)


def loaded(text: str = SUITE) -> LoadedSuite:
    suite = suite_from_text(dedent(text), source="canary.yaml", suite_class=CanarySuite)
    return LoadedSuite(suite, Path("/ws/canary.yaml"), "canary.yaml")


def pair_run(
    backend: DictBackend,
    *,
    act: Activity | None = None,
    settings: Settings = SETTINGS,
    answers: dict[str, str | Exception] | None = None,
    suite: LoadedSuite | None = None,
    model: str = "model-a",
    now: datetime = NOW,
) -> PairOutcome:
    return asyncio.run(
        run_pair(
            suite or loaded(),
            ModelSpec(model=model),
            PairJudging(settings, act or push_activity(), "abc123", backend, lambda: now),
            ref="main",
            provider_factory=Factory(answers),
        )
    )


def seed_baseline(
    backend: DictBackend,
    *,
    answers: dict[str, str | Exception] | None = None,
    suite: LoadedSuite | None = None,
    model: str = "model-a",
    created: datetime = NOW - timedelta(days=1),
    key_model: str | None = None,
) -> BaselineSnapshot:
    """Record a real run as the baseline of (suite, key_model or model)."""
    s = (suite or loaded()).suite
    run = s.run(FakeProvider(model, answers or GOOD), show_progress=False, max_retries=0, samples=1)
    snap = BaselineSnapshot(
        suite_name=s.name, provider=run.provider, run_result=run, created_at=created
    )
    backend.baselines[(s.name, key_model or model)] = snap
    return snap


# ── find_suite_files ────────────────────────────────────────────────────────


def touch(base: Path, *names: str) -> None:
    for name in names:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("name: x\n", encoding="utf-8")


def test_find_suite_files_keeps_input_order_sorts_globs_and_dedupes(tmp_path: Path) -> None:
    touch(tmp_path, "b.yaml", "a.yaml", "sub/c.yaml", "sub/deeper/d.yaml", "notes.txt")
    found = find_suite_files(["b.yaml", "*.yaml", "**/*.yaml", "./a.yaml"], tmp_path)
    root = tmp_path.resolve()
    assert found == [
        root / "b.yaml",
        root / "a.yaml",
        root / "sub/c.yaml",
        root / "sub/deeper/d.yaml",
    ]


def test_find_suite_files_missing_path_names_the_input(tmp_path: Path) -> None:
    touch(tmp_path, "a.yaml")
    with pytest.raises(UsageError) as info:
        find_suite_files(["a.yaml", "canaries/missing.yaml"], tmp_path)
    message = str(info.value)
    assert message.startswith("input 'config': canaries/missing.yaml: file not found")
    assert str(tmp_path) in message


def test_find_suite_files_unmatched_glob_says_so(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"input 'config': suites/\*\.yml: no file matches"):
        find_suite_files(["suites/*.yml"], tmp_path)


@pytest.mark.parametrize("pattern", ["canaries", "canaries/*"])
def test_find_suite_files_entry_matching_only_folders_is_a_usage_error(
    tmp_path: Path, pattern: str
) -> None:
    # Otherwise the step runs no suite at all and passes green.
    (tmp_path / "canaries" / "nested").mkdir(parents=True)
    with pytest.raises(UsageError) as info:
        find_suite_files([pattern], tmp_path)
    message = str(info.value)
    assert message.startswith(f"input 'config': {pattern}: ")
    assert "folder" in message and "canaries/**/*.yaml" in message


# ── models_for ──────────────────────────────────────────────────────────────


def test_models_input_overrides_the_suite() -> None:
    settings = dataclasses.replace(Settings(), models=["x/one", "x/two"])
    assert [m.model for m in models_for(loaded(), settings)] == ["x/one", "x/two"]


def test_suite_models_are_used_with_their_parameters() -> None:
    text = SUITE.replace(
        "models: [model-a]", "models:\n  - model-a\n  - model: model-b\n    api_base: http://h"
    )
    specs = models_for(loaded(text), Settings())
    assert [(m.model, m.params) for m in specs] == [
        ("model-a", {}),
        ("model-b", {"api_base": "http://h"}),
    ]


def test_no_model_anywhere_names_both_fixes() -> None:
    with pytest.raises(UsageError) as info:
        models_for(loaded(SUITE.replace("models: [model-a]\n", "")), Settings())
    message = str(info.value)
    assert "canary.yaml" in message
    assert "`models:`" in message and "`models` input" in message


# ── promotion ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("policy", "regressions", "errors", "allowed", "why"),
    [
        ("always", True, 3, True, ""),
        ("never", False, 0, False, "update-baseline does not allow it for this event"),
        ("if_clean", False, 0, True, ""),
        ("if_clean", True, 0, False, "the run has regressions"),
        ("if_clean", False, 2, False, "2 responses errored"),
    ],
)
def test_promotion_allowed(
    policy: str, regressions: bool, errors: int, allowed: bool, why: str
) -> None:
    assert promotion_allowed(policy, run_result(errors=errors), regressions) == (allowed, why)


# ── run_pair ────────────────────────────────────────────────────────────────


def test_no_baseline_and_may_create_saves_the_run() -> None:
    backend = DictBackend()
    pair = pair_run(backend)
    assert pair.baseline_status is BaselineStatus.CREATED
    assert pair.baseline_location == "mem://demo/model-a"
    assert pair.drift is None and pair.baseline_run is None
    ((snapshot, sha, ref, regressions),) = backend.saves
    assert (sha, ref, regressions) == ("abc123", "main", 0)
    assert snapshot.run_result is pair.run
    assert backend.loads == [("demo", "model-a", "main")]
    assert pair.notes == []
    assert pair.prompt_lines == {"p1": 9, "p2": 11}
    assert pair.probe_lines == {"p2/json": 14}
    assert pair.suite_file == "canary.yaml"


def test_the_pair_carries_its_prompts_tags_for_the_report_page() -> None:
    tagged = SUITE.replace("    text: first\n", "    text: first\n    tags: [smoke, json]\n")
    suite = loaded(tagged)
    judging = PairJudging(SETTINGS, push_activity(), "abc123", DictBackend(), lambda: NOW)
    pair = judge_run(suite, "model-a", run_result(), judging)
    # p2 has no tags: absent, not an empty list.
    assert pair.prompt_tags == {"p1": ["smoke", "json"]}


def test_no_baseline_on_a_pull_request_is_missing_and_nothing_is_saved() -> None:
    backend = DictBackend()
    pair = pair_run(backend, act=PR)
    assert pair.baseline_status is BaselineStatus.MISSING
    assert backend.saves == []
    assert pair.notes == []


def test_clean_run_with_if_clean_updates_the_baseline() -> None:
    backend = DictBackend()
    old = seed_baseline(backend)
    pair = pair_run(backend)
    assert pair.baseline_status is BaselineStatus.UPDATED
    assert pair.drift is not None and pair.drift.regressions == []
    assert pair.drift.baseline_snapshot_id == old.snapshot_id
    assert pair.baseline_run is not None
    assert len(backend.saves) == 1
    assert backend.baselines[("demo", "model-a")].run_result is pair.run


def test_pull_request_compares_but_never_promotes() -> None:
    backend = DictBackend()
    seed_baseline(backend)
    pair = pair_run(backend, act=PR)
    assert pair.baseline_status is BaselineStatus.FOUND
    assert pair.drift is not None
    assert backend.saves == []
    assert pair.notes == []


def test_regressions_block_promotion_with_a_note() -> None:
    backend = DictBackend()
    old = seed_baseline(backend)
    pair = pair_run(backend, answers={"p1": "nope", "p2": "not json"})
    assert pair.regression_count == 3  # p1/kw, p2/kw, p2/json
    assert pair.baseline_status is BaselineStatus.FOUND
    assert backend.saves == []
    assert backend.baselines[("demo", "model-a")] is old
    assert "The baseline was not updated: the run has regressions." in pair.notes


def test_errored_responses_block_promotion_with_a_note() -> None:
    backend = DictBackend()
    seed_baseline(backend)
    pair = pair_run(backend, answers={**GOOD, "p2": ProviderError("bad request", status_code=400)})
    assert pair.error_count == 1
    assert pair.baseline_status is BaselineStatus.FOUND
    assert backend.saves == []
    assert "The baseline was not updated: 1 response errored." in pair.notes


def test_always_promotes_even_with_regressions() -> None:
    backend = DictBackend()
    seed_baseline(backend)
    pair = pair_run(backend, act=push_activity(promotion="always"), answers={"p1": "x", "p2": "y"})
    assert pair.regression_count == 3
    assert pair.baseline_status is BaselineStatus.UPDATED
    assert backend.saves[0][3] == 3  # the regression count reaches the history line


@pytest.mark.parametrize("with_baseline", [True, False])
def test_always_never_promotes_an_untrustworthy_run(with_baseline: bool) -> None:
    # Half the prompts errored, above max-error-rate 0.2: the step exits 3, and such a run must
    # not become the reference later pull requests are judged by.
    backend = DictBackend()
    old = seed_baseline(backend) if with_baseline else None
    broken = {**GOOD, "p2": ProviderError("server error", status_code=500)}
    pair = pair_run(backend, act=push_activity(promotion="always"), answers=broken)
    assert pair.run.error_rate == 0.5
    assert backend.saves == []
    assert backend.baselines.get(("demo", "model-a")) is old
    assert pair.baseline_status is (
        BaselineStatus.FOUND if with_baseline else BaselineStatus.MISSING
    )
    assert any("above max-error-rate" in note for note in pair.notes)


def test_changed_probes_rescore_the_baseline_with_a_note() -> None:
    backend = DictBackend()
    old_suite = loaded(SUITE.replace("required_keywords: [ok]", "required_keywords: [first]"))
    # Under the old probes both answers failed "kw"; under the new ones both pass.
    seed_baseline(backend, suite=old_suite)
    pair = pair_run(backend, act=PR)
    assert pair.drift is not None
    assert pair.drift.improvements == [] and pair.drift.regressions == []
    assert pair.drift.rescored_responses == 2
    outcome = build_outcome([pair], Settings(), warnings=[])
    assert "2 baseline responses re-scored" in render_comment(outcome, "<!-- m -->")


def test_unchanged_probes_are_not_rescored() -> None:
    backend = DictBackend()
    seed_baseline(backend)
    pair = pair_run(backend, act=PR)
    assert pair.drift is not None and pair.drift.rescored_responses == 0


@pytest.mark.parametrize(
    ("age_days", "limit", "stale"),
    [(40, 30, True), (30, 30, False), (400, 0, False), (2, 1, True)],
)
def test_stale_baseline_note(age_days: int, limit: int, stale: bool) -> None:
    backend = DictBackend()
    seed_baseline(backend, created=NOW - timedelta(days=age_days, hours=1))
    settings = dataclasses.replace(SETTINGS, baseline_max_age_days=limit)
    pair = pair_run(backend, act=PR, settings=settings)
    notes = [n for n in pair.notes if "days old" in n]
    if stale:
        assert notes == [
            f"The baseline is {age_days} days old (limit {limit}): drift may have accumulated "
            "since; consider re-creating it."
        ]
    else:
        assert notes == []


def test_baseline_with_a_naive_timestamp_is_aged_as_utc() -> None:
    backend = DictBackend()
    snap = seed_baseline(backend)
    naive = (NOW - timedelta(days=50)).replace(tzinfo=None)
    backend.baselines[("demo", "model-a")] = snap.model_copy(update={"created_at": naive})
    pair = pair_run(backend, act=PR)
    assert any("50 days old" in n for n in pair.notes)


def test_unreadable_baseline_is_reported_and_nothing_is_saved() -> None:
    problem = BaselineFileError("baselines/demo.json", "not valid JSON (Expecting value)")
    backend = DictBackend(load_error=problem)
    pair = pair_run(backend)  # a push that could otherwise create the baseline
    assert pair.baseline_error == str(problem)
    assert "baselines/demo.json" in (pair.baseline_error or "")
    assert [r.prompt_id for r in pair.run.llm_responses] == ["p1", "p2"]
    assert pair.run.probe_results
    assert pair.drift is None
    assert backend.saves == []
    assert pair.baseline_status is BaselineStatus.MISSING
    assert pair.notes == []  # the unreadable baseline is the step's failure, not a note


@pytest.mark.parametrize("with_baseline", [False, True])
def test_an_incomplete_run_is_not_promoted_and_says_so(with_baseline: bool) -> None:
    backend = DictBackend()
    if with_baseline:
        seed_baseline(backend)
    complete = pair_run(DictBackend(), act=PR).run
    stopped = complete.model_copy(update={"incomplete": "the job was cancelled"})
    judging = PairJudging(SETTINGS, push_activity(), "abc123", backend, lambda: NOW)
    pair = judge_run(loaded(), "model-a", stopped, judging)
    assert backend.saves == []
    assert pair.baseline_status is (
        BaselineStatus.FOUND if with_baseline else BaselineStatus.MISSING
    )
    assert pair.notes == ["Not promoted: the run is incomplete (the job was cancelled)."]


@pytest.mark.parametrize("with_baseline", [False, True])
def test_failed_save_is_a_note_and_the_status_is_not_promoted(with_baseline: bool) -> None:
    backend = DictBackend(save_error=BaselineStoreError("push rejected: contents: write needed"))
    if with_baseline:
        seed_baseline(backend)
    pair = pair_run(backend)
    expected = BaselineStatus.FOUND if with_baseline else BaselineStatus.MISSING
    assert pair.baseline_status is expected
    assert pair.baseline_location is None
    assert "The baseline could not be saved: push rejected: contents: write needed" in pair.notes


def test_no_compare_reads_and_writes_nothing() -> None:
    backend = DictBackend()
    seed_baseline(backend)
    pair = pair_run(
        backend, act=push_activity(compare=False, promotion="never", may_create_baseline=False)
    )
    assert backend.loads == [] and backend.saves == []
    assert pair.drift is None
    assert pair.baseline_status is BaselineStatus.MISSING


def test_model_mismatch_warning_reaches_the_comment_and_summary() -> None:
    backend = DictBackend()
    # A baseline recorded with model-a, stored where model-b's baseline is looked up.
    seed_baseline(backend, model="model-a", key_model="model-b")
    pair = pair_run(backend, act=PR, model="model-b")
    assert pair.drift is not None
    (warning,) = [w for w in pair.drift.warnings if "model" in w]
    assert "'model-a'" in warning and "'model-b'" in warning
    outcome = build_outcome([pair], SETTINGS, warnings=[], pr_number=1)
    comment = render_comment(outcome, comment_marker("default"))
    summary = render_summary(outcome)
    for text in (comment, summary):
        # Model text is markdown-escaped ("model\\-a"); the warning is there, naming both.
        assert re.search(r"baseline was recorded with model 'model\\?-a'.*'model\\?-b'", text)


@pytest.mark.parametrize(("samples_input", "expected"), [(None, 3), (1, 1), (2, 2)])
def test_the_samples_input_overrides_the_suite_default_even_when_it_is_1(
    samples_input: int | None, expected: int
) -> None:
    # An empty input keeps the suite's `defaults: samples`; an explicit 1 is a choice.
    text = SUITE.replace("models: [model-a]\n", "models: [model-a]\ndefaults: {samples: 3}\n")
    settings = dataclasses.replace(SETTINGS, samples=samples_input)
    pair = pair_run(DictBackend(), act=PR, settings=settings, suite=loaded(text))
    assert pair.run.provenance.samples == expected
    assert [r.sample for r in pair.run.responses_for("p1")] == list(range(expected))


def test_a_missing_working_directory_is_named_as_the_input_at_fault(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(UsageError) as info:
        find_suite_files(["canaries/*.yaml"], missing)
    assert str(info.value).startswith(f"input 'working-directory': directory {missing} not found")
