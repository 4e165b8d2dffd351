"""``samples: auto`` against a pooled baseline: the pool read per prompt, and the stage plan.

Pure bookkeeping between the runner (which asks the model) and
:mod:`promptcanary.core.sampling.sequential` (which decides one look). :func:`pooled_baseline`
reads the stored pool (:mod:`promptcanary.core.sampling.pool`) once for today's prompts. The runner
asks for :meth:`Sequencer.first_targets`, runs them, and keeps calling :meth:`Sequencer.look` with
everything scored so far until it returns no target; then :meth:`Sequencer.finish` gives the final
decision per ``(prompt, probe)``. :func:`decide_run` replays those stages from a recorded run, for
``compare()``, and :func:`comparison_fields` says how a decision reads in a report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields

from promptcanary.core import stats
from promptcanary.core.models import (
    AdaptiveSampling,
    CanaryRunResult,
    EmbeddingInfo,
    LLMResponse,
    PoolEntry,
    ProbeResult,
    ScoreSummary,
)
from promptcanary.core.sampling.meaning import SEMANTIC_KEY, MeaningComparisons, meaning_for
from promptcanary.core.sampling.pool import Baseline, answer_digest, entries_of
from promptcanary.core.sampling.power import answers_to_detect, build_size
from promptcanary.core.sampling.sequential import (
    DETERMINISTIC_EVIDENCE,
    Counts,
    Decision,
    Look,
    Policy,
    Verdict,
    answers_to_show,
    finish,
    step,
)
from promptcanary.core.sampling.spread import anchor_runs
from promptcanary.core.sampling.spread_fit import SpreadReading, read_spread

Key = tuple[str, str]


# ── the pool, read for today's prompts ──


@dataclass(frozen=True)
class PooledPrompt:
    """What the pool knows about one prompt: per probe key its summary, and its one text."""

    runs: int
    results: dict[str, ScoreSummary]
    text: str | None
    """The digest every pooled answer had, when they all had one; else ``None``."""
    by_run: dict[str, tuple[Counts, ...]] = field(default_factory=dict)
    """probe key → its counts in each pooled run, newest first (empty: one run of the sums)."""

    @property
    def answers(self) -> int:
        """Pooled answers of the prompt (its best-scored probe's count)."""
        return max((summary.n for summary in self.results.values()), default=0)

    @property
    def deterministic(self) -> str | None:
        """The one text, when at least ``DETERMINISTIC_EVIDENCE`` pooled answers had it: only
        then does the changed-answer rule trust that the model repeats itself."""
        return self.text if self.answers >= DETERMINISTIC_EVIDENCE else None


def pool_prompt(
    entries: Sequence[PoolEntry], prompt_id: str, prompt_hash: str | None
) -> PooledPrompt | None:
    """The pooled evidence for one prompt from the entries whose prompt hash matches today's.

    An entry counts for a prompt only when that prompt's hash (what the model was asked) matches
    today's. An entry without a hash for the prompt (written before hashes existed), or a run
    without one today, cannot tell an edit apart and counts. ``None`` when no entry has the prompt.
    """

    def matches(entry: PoolEntry) -> bool:
        theirs = entry.prompt_hashes.get(prompt_id)
        return theirs is None or prompt_hash is None or theirs == prompt_hash

    usable = [e for e in entries if prompt_id in e.results and matches(e)]
    if not usable:
        return None
    sums: dict[str, list[float]] = {}  # plain sums: building models per addition is slow
    by_run: dict[str, list[Counts]] = {}
    for e in usable:
        for key, summary in e.results[prompt_id].items():
            by_run.setdefault(key, []).append(Counts(summary.passes, summary.n))
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
    runs = {key: tuple(counts) for key, counts in by_run.items()}
    return PooledPrompt(runs=len(usable), results=results, text=text, by_run=runs)


@dataclass(frozen=True)
class PooledBaseline:
    """A baseline's pool read once for today's prompts."""

    runs: int
    """Promoted runs in the pool (a run records it as ``pool_runs``)."""
    prompts: dict[str, PooledPrompt | None]
    """prompt id → what the pool knows about it (``None``: nothing)."""


def pooled_baseline(
    baseline: Baseline | None,
    size: int,
    prompt_hashes: Mapping[str, str],
    prompt_ids: Iterable[str],
) -> PooledBaseline:
    """The pool of ``baseline`` (at most ``size`` runs) per prompt of today's run; no baseline is
    an empty pool."""
    entries = entries_of(baseline, size) if baseline is not None else []
    prompts = {pid: pool_prompt(entries, pid, prompt_hashes.get(pid)) for pid in prompt_ids}
    return PooledBaseline(len(entries), prompts)


def counts_of(summary: ScoreSummary) -> Counts:
    return Counts(summary.passes, summary.n)


# ── the stages ──


class Sequencer:
    """The decisions of one adaptive run, stage after stage.

    A *comparison* (one ``(prompt, probe)`` with pooled answers) is decided from evidence
    accumulated in stages: each look judges it regressed / improved / same, or leaves it
    undecided (:func:`promptcanary.core.sampling.sequential.step`); :meth:`finish` applies e-BH,
    and what is still undecided is *inconclusive*. Another kind of comparison plugs in by the same
    contract: a pure decision per look from the pooled and the current evidence, frozen once
    decided.

    Besides deciding, a run that may become the baseline (``top_up``) *builds* the pool: a prompt
    with nothing pooled, or whose pool cannot yet show a drop of ``margin``, is asked up to
    ``baseline_samples`` answers in all, in growing stages; it stops early once the pool would
    be large enough (a deterministic prompt too: its pool must show a drop to a model that has
    become random; a prompt no probe scores stops after ``DETERMINISTIC_EVIDENCE`` identical
    answers).

    Args:
        pooled: prompt id → what the baseline pool knows about it (``None``: nothing).
        policy: the procedure's knobs.
        meaning: the meaning comparisons (``semantic_drift:``), in the same e-BH family.
        spread: a run-to-run logit variance for every comparison in place of the pool's reading.
    """

    def __init__(
        self,
        pooled: Mapping[str, PooledPrompt | None],
        policy: Policy,
        meaning: MeaningComparisons | None = None,
        spread: float | None = None,
    ) -> None:
        self.pooled = dict(pooled)
        self.policy = policy
        self.meaning = meaning  # semantic_drift: more comparisons in the family
        # The run-to-run spread is the suite's (the provider's): each comparison is widened by
        # the spread the other comparisons' pooled runs show, fixed before today's first look.
        self.spread = pool_spread(self.pooled) if spread is None else SpreadReading(spread)
        self.keys: list[Key] = []
        self.decisions: list[Decision | None] = []
        # Stages planned so far: the runner numbers its stages by it and records the count.
        self.stages = 0
        self.attenuation: dict[str, float] = {}
        self._limits: dict[tuple[str, Counts, float], int] = {}

    def first_targets(self, prompt_ids: Sequence[str]) -> dict[str, int]:
        """Answers per prompt in the first stage: the first building stage where there is no
        pool, else ``min_samples`` (a deterministic pool too: one identical answer cannot rule
        out a drop to a model that repeats the old text half the time)."""
        targets: dict[str, int] = {}
        for pid in prompt_ids:
            pool = self.pooled.get(pid)
            if pool is None:
                # Nothing to compare: one answer (the documented run), or build the pool.
                first = build_size(Counts(0, 0), Counts(0, 0), len(prompt_ids), self.policy)
                targets[pid] = max(1, first) if self.policy.top_up else 1
            else:
                targets[pid] = self.policy.min_samples
        self.stages = 1 if targets else 0  # a leg whose shard holds no prompt asks nothing
        return targets

    def look(
        self,
        results: Iterable[ProbeResult],
        responses: Iterable[LLMResponse],
        embedding: EmbeddingInfo | None = None,
        attenuation: Mapping[str, float] | None = None,
    ) -> dict[str, int]:
        """Judge everything scored so far; the next stage's answer targets (empty: done).

        ``embedding``: today's embedding model (for the meaning comparisons). ``attenuation``:
        probe key → the share of a drop its pass flags show, for scorers that err (an LLM
        judge); such a comparison rules out the shrunk drop and may ask more answers to show it
        (:func:`~promptcanary.core.sampling.sequential.answers_to_show`)."""
        self.attenuation = dict(attenuation or {})
        responses = list(responses)
        # An errored answer stops a prompt's building: a run with errors is not promoted, and
        # an outage must not be multiplied by baseline_samples.
        erring = {r.prompt_id for r in responses if r.errored}
        digest_for = (
            set(self.pooled) if self.policy.top_up  # building reads every prompt's texts
            else {pid for pid, p in self.pooled.items() if p is not None and p.deterministic}
        )  # fmt: skip
        counts, answered, texts = _tally(results, responses, digest_for)
        if not self.keys:
            self.keys = [
                (pid, key)
                for pid, per_probe in counts.items()
                if (p := self.pooled.get(pid)) is not None
                for key in per_probe
                if key in p.results
            ]
            self.decisions = [None] * len(self.keys)
        looks = [self._look(pid, key, counts, texts) for pid, key in self.keys]
        family = len(looks) + (self.meaning.size if self.meaning is not None else 0)
        self.decisions = list(step(self.decisions, looks, self.policy, family))
        targets: dict[str, int] = {}
        for (pid, key), look, decision in zip(self.keys, looks, self.decisions, strict=True):
            n = answered.get(pid, 0)
            limit = self._limit(key, look, family)
            if decision is not None and not decision.decided and n < limit:
                targets[pid] = max(targets.get(pid, 0), self.policy.next_size(n, limit))
        # ── meaning (semantic_drift): an open meaning comparison asks more answers too ──
        if self.meaning is not None:
            bar = family / self.policy.alpha
            for pid in self.meaning.look(responses, embedding, bar, self.policy):
                n = answered.get(pid, 0)
                if n < self.policy.max_samples:
                    targets[pid] = self.policy.next_size(n)
        comparisons = sum(len(per_probe) for per_probe in counts.values())
        for pid in [p for p in answered if p not in erring]:
            build = self._build_target(pid, counts.get(pid, {}), answered[pid], texts, comparisons)
            if build > max(answered[pid], targets.get(pid, 0)):
                targets[pid] = build
        if targets:
            self.stages += 1
        return targets

    def _build_target(
        self, pid: str, today: dict[str, Counts], n: int, texts: dict[str, set[str]], m: int
    ) -> int:
        """Answers today that building the pool of ``pid`` asks for (``n`` or fewer: none)."""
        if not self.policy.top_up:
            return 0
        pool = self.pooled.get(pid)
        if not today:  # no probe scored: nothing to size the pool by, grow it in stages
            if len(texts.get(pid, set())) == 1 and n >= DETERMINISTIC_EVIDENCE:
                return 0  # one text, often enough: nothing varies to pool
            return self.policy.build_size(pool.answers if pool is not None else 0, n)
        # Each probe asks what its pool needs to show a drop of margin (power.build_size);
        # the prompt takes the most any of them asks.
        extra = max(
            build_size(_pooled_counts(pool, key), c, m, self.policy) - c.n
            for key, c in today.items()
        )
        return n + extra if extra > 0 else 0

    def _look(
        self, pid: str, key: str, counts: dict[str, dict[str, Counts]], texts: dict[str, set[str]]
    ) -> Look:
        pooled = self.pooled[pid]
        assert pooled is not None  # keys are built from pooled prompts only
        single, today = pooled.deterministic, texts.get(pid, set())
        current = counts[pid].get(key, Counts(0, 0))
        runs = pooled.by_run.get(key, ())
        oldest = anchor_runs(runs, least=self.policy.baseline_samples)
        return Look(
            counts_of(pooled.results[key]),
            current,
            changed=single is not None and len(today) == 1 and single not in today
            and current.n >= 2,
            spread=self.spread.of((pid, key)),
            baseline_runs=tuple(c.n for c in runs),
            anchor=sum(oldest, Counts(0, 0)) if oldest else None,
            anchor_runs=tuple(c.n for c in oldest),
            attenuation=self.attenuation.get(key, 1.0),
        )  # fmt: skip

    def _limit(self, key: str, look: Look, family: int) -> int:
        """The most answers the comparison may ask: ``max_samples``, or more when its pass
        flags shrink a drop (the pool and the attenuation are fixed during a run: computed once)."""
        if look.attenuation >= 1.0:
            return self.policy.max_samples
        memo = (key, look.baseline, look.attenuation)
        if memo not in self._limits:
            self._limits[memo] = answers_to_show(
                look.baseline, family, self.policy, look.attenuation
            )
        return self._limits[memo]

    def finish(self) -> dict[Key, Decision]:
        """The final decision of every comparison (e-BH over the suite)."""
        decided = [d for d in self.decisions if d is not None]
        if len(decided) != len(self.keys):
            raise RuntimeError("finish() before every comparison was looked at")
        # ── meaning (semantic_drift): one e-BH over both kinds of comparison ──
        meaning = self.meaning.decisions() if self.meaning is not None else []
        final = finish(decided + meaning, self.policy)
        out = dict(zip(self.keys, final[: len(decided)], strict=True))
        if self.meaning is not None:
            keys = [(pid, SEMANTIC_KEY) for pid in self.meaning.ids]
            out.update(zip(keys, final[len(decided) :], strict=True))
        return out


def pool_spread(pooled: Mapping[str, PooledPrompt | None]) -> SpreadReading:
    """The run-to-run spread (logit variance) read from the pooled comparisons that can show it,
    keyed ``(prompt id, probe key)``: pass/fail ones (a continuous score's pass flag barely moves
    between runs, so it would dilute the fit; all-pass ones carry no information anyway)."""
    return read_spread(
        {
            (pid, key): runs
            for pid, pool in pooled.items()
            if pool is not None
            for key, runs in pool.by_run.items()
            if key not in pool.results or _pass_fail(pool.results[key])
        }
    )


def _pass_fail(summary: ScoreSummary) -> bool:
    """Every pooled score was 0 or 1 (on [0, 1], ``sum s**2 == sum s`` only then)."""
    return (
        abs(summary.score_sum - summary.passes) < 1e-6
        and abs(summary.score_sq_sum - summary.score_sum) < 1e-6
    )


def _pooled_counts(pool: PooledPrompt | None, key: str) -> Counts:
    summary = pool.results.get(key) if pool is not None else None
    return counts_of(summary) if summary is not None else Counts(0, 0)


def replay(
    pooled: Mapping[str, PooledPrompt | None],
    policy: Policy,
    prompt_ids: Sequence[str],
    results: Sequence[ProbeResult],
    responses: Sequence[LLMResponse],
    meaning: MeaningComparisons | None = None,
    embedding: EmbeddingInfo | None = None,
    attenuation: Mapping[str, float] | None = None,
) -> tuple[dict[Key, Decision], int]:
    """The decisions an adaptive run reached, recomputed from its recorded answers.

    The runner's looks saw, per prompt, the answers with a sample index below that stage's
    target; replaying the same targets over the recorded answers reaches the same decisions, so a
    report can be rebuilt from a saved run alone. Returns the decisions and the stage count.
    """
    seq = Sequencer(pooled, policy, meaning)
    targets = seq.first_targets(prompt_ids)
    asked = dict(targets)
    while True:
        seen_results = [r for r in results if r.sample < asked.get(r.prompt_id, 0)]
        seen_responses = [r for r in responses if r.sample < asked.get(r.prompt_id, 0)]
        targets = seq.look(seen_results, seen_responses, embedding, attenuation)
        if not targets or all(asked.get(p, 0) >= n for p, n in targets.items()):
            break  # done, or the recording ends before the run did
        asked.update(targets)
    return seq.finish(), seq.stages


def policy_of(info: AdaptiveSampling) -> Policy:
    """The procedure a run recorded in its provenance (the inverse of :func:`record_of`)."""
    return Policy(**{f.name: getattr(info, f.name) for f in fields(Policy)})


def record_of(policy: Policy, **spent: int) -> AdaptiveSampling:
    """What a run sampled by ``policy`` records in its provenance: every knob of the procedure,
    and ``spent`` (``pool_runs``, ``stages``, ``prompts``, ``requests``, ``tokens``)."""
    return AdaptiveSampling(**asdict(policy), **spent)


@dataclass(frozen=True)
class RunDecisions:
    """What ``compare()`` needs of an adaptive run: its decisions and the pool they were reached
    against, each computed once."""

    decisions: dict[Key, Decision]
    """The final decision per ``(prompt, probe)``; a comparison without one was not decided."""
    pooled: PooledBaseline
    stages: int
    """The stages the replay took (as many as the run took, when its recording is complete)."""
    policy: Policy
    """The procedure the run sampled by."""
    meaning: MeaningComparisons | None = None
    """The meaning comparisons (``semantic_drift:``) and their outcomes, for reports."""


def decide_run(baseline: Baseline, size: int, run: CanaryRunResult) -> RunDecisions | None:
    """An adaptive run's decisions against the pool of ``baseline`` (at most ``size`` runs).

    ``None``: not an adaptive run.
    """
    info = run.provenance.adaptive
    if info is None:
        return None
    prompt_ids = run.prompt_ids
    hashes = run.provenance.prompt_hashes
    pooled = pooled_baseline(baseline, size, hashes, prompt_ids)
    policy = policy_of(info)
    today = run.provenance.embedding
    meaning = (
        meaning_for(baseline, size, today.prompts, hashes, today.model_id, today.min_shift)
        if today is not None
        else None
    )
    judge = run.provenance.judge
    decisions, stages = replay(
        pooled.prompts,
        policy,
        prompt_ids,
        run.probe_results,
        run.llm_responses,
        meaning,
        today,
        judge.attenuation if judge is not None else None,
    )
    return RunDecisions(decisions, pooled, stages, policy, meaning)


def settle_hint(decision: Decision, comparisons: int, policy: Policy) -> str:
    """What would settle an inconclusive comparison: a bigger baseline, or more answers today."""
    more = answers_to_detect(decision.baseline, comparisons, policy)
    if more is None:
        return f"baseline too small to detect a drop of {policy.margin:g}"
    if more:
        return (
            f"baseline too small to detect a drop of {policy.margin:g}: {more} more answers "
            "needed (promoted runs add them; baseline-samples sets how many a push asks)"
        )
    return (
        f"neither a regression nor a drop below {policy.margin:g} shown in "
        f"{decision.current.n} answers (a moderate change; max-samples allows more)"
    )


VERDICT_NAMES = {
    Verdict.SAME: "same",
    Verdict.REGRESSED: "regressed",
    Verdict.IMPROVED: "improved",
    Verdict.UNDECIDED: "inconclusive",
}
"""How a final decision reads in reports: still undecided at the end is *inconclusive*."""


def comparison_fields(decision: Decision, confidence: float = 0.95) -> dict[str, object]:
    """The :class:`ProbeComparison` fields that a final decision sets (counts, evidence, verdict).

    Pass rates and sample counts are those the decision was frozen at; the interval is
    Newcombe's for (current − baseline) pass rate, a description of the data rather than an
    anytime-valid interval. ``p_value`` is ``1 / e`` in the direction the pass rate moved.
    """
    b, c = decision.baseline, decision.current
    rate_b = b.passes / b.n if b.n else None
    rate_c = c.passes / c.n if c.n else None
    improving = decision.verdict is Verdict.IMPROVED or (
        decision.verdict is not Verdict.REGRESSED and rate_b is not None and rate_c is not None
        and rate_c > rate_b
    )  # fmt: skip
    evidence = decision.e_better if improving else decision.e_worse
    if decision.deterministic:
        evidence_fields: dict[str, object] = {"e_value": None, "p_value": None, "p_adjusted": None}
    else:
        evidence_fields = {
            "e_value": evidence,
            "p_value": min(1.0, 1.0 / evidence) if evidence > 0 else 1.0,
            "p_adjusted": decision.p_adjusted,
        }
    return {
        "verdict": VERDICT_NAMES[decision.verdict],
        "regression": decision.verdict is Verdict.REGRESSED,
        "improvement": decision.verdict is Verdict.IMPROVED,
        "baseline_samples": b.n,
        "current_samples": c.n,
        "baseline_pass_rate": rate_b,
        "current_pass_rate": rate_c,
        "pass_rate_ci": (
            stats.newcombe_interval(c.passes, c.n, b.passes, b.n, confidence)
            if b.n and c.n
            else None
        ),
        **evidence_fields,
    }


def _tally(
    results: Iterable[ProbeResult], responses: Iterable[LLMResponse], digest_for: set[str]
) -> tuple[dict[str, dict[str, Counts]], dict[str, int], dict[str, set[str]]]:
    """Per prompt: pass counts per probe key, answers asked (errored too), and the answer
    digests of the prompts in ``digest_for`` (the changed-answer rule and building read them).
    """
    counts: dict[str, dict[str, Counts]] = {}
    for r in results:
        if r.errored:
            continue
        per_prompt = counts.setdefault(r.prompt_id, {})
        per_prompt[r.probe_key] = per_prompt.get(r.probe_key, Counts(0, 0)) + Counts(
            int(r.passed), 1
        )
    answered: dict[str, int] = {}
    texts: dict[str, set[str]] = {}
    for response in responses:
        answered[response.prompt_id] = answered.get(response.prompt_id, 0) + 1
        if response.prompt_id in digest_for and not response.errored:
            texts.setdefault(response.prompt_id, set()).add(answer_digest(response))
    return counts, answered, texts
