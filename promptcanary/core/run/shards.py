"""Shards: which prompts of a suite one leg of a split run answers.

A suite split ``n`` ways is dealt like cards: the prompt ids are sorted by a SHA-256 of the id,
then prompt ``k`` of that order goes to shard ``k mod n + 1``. Every leg loads the same suite, so
every leg computes the same deal without talking to the others; the shards are disjoint, cover the
suite, and differ in size by at most one prompt. The order does not depend on where a prompt sits
in the file, so reordering prompts moves none of them between shards.

A shard is only a subset of prompts: how many samples each prompt gets (and any later rounds of
samples) is the runner's business and works the same on a subset.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryPrompt,
    CanaryRunResult,
    EmbeddingInfo,
    JudgeCheckResult,
    JudgeInfo,
    LLMResponse,
    ProbeResult,
    Provenance,
    ServiceUsage,
)

_SHARD_RE = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


class ShardError(ValueError):
    """A shard that cannot be: not ``i/n``, or ``i`` outside ``1..n``."""


def _rank(prompt_id: str) -> tuple[str, str]:
    # SHA-256, not hash(): the deal must be identical in every process and on every machine.
    return hashlib.sha256(prompt_id.encode()).hexdigest(), prompt_id


def deal(prompt_ids: Iterable[str], total: int) -> dict[str, int]:
    """prompt id → the 1-based shard (of ``total``) that answers it."""
    if total < 1:
        raise ShardError(f"a suite is split into at least 1 shard, not {total}")
    ranked = sorted(set(prompt_ids), key=_rank)
    return {prompt_id: k % total + 1 for k, prompt_id in enumerate(ranked)}


@dataclass(frozen=True, order=True)
class Shard:
    """Shard ``index`` of ``total`` (1-based), written ``index/total``."""

    index: int
    total: int

    def __post_init__(self) -> None:
        if self.total < 1 or not 1 <= self.index <= self.total:
            raise ShardError(
                f"shard {self.index}/{self.total} does not exist: write i/n with 1 <= i <= n "
                "(e.g. 1/4 … 4/4)"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` → ``Shard(2, 4)``; anything else is a :class:`ShardError` saying why."""
        match = _SHARD_RE.fullmatch(text)
        if match is None:
            raise ShardError(f"{text!r} is not a shard: write i/n, e.g. 2/4 (1-based)")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    def select(self, prompts: Sequence[CanaryPrompt]) -> list[CanaryPrompt]:
        """The prompts this shard answers, in suite order."""
        owner = deal((p.id for p in prompts), self.total)
        return [p for p in prompts if owner[p.id] == self.index]


# ── merging: the legs' runs of one model into the run one job would have made ──
# Pure: runs in, one run out. The legs' raw results are merged, never their drift reports: the
# comparison, its multiple-testing correction and the gate are computed once, over the whole
# suite, by the same evaluation a single job uses. Legs that cannot make one run are refused with
# a MergeError naming them.


class MergeError(ValueError):
    """Runs that are not the shards of one run; the message names the runs and the difference."""


@dataclass(frozen=True)
class RunPart:
    """One leg's run of a suite on a model, and where it came from (named in errors)."""

    run: CanaryRunResult
    source: str


_SAME: tuple[tuple[str, Callable[[CanaryRunResult], Hashable]], ...] = (
    ("suites", lambda r: r.suite_name),
    ("models", lambda r: r.provider.model_id),
    ("suite versions (suite hash)", lambda r: r.provenance.suite_hash),
    ("probe configurations (probe hash)", lambda r: r.provenance.probe_config_hash),
    ("prompt lists (prompt hashes)", lambda r: tuple(r.provenance.prompt_hashes.items())),
    ("model settings", lambda r: r.provider.model_dump_json()),
    # samples: auto legs stop at different counts; what must agree is the procedure.
    ("sample counts", lambda r: None if r.provenance.adaptive else r.provenance.samples),
    ("adaptive sampling settings", lambda r: _procedure(r.provenance.adaptive)),
    ("engine versions", lambda r: r.provenance.engine_version),
    ("commits", lambda r: r.provenance.git_sha),
    ("refs", lambda r: r.provenance.git_ref),
)
"""What every leg of one run shares, each with how to read it from a run."""


def _procedure(record: AdaptiveSampling | None) -> Hashable:
    """The knobs of a ``samples: auto`` run (not what it spent), or None for fixed samples."""
    if record is None:
        return None
    spent = {"stages", "prompts", "requests", "tokens", "fixed_requests", "fixed_tokens"}
    return tuple(sorted((k, v) for k, v in record.model_dump().items() if k not in spent))


