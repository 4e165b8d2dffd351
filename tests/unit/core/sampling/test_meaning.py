"""The meaning comparisons of a run: which pooled vectors count, and each look's decision."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

from promptcanary.core.models import EmbeddingInfo, LLMResponse, PoolEntry
from promptcanary.core.sampling.meaning import MeaningComparisons, mismatch
from promptcanary.core.sampling.sequential import Policy, Verdict
from promptcanary.core.vectors import Vector, checked, encode

DIM = 8
POLICY = Policy()
BAR = 200 / POLICY.alpha  # a family of 200 comparisons
CHECK = encode(checked([1.0] * DIM))


def _info(model: str = "fake/embed", dimension: int = DIM, check: str = CHECK) -> EmbeddingInfo:
    return EmbeddingInfo(model_id=model, dimension=dimension, check=check, prompts=["p"])


def _centre(seed: int) -> Vector:
    rng = random.Random(seed)
    return checked([rng.gauss(0, 1) for _ in range(DIM)])


def _draw(rng: random.Random, centre: Vector, noise: float = 0.4) -> Vector:
    return checked([c + noise * rng.gauss(0, 1) / math.sqrt(DIM) for c in centre])


def _pool(
    rng: random.Random, centre: Vector, runs: int = 20, per_run: int = 4, **info: object
) -> list[PoolEntry]:
    return [
        PoolEntry(
            run_id=f"run-{k}",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            prompt_hashes={"p": "h"},
            vectors={"p": [encode(_draw(rng, centre)) for _ in range(per_run)]},
            embedding=_info(**info),  # type: ignore[arg-type]
        )
        for k in range(runs)
    ]


def _answers(vectors: list[Vector]) -> list[LLMResponse]:
    return [
        LLMResponse(prompt_id="p", provider_model_id="m", content=f"a{i}", sample=i,
                    embedding=encode(v))
        for i, v in enumerate(vectors)
    ]  # fmt: skip


def _comparisons(entries: list[PoolEntry], min_shift: float = 0.05) -> MeaningComparisons:
    return MeaningComparisons(entries, ["p"], {"p": "h"}, "fake/embed", min_shift)


def _until_decided(meaning: MeaningComparisons, draw: object, today: EmbeddingInfo) -> int:
    """Looks at 3, 4, 5, 7, … answers until the comparison closes; the answers it took."""
    vectors: list[Vector] = []
    n = POLICY.min_samples
    while True:
        while len(vectors) < n:
            vectors.append(draw())  # type: ignore[operator]
        if not meaning.look(_answers(vectors), today, BAR, POLICY) or n >= POLICY.max_samples:
            return n
        n = POLICY.next_size(n)


def test_no_change_is_same_after_few_answers() -> None:
    rng = random.Random(1)
    centre = _centre(1)
    meaning = _comparisons(_pool(rng, centre))
    taken = _until_decided(meaning, lambda: _draw(rng, centre), _info())
    (decision,) = meaning.decisions()
    assert decision.verdict is Verdict.SAME and taken <= 5
    assert meaning.outcomes["p"].shift is not None
    assert meaning.outcomes["p"].shift.upper(meaning.margin) < meaning.margin == 2 * 0.05


def test_same_rules_out_the_margin_not_min_shift() -> None:
    """A look whose upper bound is between min_shift and the margin stops as *same*: sampling
    does not chase a change smaller than the margin (as for pass rates)."""
    rng = random.Random(11)
    centre = _centre(1)
    meaning = _comparisons(_pool(rng, centre), min_shift=0.01)
    # Eight answers: at three, the error a shift of the margin would have is above the margin.
    meaning.look(_answers([_draw(rng, centre) for _ in range(8)]), _info(), BAR, POLICY)
    shift = meaning.outcomes["p"].shift
    assert shift is not None and 0.01 <= shift.upper(meaning.margin) < meaning.margin
    assert meaning.decisions()[0].verdict is Verdict.SAME


def test_another_meaning_is_changed() -> None:
    rng = random.Random(2)
    meaning = _comparisons(_pool(rng, _centre(1)))
    moved = _centre(2)
    _until_decided(meaning, lambda: _draw(rng, moved), _info())
    (decision,) = meaning.decisions()
    assert decision.verdict is Verdict.REGRESSED
    assert decision.e_worse >= BAR
    outcome = meaning.outcomes["p"]
    assert outcome.shift is not None and outcome.shift.interval()[0] > 0.05


def test_a_shift_below_min_shift_is_never_changed_however_sure_the_test_is() -> None:
    rng = random.Random(3)
    centre = _centre(1)
    meaning = _comparisons(_pool(rng, centre), min_shift=0.9)  # far above the real shift
    _until_decided(meaning, lambda: _draw(rng, _centre(2)), _info())
    (decision,) = meaning.decisions()
    assert decision.verdict is not Verdict.REGRESSED and decision.e_worse == 0.0


def test_vectors_of_another_embedding_model_are_not_compared() -> None:
    rng = random.Random(4)
    meaning = _comparisons(_pool(rng, _centre(1), model="other/embed"))
    assert not meaning.look(
        _answers([_draw(rng, _centre(1)) for _ in range(3)]), _info(), BAR, POLICY
    )
    reason = meaning.outcomes["p"].reason
    assert reason is not None and "'other/embed'" in reason and "'fake/embed'" in reason
    assert meaning.decisions()[0].verdict is Verdict.UNDECIDED  # inconclusive at the end


def test_a_model_that_now_embeds_a_fixed_text_differently_is_not_compared() -> None:
    rng = random.Random(5)
    meaning = _comparisons(_pool(rng, _centre(1)))
    other_check = encode(checked([1.0] + [0.0] * (DIM - 1)))
    meaning.look(
        _answers([_draw(rng, _centre(1)) for _ in range(3)]), _info(check=other_check), BAR, POLICY
    )
    reason = meaning.outcomes["p"].reason
    assert reason is not None and "another vector for a fixed text" in reason


def test_a_changed_dimension_is_not_compared() -> None:
    rng = random.Random(6)
    meaning = _comparisons(_pool(rng, _centre(1)))
    today = [checked([1.0, 0.5, 0.2]) for _ in range(3)]
    meaning.look(_answers(today), _info(dimension=3, check=""), BAR, POLICY)
    reason = meaning.outcomes["p"].reason
    assert reason is not None and "dimension 3" in reason


def test_answers_without_vectors_are_inconclusive_with_the_embedding_error() -> None:
    rng = random.Random(7)
    meaning = _comparisons(_pool(rng, _centre(1)))
    bare = [
        LLMResponse(prompt_id="p", provider_model_id="m", content="x", sample=i) for i in range(3)
    ]
    today = _info().model_copy(
        update={"errors": ["embedding: HTTP 429 slow down (after 3 retries)"]}
    )
    assert not meaning.look(bare, today, BAR, POLICY)
    reason = meaning.outcomes["p"].reason
    assert reason is not None and "HTTP 429" in reason


def test_a_pool_too_small_is_not_compared() -> None:
    rng = random.Random(8)
    meaning = _comparisons(_pool(rng, _centre(1), runs=1, per_run=2))
    meaning.look(_answers([_draw(rng, _centre(1)) for _ in range(3)]), _info(), BAR, POLICY)
    reason = meaning.outcomes["p"].reason
    assert reason is not None and "promote more runs" in reason


def test_a_prompt_without_pooled_vectors_is_not_in_the_family() -> None:
    entries = [
        PoolEntry(run_id="r", created_at=datetime(2026, 1, 1, tzinfo=UTC), prompt_hashes={"p": "h"})
    ]
    assert _comparisons(entries).size == 0


def test_mismatch_accepts_the_same_model() -> None:
    assert mismatch(_info(), _info()) is None


def test_a_look_carried_over_from_earlier_looks_equals_a_fresh_one() -> None:
    """Each look extends the last look's sums and bets; the outcome is what one look at all the
    answers gives, and answers that are not the last look's plus new ones start again."""
    rng = random.Random(12)
    entries = _pool(rng, _centre(1))
    today = [_draw(rng, _centre(2)) for _ in range(7)]
    carried = _comparisons(entries)
    for n in (3, 4, 5, 7):
        carried.look(_answers(today[:n]), _info(), BAR, POLICY)
    fresh = _comparisons(entries)
    fresh.look(_answers(today), _info(), BAR, POLICY)
    assert carried.outcomes["p"] == fresh.outcomes["p"]
    other = [_draw(rng, _centre(1)) for _ in range(7)]
    restarted = _comparisons(entries)
    restarted.look(_answers(today[:3]), _info(), BAR * 1e9, POLICY)
    restarted.look(_answers(other), _info(), BAR * 1e9, POLICY)
    alone = _comparisons(entries)
    alone.look(_answers(other), _info(), BAR * 1e9, POLICY)
    assert restarted.outcomes["p"] == alone.outcomes["p"]
