"""Pooled baselines: the compact per-run evidence that ``samples: auto`` decides against.

A promoted run keeps, besides its full results, a :class:`PoolEntry`: per ``(prompt, probe)`` its
pass count, answer count and score sums, and per prompt the digest of its answer text when every
answer was the same text. A new baseline carries the entries of the last K promoted runs (its own
first), so every baseline store (branch, artifact, path) holds the pool inside the snapshot
document with no extra file. An entry counts for a prompt only when that prompt's hash (what the
model was asked) matches today's; a baseline written before pools existed is a pool of one, its
own results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    PoolEntry,
    ProbeResult,
    ScoreSummary,
)
from promptcanary.core.sampling.sequential import Counts

DEFAULT_POOL = 20
"""Promoted runs pooled by default (``baseline-pool``)."""
MAX_POOL = 100
"""The largest ``baseline-pool``: every pooled run is stored inside each baseline document."""


def counts_of(summary: ScoreSummary) -> Counts:
    return Counts(summary.passes, summary.n)


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


def entry_for(run: CanaryRunResult) -> PoolEntry:
    """The compact record of a run, as it joins the pool when promoted."""
    return PoolEntry(
        run_id=run.run_id,
        created_at=run.started_at,
        prompt_hashes=dict(run.provenance.prompt_hashes),
        texts=single_texts(run.llm_responses),
        results=summarize_results(run.probe_results),
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


def entries_of(
    baseline: BaselineSnapshot | Sequence[BaselineSnapshot], size: int
) -> list[PoolEntry]:
    """The pool of a baseline (its stored entries) or of a list of snapshots (newest first)."""
    snapshots = [baseline] if isinstance(baseline, BaselineSnapshot) else list(baseline)
    merged: dict[str, PoolEntry] = {}
    for snapshot in snapshots:
        for entry in snapshot_entries(snapshot):
            merged.setdefault(entry.run_id, entry)
    return list(merged.values())[: max(1, size)]


def promoted_pool(
    run: CanaryRunResult, previous: BaselineSnapshot | None, size: int
) -> list[PoolEntry]:
    """The pool a run carries when it becomes the baseline after ``previous``."""
    older = snapshot_entries(previous) if previous is not None else []
    return extend(entry_for(run), older, size)


def promote(
    run: CanaryRunResult, previous: BaselineSnapshot | None, size: int = DEFAULT_POOL
) -> BaselineSnapshot:
    """The snapshot that makes ``run`` the baseline, carrying the pool of the last ``size`` runs."""
    return BaselineSnapshot.of_run(run).model_copy(
        update={"pool": promoted_pool(run, previous, size)}
    )


@dataclass(frozen=True)
class PooledPrompt:
    """What the pool knows about one prompt: per probe key its summary, and its one text."""

    runs: int
    results: dict[str, ScoreSummary]
    text: str | None
    """The digest every pooled answer had, when they all had one; else ``None``."""


def pool_prompt(
    entries: Sequence[PoolEntry], prompt_id: str, prompt_hash: str | None
) -> PooledPrompt | None:
    """The pooled evidence for one prompt from the entries whose prompt hash matches today's.

    An entry without a hash for the prompt (written before hashes existed), or a run without
    one today, cannot tell an edit apart and counts. ``None`` when no entry has the prompt.
    """

    def matches(entry: PoolEntry) -> bool:
        theirs = entry.prompt_hashes.get(prompt_id)
        return theirs is None or prompt_hash is None or theirs == prompt_hash

    usable = [e for e in entries if prompt_id in e.results and matches(e)]
    if not usable:
        return None
    sums: dict[str, list[float]] = {}  # plain sums: building models per addition is slow
    for e in usable:
        for key, summary in e.results[prompt_id].items():
            acc = sums.setdefault(key, [0, 0, 0.0, 0.0])
            acc[0] += summary.n
            acc[1] += summary.passes
            acc[2] += summary.score_sum
            acc[3] += summary.score_sq_sum
    results = {
        key: ScoreSummary(n=int(n), passes=int(x), score_sum=s1, score_sq_sum=s2)
        for key, (n, x, s1, s2) in sums.items()
    }
    texts = {e.texts.get(prompt_id) for e in usable}
    text = texts.pop() if len(texts) == 1 else None
    return PooledPrompt(runs=len(usable), results=results, text=text)


def pooled_prompts(
    entries: Sequence[PoolEntry], prompt_hashes: dict[str, str], prompt_ids: Iterable[str]
) -> dict[str, PooledPrompt | None]:
    """:func:`pool_prompt` for every prompt of today's run."""
    return {pid: pool_prompt(entries, pid, prompt_hashes.get(pid)) for pid in prompt_ids}