def _merged_judge(infos: Sequence[JudgeInfo]) -> JudgeInfo:
    """The legs' judges as one run's: every model and fingerprint that answered, every leg's
    canary votes (each leg asks them all), the requests the caps refused summed, and per probe
    the smallest attenuation (the noisiest leg's canaries bound what a drop may hide)."""
    checks: dict[int, JudgeCheckResult] = {}
    for check in (c for info in infos for c in info.checks):
        seen = checks.get(check.index)
        checks[check.index] = check if seen is None else seen.model_copy(
            update={
                "verdicts": [*seen.verdicts, *check.verdicts],
                "errors": sorted({*seen.errors, *check.errors}),
            }
        )  # fmt: skip
    attenuation: dict[str, float] = {}
    for info in infos:
        for key, value in info.attenuation.items():
            attenuation[key] = min(value, attenuation.get(key, value))
    return infos[0].model_copy(
        update={
            "models": sorted({m for info in infos for m in info.models}),
            "fingerprints": sorted({f for info in infos for f in info.fingerprints}),
            "checks": [checks[i] for i in sorted(checks)],
            "capped": sum(info.capped for info in infos),
            "attenuation": attenuation,
        }
    )


def _merged_embedding(infos: Sequence[EmbeddingInfo]) -> EmbeddingInfo:
    """The legs' embedding records as one: the first leg's model and check, every leg's errors."""
    errors = list(dict.fromkeys(e for info in infos for e in info.errors))
    return infos[0].model_copy(update={"errors": errors})


def merged_services(runs: Sequence[CanaryRunResult]) -> list[ServiceUsage]:
    """What the answer services cost the legs, summed per (service, model) in first-seen order;
    a cost unknown on one leg is unknown for the whole."""
    merged: dict[tuple[str, str], ServiceUsage] = {}
    for usage in (u for run in runs for u in run.services):
        key = (usage.service, usage.model_id)
        seen = merged.get(key)
        if seen is None:
            merged[key] = usage
            continue
        costs = (seen.cost_usd, usage.cost_usd)
        merged[key] = seen.model_copy(
            update={
                "requests": seen.requests + usage.requests,
                "items": seen.items + usage.items,
                "tokens": seen.tokens + usage.tokens,
                "errors": seen.errors + usage.errors,
                "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
            }
        )
    return list(merged.values())


def _merged_provenance(runs: Sequence[CanaryRunResult]) -> Provenance:
    """The first leg's provenance as one job's: no shard; what ``auto`` spent, summed; the
    judge's and the embedding model's records of every leg."""
    first = runs[0].provenance
    update: dict[str, object] = {"shard": None}
    judges = [r.provenance.judge for r in runs if r.provenance.judge is not None]
    if judges:
        update["judge"] = _merged_judge(judges)
    embeddings = [r.provenance.embedding for r in runs if r.provenance.embedding is not None]
    if embeddings:
        update["embedding"] = _merged_embedding(embeddings)
    records = [r.provenance.adaptive for r in runs if r.provenance.adaptive is not None]
    if records:
        update["samples"] = max(r.provenance.samples for r in runs)
        update["adaptive"] = records[0].model_copy(
            update={
                "stages": max(r.stages for r in records),
                "prompts": sum(r.prompts for r in records),
                "requests": sum(r.requests for r in records),
                "tokens": sum(r.tokens for r in records),
            }
        )
    return first.model_copy(update=update)


def _describe(value: Hashable) -> str:
    if isinstance(value, tuple):
        return f"{len(value)} prompts, hash {hashlib.sha256(repr(value).encode()).hexdigest()[:8]}"
    return repr(value)


def _check_same(parts: Sequence[RunPart]) -> None:
    for what, read in _SAME:
        groups: dict[Hashable, list[str]] = defaultdict(list)
        for part in parts:
            groups[read(part.run)].append(part.source)
        if len(groups) > 1:
            listed = "; ".join(
                f"{_describe(value)} in {', '.join(sources)}" for value, sources in groups.items()
            )
            raise MergeError(
                f"cannot merge legs of different {what}: {listed}. Merge only the legs of one "
                "workflow run (re-run the failed legs, or all of them)"
            )


def _shard_of(part: RunPart) -> Shard | None:
    text = part.run.provenance.shard
    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ShardError as exc:
        raise MergeError(f"{part.source}: provenance.shard: {exc}") from None


