"""Pooled baselines, the stored side: compact per-run summaries, the rolling pool, snapshots.

Reading the pool for today's prompts (prompt-hash matching) is tested in test_sequencer.py."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime

import pytest

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    Provenance,
    ProviderConfig,
    ScoreSummary,
    ToolCall,
)
from promptcanary.core.sampling import pool
from promptcanary.core.sampling.sequencer import counts_of
from promptcanary.core.sampling.sequential import Counts


def _result(
    prompt: str, key: str, passed: bool, score: float, sample: int, errored: bool = False
) -> ProbeResult:
    return ProbeResult(
        probe_id=key, probe_key=key, prompt_id=prompt, passed=passed, score=score,
        sample=sample, errored=errored,
    )  # fmt: skip


def _run(run_id: str, answers: dict[str, list[str]], hashes: dict[str, str]) -> CanaryRunResult:
    """Each answer passes probe 'p' when it contains 'ok'; probe 's' scores its length / 10."""
    results, responses = [], []
    for prompt, texts in answers.items():
        for i, text in enumerate(texts):
            responses.append(
                LLMResponse(prompt_id=prompt, provider_model_id="m", content=text, sample=i)
            )
            results.append(_result(prompt, "p", "ok" in text, 1.0 if "ok" in text else 0.0, i))
            results.append(_result(prompt, "s", True, min(1.0, len(text) / 10), i))
    return CanaryRunResult(
        run_id=run_id, suite_name="s", provider=ProviderConfig(model_id="m"),
        probe_results=results, llm_responses=responses,
        started_at=datetime(2024, 1, 1, tzinfo=UTC), provenance=Provenance(prompt_hashes=hashes),
    )  # fmt: skip


class TestEntry:
    def test_counts_and_score_moments(self) -> None:
        run = _run("r1", {"a": ["ok", "no", "ok!!"]}, {"a": "h1"})
        entry = pool.entry_for(run)
        assert counts_of(entry.results["a"]["p"]) == Counts(2, 3)
        scores = [0.2, 0.2, 0.4]
        summary = entry.results["a"]["s"]
        assert summary.mean == pytest.approx(statistics.mean(scores))
        assert summary.sd == pytest.approx(statistics.stdev(scores))
        assert entry.prompt_hashes == {"a": "h1"}

    def test_errored_answers_are_left_out(self) -> None:
        summary = pool.summarize_results(
            [_result("a", "p", True, 1.0, 0), _result("a", "p", False, 0.0, 1, errored=True)]
        )
        assert counts_of(summary["a"]["p"]) == Counts(1, 1)

    def test_single_text_only_when_every_answer_matches(self) -> None:
        entry = pool.entry_for(_run("r", {"same": ["ok", "ok"], "varied": ["ok", "ok."]}, {}))
        assert set(entry.texts) == {"same"}

    def test_tool_calls_are_part_of_the_answer(self) -> None:
        plain = LLMResponse(prompt_id="a", provider_model_id="m", content="")
        call = plain.model_copy(update={"tool_calls": [ToolCall(name="f", arguments_raw="{}")]})
        assert pool.answer_digest(plain) != pool.answer_digest(call)

    def test_sd_needs_two_answers(self) -> None:
        assert ScoreSummary(n=1, passes=1, score_sum=1.0, score_sq_sum=1.0).sd is None


class TestPool:
    def test_extend_keeps_newest_first_and_caps(self) -> None:
        entries = [pool.entry_for(_run(f"r{i}", {"a": ["ok"]}, {})) for i in range(4)]
        grown = pool.extend(entries[3], entries[:3][::-1], size=3)
        assert [e.run_id for e in grown] == ["r3", "r2", "r1"]
        assert [e.run_id for e in pool.extend(entries[0], [entries[0]], 5)] == ["r0"]
        with pytest.raises(ValueError, match="at least one"):
            pool.extend(entries[0], [], 0)


class TestSnapshots:
    def _snapshot(self, run: CanaryRunResult, entries: list[pool.PoolEntry]) -> BaselineSnapshot:
        return BaselineSnapshot(suite_name="s", provider=run.provider, run_result=run, pool=entries)

    def test_an_old_document_is_a_pool_of_one(self) -> None:
        run = _run("only", {"a": ["ok"]}, {})
        assert [e.run_id for e in pool.entries_of(self._snapshot(run, []), 20)] == ["only"]

    def test_promotion_carries_the_previous_pool(self) -> None:
        first = _run("r1", {"a": ["ok"]}, {})
        snap = self._snapshot(first, pool.promoted_pool(first, None, 3))
        for i in range(2, 6):
            run = _run(f"r{i}", {"a": ["ok"]}, {})
            snap = self._snapshot(run, pool.promoted_pool(run, snap, 3))
        assert [e.run_id for e in pool.entries_of(snap, 20)] == ["r5", "r4", "r3"]
        assert [e.run_id for e in pool.entries_of(snap, 2)] == ["r5", "r4"]

    def test_a_list_of_snapshots_pools_without_duplicates(self) -> None:
        a, b = _run("a", {"p": ["ok"]}, {}), _run("b", {"p": ["no"]}, {})
        snap_b = self._snapshot(b, [pool.entry_for(b), pool.entry_for(a)])
        assert [e.run_id for e in pool.entries_of([snap_b, self._snapshot(a, [])], 5)] == ["b", "a"]

    def test_the_own_run_is_summarised_afresh(self) -> None:
        # A re-scored baseline: its stored entry is stale, its results are not.
        run = _run("r", {"a": ["ok", "ok"]}, {})
        stale = pool.entry_for(_run("r", {"a": ["no", "no"]}, {}))
        (entry,) = pool.entries_of(self._snapshot(run, [stale]), 5)
        assert counts_of(entry.results["a"]["p"]) == Counts(2, 2)
