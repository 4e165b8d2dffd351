"""Pooled baselines, the stored side: the compact per-run evidence that ``samples: auto`` decides
against.

A promoted run keeps, besides its full results, a :class:`PoolEntry`: per ``(prompt, probe)`` its
pass count, answer count and score sums, and per prompt the digest of its answer text when every
answer was the same text. A new baseline carries the entries of the last K promoted runs (its own
first), so every baseline store (branch, artifact, path) holds the pool inside the snapshot
document with no extra file; a baseline written before pools existed is a pool of one, its own
results. Reading the pool for today's prompts (which entries count, their sums) is
:mod:`promptcanary.core.sampling.sequencer`'s job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    PoolEntry,
    ProbeResult,
    ScoreSummary,
)

DEFAULT_POOL = 20
"""Promoted runs pooled by default (``baseline-pool``)."""
MAX_POOL = 100
"""The largest ``baseline-pool``: every pooled run is stored inside each baseline document."""

Baseline = BaselineSnapshot | Sequence[BaselineSnapshot]
"""What ``samples: auto`` decides against: a snapshot (with its stored pool) or a list of them,
newest first."""


def answer_digest(response: LLMResponse) -> str:
    """A short digest of an answer (text and tool calls), to spot identical answers."""
    calls = [(c.name, c.arguments_raw) for c in response.tool_calls]
    text = json.dumps([response.content, calls], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def single_texts(responses: Iterable[LLMResponse]) -> dict[str, str]:
    """prompt id → digest, for prompts whose answers (errored ones excluded) were all one text."""
    seen: dict[str, set[str]] = {}
    for response in responses:
        if not response.errored:
            seen.setdefault(response.prompt_id, set()).add(answer_digest(response))
    return {pid: digests.pop() for pid, digests in seen.items() if len(digests) == 1}


def summarize_results(results: Iterable[ProbeResult]) -> dict[str, dict[str, ScoreSummary]]:
    out: dict[str, dict[str, ScoreSummary]] = {}
    for r in results:
        if r.errored:
            continue
        per_prompt = out.setdefault(r.prompt_id, {})
        one = ScoreSummary(n=1, passes=int(r.passed), score_sum=r.score, score_sq_sum=r.score**2)
        per_prompt[r.probe_key] = per_prompt.get(r.probe_key, ScoreSummary()) + one
    return out


MAX_ENTRY_VECTORS = 16
"""Answer vectors a pool entry keeps per prompt (``semantic_drift:``): with the pool's runs, more
than the meaning test can spend, at about 2 kB each for 1 536 dimensions."""


def answer_vectors(responses: Iterable[LLMResponse]) -> dict[str, list[str]]:
    """prompt id → its answers' encoded vectors, in sample order, at most
    :data:`MAX_ENTRY_VECTORS` (the meaning comparison's side of the pool)."""
    out: dict[str, list[str]] = {}
    for response in sorted(responses, key=lambda r: r.sample):
        if response.embedding and not response.errored:
            kept = out.setdefault(response.prompt_id, [])
            if len(kept) < MAX_ENTRY_VECTORS:
                kept.append(response.embedding)
    return out


def entry_for(run: CanaryRunResult) -> PoolEntry:
    """The compact record of a run, as it joins the pool when promoted."""
    return PoolEntry(
        run_id=run.run_id,
        created_at=run.started_at,
        prompt_hashes=dict(run.provenance.prompt_hashes),
        texts=single_texts(run.llm_responses),
        results=summarize_results(run.probe_results),
        vectors=answer_vectors(run.llm_responses),  # semantic_drift
        embedding=run.provenance.embedding,
    )


def extend(new: PoolEntry, older: Sequence[PoolEntry], size: int) -> list[PoolEntry]:
    """The pool a newly promoted run carries: itself, then the older entries, ``size`` at most."""
    if size < 1:
        raise ValueError(f"a pool holds at least one run, got {size}")
    return [new, *[e for e in older if e.run_id != new.run_id]][:size]


def snapshot_entries(snapshot: BaselineSnapshot) -> list[PoolEntry]:
    """A snapshot's pool, its own run first and summarised afresh from its results.

    Re-summarising the snapshot's own run picks up a re-scoring with today's probes; older
    entries keep the counts they were promoted with. A document without a pool is a pool of one.
    """
    own = entry_for(snapshot.run_result)
    return [own, *[e for e in snapshot.pool if e.run_id != own.run_id]]


def entries_of(baseline: Baseline, size: int) -> list[PoolEntry]:
    """The pool of a baseline (its stored entries) or of a list of snapshots (newest first)."""
    snapshots = [baseline] if isinstance(baseline, BaselineSnapshot) else list(baseline)
    merged: dict[str, PoolEntry] = {}
    for snapshot in snapshots:
        for entry in snapshot_entries(snapshot):
            merged.setdefault(entry.run_id, entry)
    return list(merged.values())[: max(1, size)]


def without_prompts(entry: PoolEntry, prompt_ids: Collection[str]) -> PoolEntry:
    """``entry`` with nothing pooled for ``prompt_ids``."""
    if not prompt_ids:
        return entry
    return entry.model_copy(
        update={
            "results": {p: r for p, r in entry.results.items() if p not in prompt_ids},
            "texts": {p: t for p, t in entry.texts.items() if p not in prompt_ids},
        }
    )


def promoted_pool(
    run: CanaryRunResult,
    previous: BaselineSnapshot | None,
    size: int,
    rebaselined: Collection[str] = (),
) -> list[PoolEntry]:
    """The pool a run carries when it becomes the baseline after ``previous``; the older runs
    keep nothing of the ``rebaselined`` prompts (an approved change: today's run is their new
    reference, and the answers from before the change must not judge the next runs)."""
    older = snapshot_entries(previous) if previous is not None else []
    older = [without_prompts(e, rebaselined) for e in older]
    return extend(entry_for(run), older, size)


def promote(
    run: CanaryRunResult,
    previous: BaselineSnapshot | None,
    size: int = DEFAULT_POOL,
    rebaselined: Collection[str] = (),
) -> BaselineSnapshot:
    """The snapshot that makes ``run`` the baseline, carrying the pool of the last ``size`` runs."""
    return BaselineSnapshot.of_run(run).model_copy(
        update={"pool": promoted_pool(run, previous, size, rebaselined)}
    )
