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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from promptcanary.core.models import CanaryPrompt

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
