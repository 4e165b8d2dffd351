"""Shard membership: parsed strictly, disjoint and covering, balanced, the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from promptcanary.core.models import CanaryPrompt
from promptcanary.core.run.shards import Shard, ShardError, deal


def ids(count: int) -> list[str]:
    return [f"prompt-{k:04d}" for k in range(count)]


@pytest.mark.parametrize(("text", "index", "total"), [("2/4", 2, 4), (" 1 / 1 ", 1, 1)])
def test_parse_reads_i_of_n(text: str, index: int, total: int) -> None:
    shard = Shard.parse(text)
    assert (shard.index, shard.total) == (index, total)
    assert str(shard) == f"{index}/{total}"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0/4", "1 <= i <= n"),
        ("5/4", "1 <= i <= n"),
        ("1/0", "1 <= i <= n"),
        ("2", "write i/n"),
        ("a/b", "write i/n"),
        ("-1/4", "write i/n"),
        ("", "write i/n"),
    ],
)
def test_parse_refuses_what_is_not_a_shard(text: str, says: str) -> None:
    with pytest.raises(ShardError) as caught:
        Shard.parse(text)
    assert says in str(caught.value)


@pytest.mark.parametrize("total", [1, 2, 3, 4, 7, 16])
def test_the_deal_covers_the_suite_once_and_is_balanced(total: int) -> None:
    prompt_ids = ids(1001)
    owner = deal(prompt_ids, total)
    assert set(owner) == set(prompt_ids)
    sizes = [sum(1 for s in owner.values() if s == index) for index in range(1, total + 1)]
    assert sum(sizes) == len(prompt_ids)
    assert max(sizes) - min(sizes) <= 1


def test_more_shards_than_prompts_leaves_some_empty_but_covers_all() -> None:
    owner = deal(ids(3), 5)
    assert sorted(owner.values()) == [1, 2, 3]


def test_the_deal_does_not_depend_on_the_order_of_the_prompts() -> None:
    prompt_ids = ids(200)
    assert deal(prompt_ids, 4) == deal(list(reversed(prompt_ids)), 4)


def test_the_deal_mixes_neighbours() -> None:
    """Shards are not contiguous runs of the file: a slow block of prompts is spread out."""
    owner = deal(ids(400), 4)
    first_block = [owner[p] for p in ids(400)[:40]]
    assert len(set(first_block)) == 4


def test_the_deal_is_the_same_in_another_process_with_another_hash_seed() -> None:
    """Legs run on different machines: nothing may depend on Python's per-process hash()."""
    prompt_ids = ids(300)
    script = (
        "import json, sys\n"
        "from promptcanary.core.run.shards import deal\n"
        "print(json.dumps(deal(json.loads(sys.stdin.read()), 4)))\n"
    )
    elsewhere = {}
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(prompt_ids),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        elsewhere[seed] = json.loads(done.stdout)
    assert elsewhere["1"] == elsewhere["2"] == deal(prompt_ids, 4)


def test_select_keeps_suite_order_and_the_shards_partition_the_suite() -> None:
    prompts = [CanaryPrompt(id=p, text=f"say {p}") for p in ids(50)]
    chosen = [Shard(i, 3).select(prompts) for i in (1, 2, 3)]
    position = {p.id: k for k, p in enumerate(prompts)}
    for part in chosen:
        assert part, "every shard of 50 prompts in 3 gets some"
        assert [position[p.id] for p in part] == sorted(position[p.id] for p in part)
    together = sorted((p.id for part in chosen for p in part), key=position.__getitem__)
    assert together == [p.id for p in prompts]


def test_reordering_the_suite_moves_no_prompt_to_another_shard() -> None:
    prompts = [CanaryPrompt(id=p, text=f"say {p}") for p in ids(30)]
    before = {p.id for p in Shard(2, 4).select(prompts)}
    after = {p.id for p in Shard(2, 4).select(list(reversed(prompts)))}
    assert before == after
