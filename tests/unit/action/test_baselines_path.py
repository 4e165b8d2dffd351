"""The workspace-folder baseline store, the none store and history lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from promptcanary.core.models import (
    Approval,
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
    RegressionKey,
)
from promptcanary.storage.base import BaselineFileError
from promptcanary.storage.layout import baseline_file
from promptcanary_action.baselines.history import (
    HISTORY_KEEP,
    PROMPT_HISTORY_LIMIT,
    append_history,
    history_line,
    history_record,
    parse_history,
    prompt_history,
    prompt_key,
)
from promptcanary_action.baselines.none import NoneBackend
from promptcanary_action.baselines.path import PathBackend

MODEL = "openai/gpt-4o"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def snapshot(score: float = 0.5, errored: bool = False, **overrides: object) -> BaselineSnapshot:
    provider = ProviderConfig(model_id=MODEL, extra_params={"api_key": "sk-secret-value"})
    run = CanaryRunResult(
        suite_name="My Suite",
        provider=provider,
        probe_results=[
            ProbeResult(probe_id="json_validity", prompt_id="p1", passed=score > 0.6, score=score),
            ProbeResult(probe_id="json_validity", prompt_id="p2", passed=True, score=1.0),
        ],
        llm_responses=[
            LLMResponse(prompt_id="p1", provider_model_id=MODEL, content="{}"),
            LLMResponse(
                prompt_id="p2", provider_model_id=MODEL, error="timeout" if errored else None
            ),
        ],
        started_at=T0,
        finished_at=T0 + timedelta(seconds=1),
    )
    fields: dict[str, object] = {
        "suite_name": "My Suite",
        "provider": provider,
        "run_result": run,
        "created_at": T0,
    }
    return BaselineSnapshot(**{**fields, **overrides})  # type: ignore[arg-type]


def path_store(tmp_path: Path) -> PathBackend:
    return PathBackend(tmp_path / "baselines", clock=lambda: T0 + timedelta(days=1))


# -- path store --------------------------------------------------------------------------------
def test_save_writes_the_layout_and_load_reads_it_back(tmp_path: Path) -> None:
    snap = snapshot()

    location = path_store(tmp_path).save(snap, sha="a" * 40, ref="main")

    expected = tmp_path / "baselines" / "my-suite" / "openai-gpt-4o" / "baseline.json"
    assert location == str(expected)
    assert path_store(tmp_path).load("My Suite", MODEL, for_ref="main") == snapshot(
        snapshot_id=snap.snapshot_id,
        provider=snap.provider.model_copy(update={"extra_params": {"api_key": "***"}}),
        run_result=snap.run_result.model_copy(
            update={"provider": ProviderConfig(model_id=MODEL, extra_params={"api_key": "***"})}
        ),
    )
    assert "sk-secret-value" not in expected.read_text(encoding="utf-8")


def test_missing_baseline_is_none(tmp_path: Path) -> None:
    store = path_store(tmp_path)
    store.save(snapshot(), sha="a" * 40, ref="main")

    assert store.load("My Suite", "anthropic/claude-3", for_ref="main") is None
    assert PathBackend(tmp_path / "nowhere").load("My Suite", MODEL, for_ref="main") is None


def test_every_save_appends_one_history_line(tmp_path: Path) -> None:
    store = path_store(tmp_path)
    store.save(snapshot(score=0.5), sha="a" * 40, ref="main")
    store.save(snapshot(score=1.0, errored=True), sha="b" * 40, ref="main", regressions=0)

    history = store.history("My Suite", MODEL)

    assert [(h["sha"], h["overall_score"], h["errors"]) for h in history] == [
        ("a" * 40, 0.75, 0),
        ("b" * 40, 1.0, 1),
    ]
    assert history[0]["time"] == "2024-05-02T12:00:00+00:00"
    assert [h["prompts"] for h in history] == [2, 2]
    assert [h["regressions"] for h in history] == [None, 0]
    lines = (tmp_path / "baselines/my-suite/openai-gpt-4o/history.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(" " not in line for line in lines)  # compact


def test_a_promotion_under_an_approval_records_it_in_history_and_snapshot(
    tmp_path: Path,
) -> None:
    store = path_store(tmp_path)
    key = RegressionKey(suite="My Suite", model=MODEL, prompt_id="p1", probe_key="json_validity")
    approval = Approval(
        keys=(key,), head_sha="c" * 40, pr_number=12, approver="octo-cat", approved_at=T0
    )
    store.save(snapshot(), sha="a" * 40, ref="main")
    store.save(snapshot(approval=approval), sha="b" * 40, ref="main", regressions=1)

    first, second = store.history("My Suite", MODEL)

    assert "approval" not in first
    assert second["approval"] == {
        "pr": 12,
        "approver": "octo-cat",
        "approved_at": "2024-05-01T12:00:00+00:00",
        "head_sha": "c" * 40,
        "fingerprint": approval.fingerprint,
        "keys": 1,
    }
    loaded = store.load("My Suite", MODEL, for_ref="main")
    assert loaded is not None and loaded.approval == approval


def test_save_leaves_no_temporary_files(tmp_path: Path) -> None:
    store = path_store(tmp_path)
    store.save(snapshot(), sha="a" * 40, ref="main")
    store.save(snapshot(), sha="b" * 40, ref="main")

    folder = tmp_path / "baselines" / "my-suite" / "openai-gpt-4o"
    assert sorted(p.name for p in folder.iterdir()) == ["baseline.json", "history.jsonl"]


def test_corrupt_baseline_names_the_file(tmp_path: Path) -> None:
    target = tmp_path / "baselines" / "my-suite" / "openai-gpt-4o" / "baseline.json"
    target.parent.mkdir(parents=True)
    target.write_text("[1, 2", encoding="utf-8")

    with pytest.raises(BaselineFileError) as err:
        path_store(tmp_path).load("My Suite", MODEL, for_ref="main")

    assert err.value.location == str(target)
    assert "not valid JSON" in err.value.problem


def test_history_without_file_is_empty(tmp_path: Path) -> None:
    assert path_store(tmp_path).history("My Suite", MODEL) == []


# -- history lines -----------------------------------------------------------------------------
def test_history_record_counts_prompts_and_errors() -> None:
    record = history_record(snapshot(errored=True), sha="c" * 40, ref="main", now=T0)

    assert record["prompts"] == 2 and record["errors"] == 1
    assert record["overall_score"] == 0.75 and record["pass_rate"] == 0.5  # p1 fails at 0.5
    assert record["snapshot_id"] and record["model"] == MODEL
    assert record["time"] == "2024-05-01T12:00:00+00:00"


def test_history_record_keeps_each_prompts_pass_rate_in_percent_under_a_short_key() -> None:
    record = history_record(snapshot(score=0.5), sha="c" * 40, ref="main", now=T0)

    assert record["prompt_pass"] == {prompt_key("p1"): 0, prompt_key("p2"): 100}
    assert len(prompt_key("p1")) == 8 and prompt_key("p1") != prompt_key("p2")
    assert prompt_history([record], "p1") == [0.0]
    assert prompt_history([record], "p2") == [1.0]


def test_history_record_of_a_large_suite_keeps_the_first_prompts_only() -> None:
    count = PROMPT_HISTORY_LIMIT + 5
    run = CanaryRunResult(
        suite_name="Big",
        provider=ProviderConfig(model_id=MODEL),
        probe_results=[
            ProbeResult(probe_id="t", prompt_id=f"q{i}", passed=i % 2 == 0, score=1.0)
            for i in range(count)
        ],
        llm_responses=[
            LLMResponse(prompt_id=f"q{i}", provider_model_id=MODEL, content="x")
            for i in range(count)
        ],
    )
    record = history_record(BaselineSnapshot.of_run(run), sha="s", ref="main", now=T0)

    assert len(record["prompt_pass"]) == PROMPT_HISTORY_LIMIT
    assert prompt_history([record], f"q{PROMPT_HISTORY_LIMIT - 1}") == [0.0]
    assert prompt_history([record], f"q{PROMPT_HISTORY_LIMIT}") == []
    # Compact: a line of this suite stays near 14 bytes a prompt.
    assert len(history_line(record)) < 15 * PROMPT_HISTORY_LIMIT + 400


def test_prompt_history_reads_old_and_damaged_lines_as_no_point() -> None:
    key = prompt_key("p1")
    old = '{"sha":"a","model":"m","overall_score":0.5}'  # before prompt_pass existed
    lines = [
        old,
        "{broken",
        f'{{"prompt_pass":{{"{key}":50}}}}',
        f'{{"prompt_pass":{{"{key}":"high"}}}}',
        f'{{"prompt_pass":{{"{key}":250}}}}',
        '{"prompt_pass":[1,2]}',
        f'{{"prompt_pass":{{"{key}":100}}}}',
    ]
    records = parse_history("\n".join(lines) + "\n")

    assert len(records) == 7 and records[0]["overall_score"] == 0.5  # the old line loads
    assert prompt_history(records, "p1") == [0.5, 1.0]
    assert prompt_history(records, "p2") == []


def test_history_record_carries_the_served_model_ids() -> None:
    plain = snapshot()
    assert "served" not in history_record(plain, sha="c" * 40, ref="main", now=T0)
    answers = [
        r.model_copy(update={"served_model": served})
        for r, served in zip(plain.run_result.llm_responses, ("gpt-4o-b", "gpt-4o-a"), strict=True)
    ]
    run = plain.run_result.model_copy(update={"llm_responses": answers})
    record = history_record(
        plain.model_copy(update={"run_result": run}), sha="c" * 40, ref="main", now=T0
    )
    assert record["served"] == ["gpt-4o-a", "gpt-4o-b"]


def test_append_repairs_a_missing_final_newline() -> None:
    text = append_history('{"a":1}', {"b": 2})

    assert text == '{"a":1}\n{"b":2}\n'


def test_append_keeps_only_the_newest_lines_when_bounded() -> None:
    text = "".join(f'{{"n":{i}}}\n' for i in range(5))

    kept = append_history(text, {"n": 5}, keep=3)

    assert [r["n"] for r in parse_history(kept)] == [3, 4, 5]
    assert append_history(text, {"n": 5}) == text + '{"n":5}\n'


def test_path_history_is_bounded(tmp_path: Path) -> None:
    store = path_store(tmp_path)
    history_path = tmp_path / "baselines/my-suite/openai-gpt-4o/history.jsonl"
    history_path.parent.mkdir(parents=True)
    history_path.write_text("".join(f'{{"sha":"{i}"}}\n' for i in range(HISTORY_KEEP)))

    store.save(snapshot(), sha="new", ref="main")

    history = store.history("My Suite", MODEL)
    assert len(history) == HISTORY_KEEP
    assert history[0]["sha"] == "1" and history[-1]["sha"] == "new"


def test_damaged_history_lines_are_reported_not_hidden() -> None:
    records = parse_history('{"sha":"a"}\nnot json\n\n[1]\n{"sha":"b"}\n')

    assert records[0] == {"sha": "a"} and records[-1] == {"sha": "b"}
    assert records[1]["line"] == 2 and "not valid JSON" in records[1]["error"]
    assert records[2] == {"line": 4, "error": "not a JSON object"}


# -- none store --------------------------------------------------------------------------------
def test_none_store_keeps_nothing(tmp_path: Path) -> None:
    store = NoneBackend()

    assert store.save(snapshot(), sha="a" * 40, ref="main") == ""
    assert store.load("My Suite", MODEL, for_ref="main") is None
    assert store.history("My Suite", MODEL) == []


def test_model_ids_alike_in_their_first_60_characters_keep_separate_baselines(
    tmp_path: Path,
) -> None:
    arn = "bedrock/arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/"
    first, second = arn + "aaaa1111", arn + "bbbb2222"
    store = path_store(tmp_path)
    for model, score in ((first, 0.25), (second, 0.75)):
        provider = ProviderConfig(model_id=model)
        base = snapshot(score)
        run = base.run_result.model_copy(update={"provider": provider})
        store.save(
            base.model_copy(update={"provider": provider, "run_result": run}), sha="s", ref="main"
        )

    loaded = [store.load("My Suite", m, for_ref="main") for m in (first, second)]

    assert [s.provider.model_id for s in loaded if s] == [first, second]
    assert [s.run_result.overall_score for s in loaded if s] == [0.625, 0.875]
    folders = sorted(p.parent.name for p in (tmp_path / "baselines").rglob("baseline.json"))
    assert len(folders) == 2 and folders[0] != folders[1]
    # A model id short enough keeps the plain slug: existing baselines are still found.
    assert baseline_file("My Suite", MODEL) == "my-suite/openai-gpt-4o/baseline.json"
