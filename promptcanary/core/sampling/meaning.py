"""The meaning comparisons of one run (probe key ``semantic``): the pool's answer vectors read for
today's prompts, and each look's decision by :mod:`promptcanary.core.sampling.semantic`.

Pure bookkeeping, like :mod:`promptcanary.core.sampling.sequencer`, which hands every look to
:meth:`MeaningComparisons.look` and puts the decisions in the suite's e-BH with the pass-rate
comparisons. Vectors are never mixed across embedding models: pooled vectors count only when
their run recorded today's embedding model, dimension and (within
:data:`~promptcanary.core.vectors.CHECK_MIN_COSINE`) vector of the check text. A comparison that
cannot be made — no compatible vectors in the pool, too few, no vectors for today's answers — is
*inconclusive* with its reason, stays in the family with an e-value of 0, and asks no more answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from promptcanary.core.models import EmbeddingInfo, LLMResponse, PoolEntry
from promptcanary.core.sampling import semantic
from promptcanary.core.sampling.pool import Baseline, entries_of
from promptcanary.core.sampling.sequential import Counts, Decision, Policy, Verdict
from promptcanary.core.vectors import CHECK_MIN_COSINE, Vector, VectorError, decode, dot

SEMANTIC_KEY = "semantic"
"""The probe key of a meaning comparison in drift reports, gates and approvals."""
GATE_Z = 1.645
"""*Changed* needs the shift's lower bound (estimate − this many standard errors) to reach
``min_shift``."""
SAME_MARGIN = 2.0
"""*Same* rules out a shift of this many ``min_shift`` (0.1 at the defaults, about half of the
answers moving to another meaning): like the pass-rate *same*, which rules out a large drop,
sampling stops once a large change is ruled out and does not chase a small one (a shift between
``min_shift`` and the margin is still *changed* when the answers asked show it)."""


@dataclass(frozen=True)
class Outcome:
    """Where one meaning comparison stands, for reports: the shift and e-value at its decision,
    or why it was not compared."""

    shift: semantic.Shift | None = None
    e_value: float = 1.0
    reason: str | None = None


def mismatch(theirs: EmbeddingInfo | None, today: EmbeddingInfo) -> str | None:
    """Why vectors recorded under ``theirs`` cannot be compared with today's; ``None``: they can."""
    if theirs is None or theirs.model_id != today.model_id:
        return (
            f"the baseline's answer vectors come from embedding model "
            f"{theirs.model_id if theirs else 'unknown'!r}, today's from {today.model_id!r}: "
            "vectors of two models are never mixed; promote a run to compare again"
        )
    if theirs.dimension and today.dimension and theirs.dimension != today.dimension:
        return (
            f"embedding model {today.model_id!r} returns vectors of dimension {today.dimension}, "
            f"the baseline's had {theirs.dimension}: not compared; promote a run to compare again"
        )
    if theirs.check and today.check:
        similarity = dot(decode(theirs.check), decode(today.check))
        if similarity < CHECK_MIN_COSINE:
            return (
                f"embedding model {today.model_id!r} now returns another vector for a fixed "
                f"text (cosine {similarity:.3f} with the baseline's): the model changed behind "
                "its name, so old and new vectors are not compared; promote a run to compare again"
            )
    return None


