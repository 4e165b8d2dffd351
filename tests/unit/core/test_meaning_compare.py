"""Meaning comparisons through the real runner, pool and comparator (fake model and embedder):
rows, verdicts, the moved answer, storage, old baselines, another embedding model, bad vectors."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping

import pytest

from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, CanaryRunResult
from promptcanary.core.probes.format import KeywordPresenceProbe
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.sampling.pool import promote
from promptcanary.core.spec import SemanticDriftSpec, SuiteSpec
from promptcanary.storage.base import snapshot_from_json, snapshot_to_json
from tests.fakes.embedder_fake import FakeEmbedder
from tests.fakes.meaning_model import Behaviour, ClusterProvider, cluster_vector, mixture

PROMPTS = [CanaryPrompt(id=f"p{i}", text=f"question {i}") for i in range(4)]
STEADY = {p.id: Behaviour(mixture(i)) for i, p in enumerate(PROMPTS)}


def _suite(model: str = "fake/embed") -> SuiteSpec:
    return SuiteSpec(
        "meaning",
        PROMPTS,
        [KeywordPresenceProbe(required_keywords=["says"])],
        semantic_drift=SemanticDriftSpec(model),
    )


def _run(
    behaviours: Mapping[str, Behaviour],
    baseline: BaselineSnapshot | None,
    rng: random.Random,
    *,
    suite: SuiteSpec | None = None,
    embedder: FakeEmbedder | None = None,
    samples: int | str = "auto",
) -> CanaryRunResult:
    embedder = embedder or FakeEmbedder(vector_of=cluster_vector, dimension=32)
    return asyncio.run(
        run_suite(
            suite or _suite(),
            ClusterProvider(behaviours, rng),
            RunOptions(samples=samples, show_progress=False),
            baseline=baseline,
            services=[EmbeddingService(embedder)],
        )
    )


@pytest.fixture(scope="module")
def pool() -> BaselineSnapshot:
    rng = random.Random(11)
    snapshot = None
    for _ in range(8):
        snapshot = promote(_run(STEADY, snapshot, rng), snapshot)
    assert snapshot is not None
    return snapshot


def _semantic(run: CanaryRunResult, baseline: BaselineSnapshot) -> dict[str, object]:
    report = compare(baseline, run)
    return {c.prompt_id: c for c in report.comparisons if c.probe_key == "semantic"}


def test_the_pool_carries_vectors_with_the_embedding_model(pool: BaselineSnapshot) -> None:
    assert len(pool.pool) == 8
    assert all(e.embedding is not None and e.embedding.model_id == "fake/embed" for e in pool.pool)
    # The first push had no baseline (one answer a prompt); later ones at least min_samples.
    assert [len(e.vectors["p0"]) >= 3 for e in pool.pool] == [True] * 7 + [False]
    again = snapshot_from_json(snapshot_to_json(pool), "test")  # the stored document
    assert again.pool[0].vectors == pool.pool[0].vectors
    assert again.run_result.llm_responses[0].embedding == pool.run_result.llm_responses[0].embedding


def test_no_change_is_same_everywhere(pool: BaselineSnapshot) -> None:
    rows = _semantic(_run(STEADY, pool, random.Random(1)), pool)
    assert set(rows) == {p.id for p in PROMPTS}
    assert {r.verdict for r in rows.values()} == {"same"}  # type: ignore[attr-defined]
    assert not any(r.regression for r in rows.values())  # type: ignore[attr-defined]


def test_a_change_of_meaning_is_changed_with_the_moved_answer(pool: BaselineSnapshot) -> None:
    changed = {**STEADY, "p1": Behaviour(mixture(1), "all")}
    run = _run(changed, pool, random.Random(2))
    report = compare(pool, run)
    row = next(c for c in report.comparisons if c.probe_key == "semantic" and c.prompt_id == "p1")
    assert row.verdict == "changed" and row.regression
    assert row in report.regressions
    detail = row.semantic
    assert detail is not None and detail.shift is not None and detail.shift_ci is not None
    assert detail.shift_ci[0] > detail.min_shift
    assert detail.moved_answer is not None and "says changed" in detail.moved_answer
    assert (
        detail.nearest_baseline_answer is not None and "p1 says a" in detail.nearest_baseline_answer
    )
    assert row.score_delta == pytest.approx(-min(1.0, 2 * detail.shift))
    others = [c for c in report.comparisons if c.probe_key == "semantic" and c.prompt_id != "p1"]
    assert not any(c.regression for c in others)


def test_an_old_baseline_without_vectors_loads_and_lists_the_comparison_as_new(
    pool: BaselineSnapshot,
) -> None:
    bare = pool.run_result.model_copy(
        update={
            "llm_responses": [
                r.model_copy(update={"embedding": None}) for r in pool.run_result.llm_responses
            ],
            "provenance": pool.run_result.provenance.model_copy(update={"embedding": None}),
        }
    )
    text = snapshot_to_json(BaselineSnapshot.of_run(bare))
    old = snapshot_from_json(text.replace('"embedding": null,', ""), "old")
    run = _run(STEADY, old, random.Random(3))
    report = compare(old, run)
    assert not [c for c in report.comparisons if c.probe_key == "semantic"]
    assert {(r.prompt_id, r.probe_key) for r in report.new_probes} == {
        (p.id, "semantic") for p in PROMPTS
    }


def test_another_embedding_model_is_inconclusive_with_the_reason(pool: BaselineSnapshot) -> None:
    run = _run(STEADY, pool, random.Random(4), suite=_suite("other/embed"))
    rows = _semantic(run, pool)
    assert {r.verdict for r in rows.values()} == {"inconclusive"}  # type: ignore[attr-defined]
    row = rows["p0"]
    assert "'fake/embed'" in row.current_details and "'other/embed'" in row.current_details  # type: ignore[attr-defined]


def test_nan_vectors_never_give_a_verdict(pool: BaselineSnapshot) -> None:
    broken = FakeEmbedder(vector_of=lambda text: [float("nan")] * 32, dimension=32)
    run = _run(STEADY, pool, random.Random(5), embedder=broken)
    assert not any(r.embedding for r in run.llm_responses)
    assert run.provenance.embedding is not None and "NaN" in run.provenance.embedding.errors[0]
    rows = _semantic(run, pool)
    assert {r.verdict for r in rows.values()} == {"inconclusive"}  # type: ignore[attr-defined]
    assert "NaN" in rows["p0"].current_details  # type: ignore[attr-defined]
    assert not any(r.regression for r in rows.values())  # type: ignore[attr-defined]


def test_a_429_storm_on_the_embedding_endpoint_is_inconclusive_not_a_crash(
    pool: BaselineSnapshot,
) -> None:
    from promptcanary.core.run.provider import ProviderError

    storm = FakeEmbedder(
        vector_of=cluster_vector,
        dimension=32,
        script=[ProviderError("HTTP 429 slow down", status_code=429)] * 200,
    )

    async def no_wait(_: float) -> None:
        return None

    run = asyncio.run(
        run_suite(
            _suite(),
            ClusterProvider(STEADY, random.Random(6)),
            RunOptions(samples="auto", show_progress=False, max_retries=2),
            baseline=pool,
            services=[EmbeddingService(storm)],
            sleep=no_wait,
        )
    )
    usage = run.services[0]
    assert usage.errors > 0 and usage.requests >= 3
    rows = _semantic(run, pool)
    assert {r.verdict for r in rows.values()} == {"inconclusive"}  # type: ignore[attr-defined]
    assert "429" in rows["p0"].current_details  # type: ignore[attr-defined]
    # The model's own comparisons are unaffected.
    report = compare(pool, run)
    assert [c for c in report.comparisons if c.probe_key != "semantic" and c.verdict == "same"]


def test_a_fixed_number_of_samples_is_compared_in_one_look(pool: BaselineSnapshot) -> None:
    """``samples: N``: the N answers of each prompt against the pool; a prompt whose answers all
    moved to another meaning is changed, the others are not."""
    rng = random.Random(21)
    moved = {**STEADY, "p0": Behaviour(mixture(0), "all")}
    rows = _semantic(_run(moved, pool, rng, samples=20), pool)
    assert set(rows) == {p.id for p in PROMPTS}
    assert rows["p0"].verdict == "changed" and rows["p0"].regression  # type: ignore[attr-defined]
    assert rows["p0"].p_adjusted is not None  # type: ignore[attr-defined]
    assert all(rows[p].verdict != "changed" for p in ("p1", "p2", "p3"))  # type: ignore[attr-defined]
    steady = _semantic(_run(STEADY, pool, rng, samples=20), pool)
    assert {r.verdict for r in steady.values()} <= {"same", "inconclusive"}  # type: ignore[attr-defined]
    assert "same" in {r.verdict for r in steady.values()}  # type: ignore[attr-defined]


def test_one_sample_each_is_too_few_to_compare_meaning(pool: BaselineSnapshot) -> None:
    rows = _semantic(_run(STEADY, pool, random.Random(22), samples=1), pool)
    assert {r.verdict for r in rows.values()} == {"inconclusive"}  # type: ignore[attr-defined]
