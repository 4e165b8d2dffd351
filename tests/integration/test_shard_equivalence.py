"""Shards merged reach the verdict one job reaches: same drift JSON, same promoted baseline.

The example suite replays its recordings (the real replay provider): the baseline answers, then
the drifted ones as the current run, once as one job and once as shards 1/4 … 4/4 merged. Both go
through the one evaluation (``promptcanary.core.verdict.evaluate``); with repeated samples the
significance tests and their multiple-testing correction run over the whole suite on both sides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promptcanary.core.models import BaselineSnapshot, CanaryRunResult
from promptcanary.core.run.shards import RunPart, Shard, merge_runs
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.evaluate import Evaluation, EvaluationPolicy, evaluate
from promptcanary.providers.replay import ReplayProvider
from promptcanary.storage.base import snapshot_to_json

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Name or date one run or one report, whoever makes it; everything else must match.
VOLATILE = {"run_id", "started_at", "finished_at", "duration_ms", "created_at", "latency_ms"}
VOLATILE_DRIFT = {"created_at", "current_run_id"}


def run(suite: CanarySuite, recording: str, samples: int, shard: Shard | None) -> CanaryRunResult:
    return suite.run(
        ReplayProvider(EXAMPLES / "recordings" / recording),
        show_progress=False,
        samples=samples,
        concurrency=3,
        git_sha="c" * 40,
        shard=shard,
    )


def strip(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: strip(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [strip(v, keys) for v in value]
    return value


def snapshot_document(evaluation: Evaluation) -> dict[str, Any]:
    import json

    snapshot = BaselineSnapshot.of_run(evaluation.run)
    return strip(json.loads(snapshot_to_json(snapshot)), VOLATILE | {"snapshot_id"})


@pytest.mark.parametrize("samples", [1, 5])
@pytest.mark.parametrize("recording", ["drifted.jsonl", "baseline.jsonl"])
def test_four_shards_merged_equal_one_job(recording: str, samples: int) -> None:
    suite = CanarySuite.from_yaml(EXAMPLES / "canary.yaml")
    baseline = BaselineSnapshot.of_run(run(suite, "baseline.jsonl", samples, None))
    policy = EvaluationPolicy(promotion="always")

    one_job = evaluate(baseline, run(suite, recording, samples, None), suite, policy)
    parts = [RunPart(run(suite, recording, samples, Shard(i, 4)), f"leg-{i}") for i in range(1, 5)]
    assert all(p.run.llm_responses for p in parts), "14 prompts in 4 shards: none is empty"
    merged = evaluate(baseline, merge_runs(parts), suite, policy)

    assert one_job.drift is not None and merged.drift is not None
    one_json = strip(one_job.drift.model_dump(mode="json"), VOLATILE_DRIFT)
    merged_json = strip(merged.drift.model_dump(mode="json"), VOLATILE_DRIFT)
    assert merged_json == one_json
    assert bool(one_job.drift.has_regressions) is (recording == "drifted.jsonl")
    assert merged.drift.statistical is (samples > 1)
    assert (merged.gate_failed, merged.promotion) == (one_job.gate_failed, one_job.promotion)
    assert snapshot_document(merged) == snapshot_document(one_job)