class MeaningComparisons:
    """The meaning comparisons of one run against a pool (see module doc).

    Args:
        entries: the pool, newest run first.
        prompt_ids: the prompts ``semantic_drift:`` compares (today's run).
        prompt_hashes: today's prompt hashes (an edited prompt's older vectors do not count).
        model_id: today's embedding model.
        min_shift: the effect-size floor.
    """

    def __init__(
        self,
        entries: Sequence[PoolEntry],
        prompt_ids: Sequence[str],
        prompt_hashes: dict[str, str],
        model_id: str,
        min_shift: float,
    ) -> None:
        self.min_shift = min_shift
        self.margin = SAME_MARGIN * min_shift
        self.model_id = model_id
        self._pooled: dict[str, list[tuple[str, EmbeddingInfo | None]]] = {}
        for pid in prompt_ids:
            digest = prompt_hashes.get(pid)
            self._pooled[pid] = [
                (vector, entry.embedding)
                for entry in entries
                if digest is None or entry.prompt_hashes.get(pid) in (None, digest)
                for vector in entry.vectors.get(pid, [])
            ]
        self.ids = [pid for pid, vectors in self._pooled.items() if vectors]
        """The prompts compared: those whose pool holds vectors (the others have no pool yet)."""
        self._seed = entries[0].run_id if entries else ""
        self._decisions: dict[str, Decision] = {}
        self.outcomes: dict[str, Outcome] = {}
        self._decoded: dict[str, Vector] = {}
        self._mismatches: dict[tuple[object, object], str | None] = {}
        self._pools: dict[tuple[str, object], tuple[list[Vector], str | None]] = {}
        self._trackers: dict[
            str, tuple[list[Vector], semantic.ShiftTracker, semantic.WealthTracker]
        ] = {}

    @property
    def size(self) -> int:
        """Comparisons this run adds to the suite's e-BH family."""
        return len(self.ids)

    def look(
        self,
        responses: Iterable[LLMResponse],
        today: EmbeddingInfo | None,
        bar: float,
        policy: Policy,
    ) -> set[str]:
        """Judge every open comparison on today's answers so far; the prompts still open."""
        current: dict[str, list[LLMResponse]] = {}
        for response in responses:
            if response.prompt_id in self._pooled and not response.errored:
                current.setdefault(response.prompt_id, []).append(response)
        still_open: set[str] = set()
        for pid in self.ids:
            before = self._decisions.get(pid)
            if before is not None and (before.decided or self.outcomes[pid].reason):
                continue
            answers = sorted(current.get(pid, []), key=lambda r: r.sample)
            decision = self._decide(pid, answers, today, bar, policy)
            self._decisions[pid] = decision
            if not decision.decided and self.outcomes[pid].reason is None:
                still_open.add(pid)
        return still_open

    def _decide(
        self,
        pid: str,
        answers: list[LLMResponse],
        today: EmbeddingInfo | None,
        bar: float,
        policy: Policy,
    ) -> Decision:
        pool, reason = self._pool_for(pid, today)
        vectors = [v for v in (self._vector(r.embedding) for r in answers if r.embedding) if v]
        lengths = {len(v) for v in [*pool, *vectors]}
        if reason is None and len(lengths) > 1:
            reason = (
                f"answer vectors of different dimensions ({', '.join(map(str, sorted(lengths)))}): "
                "not compared; promote a run to compare again"
            )
        if reason is None and len(answers) >= policy.min_samples and len(vectors) < 2:
            cause = today.errors[0] if today is not None and today.errors else "none was served"
            reason = f"today's answers have no vectors ({cause})"
        if reason is not None:
            self.outcomes[pid] = Outcome(reason=reason)
            return Decision(
                Verdict.UNDECIDED, Counts(0, len(pool)), Counts(0, len(vectors)), 0.0, 0.0
            )
        if len(vectors) < 2:
            self.outcomes[pid] = Outcome()
            return Decision(
                Verdict.UNDECIDED, Counts(0, len(pool)), Counts(0, len(vectors)), 1.0, 0.0
            )
        size, wealth = self._measure(pid, pool, vectors)
        floor = size.estimate - GATE_Z * size.se >= self.min_shift
        evidence = wealth.e_value if floor else 0.0
        if evidence >= bar:
            verdict = Verdict.REGRESSED
        elif len(answers) >= policy.min_samples and size.rules_out(self.margin):
            verdict = Verdict.SAME
        else:
            verdict = Verdict.UNDECIDED
        self.outcomes[pid] = Outcome(shift=size, e_value=evidence)
        return Decision(verdict, Counts(0, len(pool)), Counts(0, len(vectors)), evidence, 0.0)

    def _measure(
        self, pid: str, pool: list[Vector], vectors: list[Vector]
    ) -> tuple[semantic.Shift, semantic.Wealth]:
        """The shift and the wealth of today's vectors, carried over from the last look when
        its vectors are the start of these (they are, answers arriving in sample order)."""
        held = self._trackers.get(pid)
        seen = held[1].current if held is not None else []
        if held is None or held[0] is not pool or seen != vectors[: len(seen)]:
            seed = f"{pid}\x00{self._seed}"
            held = (pool, semantic.ShiftTracker(pool), semantic.WealthTracker(pool, seed))
            self._trackers[pid] = held
        _, size, bets = held
        for vector in vectors[len(size.current) :]:
            size.add(vector)
            bets.add(vector)
        return size.shift(), bets.wealth()

    def _pool_for(self, pid: str, today: EmbeddingInfo | None) -> tuple[list[Vector], str | None]:
        """The pooled vectors that count for ``pid`` today, or why none do (once per look's
        embedding model: it changes only when today's check vector first arrives)."""
        key = (pid, None if today is None else (today.model_id, today.dimension, today.check))
        if key not in self._pools:
            self._pools[key] = self._read_pool(pid, today)
        return self._pools[key]

    def _read_pool(self, pid: str, today: EmbeddingInfo | None) -> tuple[list[Vector], str | None]:
        if today is None:
            return [], "the run recorded no embedding model"
        usable: list[Vector] = []
        reasons: list[str] = []
        for encoded, info in self._pooled[pid]:
            problem = self._mismatch(info, today)
            if problem is not None:
                reasons.append(problem)
                continue
            vector = self._vector(encoded)
            if vector is not None:
                usable.append(vector)
        if not usable and reasons:
            return [], reasons[0]
        if len(usable) < semantic.MIN_BASELINE:
            return usable, (
                f"the pool holds {len(usable)} answer vector(s) of this prompt, fewer than "
                f"{semantic.MIN_BASELINE}: promote more runs to compare meaning"
            )
        return usable, None

    def _mismatch(self, theirs: EmbeddingInfo | None, today: EmbeddingInfo) -> str | None:
        """:func:`mismatch`, once per distinct pair of recorded models (one per pooled run)."""
        key = (
            None if theirs is None else (theirs.model_id, theirs.dimension, theirs.check),
            (today.model_id, today.dimension, today.check),
        )
        if key not in self._mismatches:
            self._mismatches[key] = mismatch(theirs, today)
        return self._mismatches[key]

    def _vector(self, encoded: str) -> Vector | None:
        if encoded not in self._decoded:
            try:
                self._decoded[encoded] = decode(encoded)
            except VectorError:
                return None  # a corrupt stored vector is left out, never guessed
        return self._decoded[encoded]

    def decisions(self) -> list[Decision]:
        """Every comparison's decision, in :attr:`ids` order (before any look: undecided)."""
        return [
            self._decisions.get(
                pid, Decision(Verdict.UNDECIDED, Counts(0, 0), Counts(0, 0), 0.0, 0.0)
            )
            for pid in self.ids
        ]


def meaning_for(
    baseline: Baseline | None,
    size: int,
    prompt_ids: Sequence[str],
    prompt_hashes: dict[str, str],
    model_id: str,
    min_shift: float,
) -> MeaningComparisons | None:
    """The meaning comparisons of a run against the pool of ``baseline`` (at most ``size`` runs);
    ``None`` without a baseline."""
    if baseline is None:
        return None
    entries = entries_of(baseline, size)
    return MeaningComparisons(entries, prompt_ids, prompt_hashes, model_id, min_shift)
