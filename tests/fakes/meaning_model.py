"""Answers with known meanings, and a deterministic embedding model that sees them.

:class:`ClusterProvider` (our ``BaseLLMProvider``) answers each prompt with
``"<prompt> says <meaning> in wording <n>"``: the meaning drawn from the prompt's mixture (one
meaning, or two at 70/30), the wording a fresh random number (so every answer is a new text).
:func:`cluster_vector` is the embedding model: a text's vector is its meaning's centre (shared by
all answers of the prompt's topic, as real embeddings share a common direction) plus
wording noise, so answers that say the same thing have cosine ≈ 0.85, two meanings of one prompt
≈ 0.5. A wording marked ``P`` (a paraphrase shift) adds a small offset common to all such wordings
of that meaning: the same things said in a systematically different way.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from promptcanary.core.models import CanaryPrompt, LLMResponse, ProviderConfig
from tests.fakes.in_loop import InLoopProvider

DIMENSION = 32
WORDING_NOISE = 0.42
"""Wording noise: cosine ≈ 1 / (1 + 0.42²) ≈ 0.85 between answers of one meaning."""
_TEXT = re.compile(r"^(?P<prompt>\S+) says (?P<meaning>\S+) in wording (?P<para>P?)(?P<n>\d+)")


@functools.lru_cache(maxsize=4096)
def _fixed(seed: str) -> tuple[float, ...]:
    """A direction that many answers share (meanings, topics), computed once."""
    return tuple(_unit(seed))


def _unit(seed: str) -> Sequence[float]:
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    return [rng.gauss(0.0, 1.0) / math.sqrt(DIMENSION) for _ in range(DIMENSION)]


def cluster_vector(text: str, paraphrase: float = 0.0) -> list[float]:
    """The vector of an answer text (see module doc); any other text gets a hashed vector."""
    match = _TEXT.match(text)
    if match is None:
        return list(_unit(f"text:{text}"))
    prompt, meaning = match["prompt"], match["meaning"]
    noise = _unit(f"wording:{text}")
    vector = [c + WORDING_NOISE * n for c, n in zip(_centre(prompt, meaning), noise, strict=True)]
    if match["para"]:
        offset = _paraphrase_direction(prompt, meaning)
        vector = [v + paraphrase * o for v, o in zip(vector, offset, strict=True)]
    return vector


@functools.lru_cache(maxsize=4096)
def _centre(prompt: str, meaning: str) -> tuple[float, ...]:
    """What every answer of one meaning shares: its meaning, the common and the topic direction."""
    parts = ((_fixed(f"meaning:{prompt}:{meaning}"), 1.0), (_fixed("common"), 0.6),
             (_fixed(f"topic:{prompt}"), 0.8))  # fmt: skip
    return tuple(math.fsum(v[i] * w for v, w in parts) for i in range(DIMENSION))


@functools.lru_cache(maxsize=4096)
def _paraphrase_direction(prompt: str, meaning: str) -> tuple[float, ...]:
    """A unit direction orthogonal to the meaning's centre: every meaning's paraphrase shift has
    the same size (a random direction's would vary by its length and its angle to the centre)."""
    centre = _centre(prompt, meaning)
    raw = _fixed(f"paraphrase:{prompt}:{meaning}")
    along = math.fsum(r * c for r, c in zip(raw, centre, strict=True)) / math.fsum(
        c * c for c in centre
    )
    orthogonal = [r - along * c for r, c in zip(raw, centre, strict=True)]
    norm = math.sqrt(math.fsum(o * o for o in orthogonal))
    return tuple(o / norm for o in orthogonal)


@dataclass(frozen=True)
class Behaviour:
    """How one prompt answers: its meanings with their weights, and the shift applied today."""

    meanings: Sequence[tuple[str, float]] = (("a", 1.0),)
    change: str = "none"
    """``none``; ``all`` (every answer another meaning); ``part`` (a ``share`` of them, each
    answer on its own draw); ``paraphrase`` (same meanings, paraphrase-shifted wordings)."""
    share: float = 0.5
    """The share of answers ``part`` moves: the shift is ``share²`` times that of ``all``."""

    def answer(self, prompt_id: str, rng: random.Random) -> str:
        if self.change == "all" or (self.change == "part" and rng.random() < self.share):
            meaning = "changed"
        else:
            labels = [m for m, _ in self.meanings]
            meaning = rng.choices(labels, weights=[w for _, w in self.meanings])[0]
        mark = "P" if self.change == "paraphrase" else ""
        return f"{prompt_id} says {meaning} in wording {mark}{rng.randrange(10**9)}"


def mixture(prompt_index: int) -> Sequence[tuple[str, float]]:
    """Three prompts in ten have two meanings (70/30); the rest one."""
    return (("a", 0.7), ("b", 0.3)) if prompt_index % 10 in (3, 6, 9) else (("a", 1.0),)


@dataclass
class ClusterProvider(InLoopProvider):
    """Answers from :class:`Behaviour` per prompt id, drawn from one seeded generator."""

    behaviours: Mapping[str, Behaviour]
    rng: random.Random = field(default_factory=random.Random)
    model: str = "sim/cluster"

    def __post_init__(self) -> None:
        super().__init__(ProviderConfig(model_id=self.model, seed=None))

    def complete(self, prompt: CanaryPrompt, *, system_prompt: str | None = None) -> LLMResponse:
        text = self.behaviours.get(prompt.id, Behaviour()).answer(prompt.id, self.rng)
        return LLMResponse(
            prompt_id=prompt.id, provider_model_id=self.model, content=text, total_tokens=10
        )