def check_shards(parts: Sequence[RunPart]) -> list[RunPart]:
    """The parts in shard order, once each shard of one split is there exactly once."""
    shards = [(_shard_of(part), part) for part in parts]
    whole = [part.source for shard, part in shards if shard is None]
    if whole and len(parts) > 1:
        others = [part.source for shard, part in shards if shard is not None]
        raise MergeError(
            f"{', '.join(whole)} ran the whole suite (no shard); it cannot be merged with "
            f"{', '.join(others) or 'another whole run'}"
        )
    if whole:
        return list(parts)
    found: dict[Shard, list[str]] = defaultdict(list)
    for shard, part in shards:
        found[shard or Shard(1, 1)].append(part.source)
    _check_split(found)
    return [part for _, part in sorted(shards, key=lambda sp: sp[0] or Shard(1, 1))]


def _check_split(found: dict[Shard, list[str]]) -> None:
    """One split (one ``n``), each of its shards exactly once."""
    listed = sorted(found.items())
    totals = {shard.total for shard in found}
    if len(totals) > 1:
        shown = "; ".join(f"{s} in {', '.join(sources)}" for s, sources in listed)
        raise MergeError(f"cannot merge shards of different splits: {shown}")
    twice = [f"{s} in {' and '.join(sources)}" for s, sources in listed if len(sources) > 1]
    if twice:
        raise MergeError(f"shard(s) there twice: {'; '.join(twice)}; keep one leg of each shard")
    total = totals.pop()
    missing = [str(s) for s in (Shard(i, total) for i in range(1, total + 1)) if s not in found]
    if missing:
        present = ", ".join(f"{s} ({sources[0]})" for s, sources in listed)
        raise MergeError(
            f"shard(s) {', '.join(missing)} missing (present: {present}); every leg must "
            "finish and upload its report before the merge"
        )


def _check_cover(parts: Sequence[RunPart], order: dict[str, int]) -> None:
    """Every prompt of the suite answered by exactly one leg, and no prompt from elsewhere."""
    answered: dict[str, str] = {}
    for part in parts:
        for prompt_id in part.run.prompt_ids:
            if prompt_id not in order:
                raise MergeError(
                    f"{part.source}: answers prompt {prompt_id!r}, which its suite does not have"
                )
            if prompt_id in answered:
                raise MergeError(
                    f"prompt {prompt_id!r} is answered by both {answered[prompt_id]} and "
                    f"{part.source}: the legs did not split the suite the same way"
                )
            answered[prompt_id] = part.source
    unanswered = [p for p in order if p not in answered]
    if unanswered:
        raise MergeError(
            f"no leg answered prompt(s) {', '.join(map(repr, unanswered[:5]))}"
            f"{' …' if len(unanswered) > 5 else ''}: the legs do not cover the suite"
        )


def _merged_id(parts: Sequence[RunPart]) -> str:
    """Deterministic: merging the same legs again gives the same run id (and report id)."""
    digest = hashlib.sha256("\0".join(sorted(p.run.run_id for p in parts)).encode())
    return str(uuid.UUID(digest.hexdigest()[:32]))


def merge_runs(parts: Sequence[RunPart]) -> CanaryRunResult:
    """The shards' runs of one suite on one model as one run, in suite order.

    One part that ran the whole suite is returned unchanged (legs may split by model or suite
    instead of by prompt).

    Raises:
        MergeError: no parts, a shard missing or twice, or legs that differ (see the module).
    """
    if not parts:
        raise MergeError("nothing to merge: no run was given")
    _check_same(parts)
    ordered = check_shards(parts)
    if len(ordered) == 1 and ordered[0].run.provenance.shard is None:
        return ordered[0].run
    first = ordered[0].run
    if not first.provenance.prompt_hashes:
        raise MergeError(
            f"{ordered[0].source}: the run lists no prompt hashes (made by an older engine): "
            "re-run the legs with this version"
        )
    order = {prompt_id: k for k, prompt_id in enumerate(first.provenance.prompt_hashes)}
    _check_cover(ordered, order)
    responses: list[LLMResponse] = [r for p in ordered for r in p.run.llm_responses]
    results: list[ProbeResult] = [r for p in ordered for r in p.run.probe_results]
    finished = [p.run.finished_at for p in ordered]
    return CanaryRunResult(
        run_id=_merged_id(ordered),
        suite_name=first.suite_name,
        provider=first.provider,
        # Stable sorts: prompts in suite order; within one, the order its leg produced.
        llm_responses=sorted(responses, key=lambda r: order[r.prompt_id]),
        probe_results=sorted(results, key=lambda r: order.get(r.prompt_id, len(order))),
        started_at=min(p.run.started_at for p in ordered),
        finished_at=None if None in finished else max(f for f in finished if f is not None),
        provenance=_merged_provenance([p.run for p in ordered]),
        services=merged_services([p.run for p in ordered]),
        # Each leg paced on its own runner: the one job's figures are the legs' sums.
        rate_limited=sum(p.run.rate_limited for p in ordered),
        paced_seconds=round(sum(p.run.paced_seconds for p in ordered), 3),
    )
