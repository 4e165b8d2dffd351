"""Meaning benchmark: how often the meaning comparison (``semantic_drift:``) cries wolf, how often
it catches a change of meaning, and what it costs in answers and embedding requests.

Through the real runner (``run_suite``, ``samples: auto``, the answer phase) and the real
comparator (``compare``): a seeded provider answers 100 free-text prompts from known meanings
(``tests/fakes/meaning_model.py``: one meaning per prompt, or two at 70/30 for three prompts in
ten; every answer a new wording) and a deterministic fake embedding model embeds them. Each pool is
built as the action builds it: 20 pushes, each run promoted (``promote``, pool of 20). Against
each pool, pull-request runs of each row are compared; nothing they do is promoted.

Rows (targets at the defaults, ``min_shift`` 0.05):

* **no change** — answers resampled from the same meanings (new wordings): a false alarm is a run
  with any *changed* meaning row (target ≤ 5% of runs);
* **meaning change on one prompt of 100** — every answer of one prompt from another meaning
  (target: detected in ≥ 90% of runs);
* **half of one prompt's answers** from another meaning (reported; no target): a quarter of the
  shift of moving all of them, on either side of the margin depending on the prompt;
* **a share of one prompt's answers** from another meaning, the share that puts the true shift at
  the margin (``SAME_MARGIN × min_shift``): *same* there is an error of the futility bound,
  whose nominal rate at one look is 10% (reported: the runner's repeated looks raise it; see the
  docs);
* **paraphrase shift below min_shift** — every prompt's answers reworded with a systematic
  offset whose true centroid shift is ``min_shift / 2``: flagged in ≤ 5% of runs.

Answers per prompt are compared with the same suite without ``semantic_drift:`` against the same
pools (target ≤ 1.2×). Seeded: two runs print the same figures. ``--quick`` for development.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, print_table
from promptcanary.core.comparator import compare
from promptcanary.core.models import BaselineSnapshot, CanaryPrompt, CanaryRunResult
from promptcanary.core.probes.format import KeywordPresenceProbe
from promptcanary.core.run.embedder import EmbeddingService
from promptcanary.core.run.options import RunOptions
from promptcanary.core.run.runner import run_suite
from promptcanary.core.sampling.meaning import SAME_MARGIN
from promptcanary.core.sampling.pool import DEFAULT_POOL, promote
from promptcanary.core.spec import DEFAULT_MIN_SHIFT, SemanticDriftSpec, SuiteSpec
from tests.fakes.embedder_fake import FakeEmbedder
from tests.fakes.meaning_model import Behaviour, ClusterProvider, cluster_vector, mixture

SEED = 20261202
PROMPTS = 100
PUSHES = DEFAULT_POOL
WITHOUT_RUNS = 4
"""Runs per pool of the same suite without ``semantic_drift:`` (the answers reference)."""
ROWS = ("none", "all", "half", "margin", "paraphrase")
FOCUSED = ("all", "half", "margin")
"""Rows that change one prompt: its verdict is counted (*changed*, *same*)."""
MARGIN = SAME_MARGIN * DEFAULT_MIN_SHIFT
ROW_NAMES = {
    "none": "no change",
    "all": "meaning change, 1 prompt of 100",
    "half": "half of 1 prompt's answers changed",
    "margin": "a share of 1 prompt's answers changed: shift = the margin",
    "paraphrase": "paraphrase shift (min_shift / 2), all prompts",
}


def _suite(meaning: bool) -> SuiteSpec:
    prompts = [CanaryPrompt(id=f"p{i:03d}", text=f"free-text question {i}") for i in range(PROMPTS)]
    return SuiteSpec(
        "meaning-bench",
        prompts,
        [KeywordPresenceProbe(required_keywords=["says"])],
        semantic_drift=SemanticDriftSpec("fake/embed") if meaning else None,
    )


def _behaviours(change: str, changed_prompt: str | None) -> dict[str, Behaviour]:
    out = {}
    for i in range(PROMPTS):
        pid = f"p{i:03d}"
        if change == "paraphrase" or (pid == changed_prompt and change == "all"):
            out[pid] = Behaviour(mixture(i), change)
        elif pid == changed_prompt and change in ("half", "margin"):
            share = 0.5 if change == "half" else math.sqrt(MARGIN / _moved_shift(i))
            out[pid] = Behaviour(mixture(i), "part", share)
        else:
            out[pid] = Behaviour(mixture(i))
    return out


def _shift_between(i: int, after: Behaviour, offset: float, samples: int = 1500) -> float:
    """``½‖μ_after − μ‖²`` of prompt ``i`` against its unchanged answers (Monte Carlo, seeded)."""
    rng = random.Random(7)
    means = []
    for behaviour in (Behaviour(mixture(i)), after):
        total = [0.0] * 32
        for _ in range(samples):
            vector = cluster_vector(behaviour.answer(f"p{i:03d}", rng), offset)
            norm = math.sqrt(math.fsum(v * v for v in vector))
            total = [t + v / norm for t, v in zip(total, vector, strict=True)]
        means.append([t / samples for t in total])
    return 0.5 * math.fsum((a - b) ** 2 for a, b in zip(*means, strict=True))


@functools.cache
def _moved_shift(i: int) -> float:
    """The shift of prompt ``i`` when every answer moved: a share ``s`` moved shifts ``s²`` as
    much, so ``√(margin / this)`` of them put the shift at the margin."""
    return _shift_between(i, Behaviour(mixture(i), "all"), 0.0)


def _true_shift(offset: float) -> float:
    """The largest over a few one-meaning prompts of the paraphrase's shift: prompts with two
    meanings shift less (each meaning moves its own way)."""
    return max(
        _shift_between(i, Behaviour(mixture(i), "paraphrase"), offset) for i in (0, 1, 2, 4, 5)
    )


def paraphrase_offset(target: float) -> tuple[float, float]:
    """The offset whose true shift is ``target`` (bisection), and that shift."""
    low, high = 0.0, 1.0
    for _ in range(12):
        mid = (low + high) / 2
        low, high = (mid, high) if _true_shift(mid) < target else (low, mid)
    offset = (low + high) / 2
    return offset, _true_shift(offset)


@dataclass
class Tally:
    runs: int = 0
    flagged_target: int = 0
    same_target: int = 0
    flagged_other: int = 0
    answers: int = 0
    requests: int = 0
    items: int = 0


def _run(
    suite: SuiteSpec,
    behaviours: Mapping[str, Behaviour],
    baseline: BaselineSnapshot | None,
    rng: random.Random,
    offset: float,
) -> CanaryRunResult:
    embedder = FakeEmbedder(vector_of=lambda text: cluster_vector(text, offset), dimension=32)
    services = [EmbeddingService(embedder)] if suite.semantic_drift is not None else []
    return _loop().run_until_complete(
        run_suite(
            suite,
            ClusterProvider(behaviours, rng),
            RunOptions(samples="auto", show_progress=False),
            baseline=baseline,
            services=services,
        )
    )


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    """One event loop a worker: ``asyncio.run`` per run would install and restore a SIGINT
    handler each time, and restoring it formats the old handler's repr, which holds the whole
    suite and baseline (a tenth of a second a run)."""
    return asyncio.new_event_loop()


def one_pool(args: tuple[int, int, float]) -> dict[str, Tally]:
    """Build one pool (20 promoted pushes), then compare ``runs`` runs of every row with it."""
    index, runs, offset = args
    rng = random.Random(SEED * 1000 + index)
    meaning, plain = _suite(True), _suite(False)
    snapshot: BaselineSnapshot | None = None
    steady = _behaviours("none", None)
    for _ in range(PUSHES):
        snapshot = promote(_run(meaning, steady, snapshot, rng, offset), snapshot)
    assert snapshot is not None
    tallies = {row: Tally() for row in (*ROWS, "without")}
    for n in range(runs):
        target = f"p{rng.randrange(PROMPTS):03d}"
        # The suite without semantic_drift only sets the answers-per-prompt reference: a few runs.
        for row in (*ROWS, "without") if n < WITHOUT_RUNS else ROWS:
            suite = plain if row == "without" else meaning
            behaviours = _behaviours("none" if row == "without" else row, target)
            run = _run(suite, behaviours, snapshot, rng, offset)
            report = compare(snapshot, run)
            verdicts = {c.prompt_id: c.verdict for c in report.comparisons
                        if c.probe_key == "semantic"}  # fmt: skip
            flagged = {pid for pid, verdict in verdicts.items() if verdict == "changed"}
            tally = tallies[row]
            tally.runs += 1
            focus = target if row in FOCUSED else None
            tally.flagged_target += focus in flagged if focus else 0
            tally.same_target += verdicts.get(focus) == "same" if focus else 0
            tally.flagged_other += bool(flagged - {focus}) if focus else bool(flagged)
            tally.answers += len(run.llm_responses)
            for usage in run.services:
                tally.requests += usage.requests
                tally.items += usage.items
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 pools × 4 runs (development)")
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--runs", type=int, default=25, help="runs per row and pool")
    parser.add_argument(
        "--save", type=Path, help="append each pool's tallies to this file (JSON lines) as it ends"
    )
    parser.add_argument(
        "--table", type=Path, help="print the table of the tallies saved in this file, run none"
    )
    args = parser.parse_args()
    pools, runs = (3, 4) if args.quick else (args.pools, args.runs)
    started = time.perf_counter()
    if args.table is not None:  # the offset is the run's (seeded: the same every run)
        lines = args.table.read_text(encoding="utf-8").splitlines()
        results = [_tallies(json.loads(line)) for line in lines if line.strip()]
        _print(results, None, time.perf_counter() - started)
        return
    offset, true_shift = paraphrase_offset(DEFAULT_MIN_SHIFT / 2)
    results = _run_pools(pools, runs, offset, args.save)
    _print(results, (offset, true_shift), time.perf_counter() - started)


def _run_pools(pools: int, runs: int, offset: float, save: Path | None) -> list[dict[str, Tally]]:
    """Every pool on a worker a core; each pool's tallies saved as soon as it ends (a long run
    cut short still leaves what it measured)."""
    results = []
    jobs = [(i, runs, offset) for i in range(pools)]
    with multiprocessing.Pool(min(pools, os.cpu_count() or 1)) as workers:
        for result in workers.imap_unordered(one_pool, jobs):
            results.append(result)
            if save is not None:
                with save.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({row: vars(t) for row, t in result.items()}) + "\n")
    return results


def _tallies(saved: Mapping[str, Mapping[str, int]]) -> dict[str, Tally]:
    return {row: Tally(**counts) for row, counts in saved.items()}


def _print(
    results: list[dict[str, Tally]], paraphrase: tuple[float, float] | None, seconds: float
) -> None:
    total = {row: Tally() for row in (*ROWS, "without")}
    for result in results:
        for row, tally in result.items():
            for name in vars(tally):
                setattr(total[row], name, getattr(total[row], name) + getattr(tally, name))
    base = total["without"].answers / (total["without"].runs * PROMPTS)
    table = []
    for row in ROWS:
        t = total[row]
        per_prompt = t.answers / (t.runs * PROMPTS)
        focused = row in FOCUSED
        detected = f"{t.flagged_target / t.runs:.1%}" if focused else "–"
        same = f"{t.same_target / t.runs:.1%}" if focused else "–"
        requests = t.requests / (t.runs * PROMPTS)
        table.append([
            ROW_NAMES[row], t.runs, f"{t.flagged_other / t.runs:.1%}", detected, same,
            f"{per_prompt:.2f} ({per_prompt / base:.2f}×)", f"{requests:.3f}",
        ])  # fmt: skip
    print_table(
        f"Meaning comparisons (semantic_drift:): {len(results)} pools, "
        f"100 prompts, min_shift {DEFAULT_MIN_SHIFT}",
        ["row", "runs", "false alarm (other prompts)", "detected", "…called same", "answers/prompt",
         "embedding requests/prompt"],
        table,
    )  # fmt: skip
    shifted = (
        f" Paraphrase offset {paraphrase[0]:.3f}: true shift {paraphrase[1]:.4f}."
        if paraphrase is not None
        else ""
    )
    halves = [0.25 * _moved_shift(i) for i in range(PROMPTS)]
    print(
        f"\nWithout semantic_drift: {base:.2f} answers a prompt ({total['without'].runs} runs)."
        f"{shifted} Half of a prompt's answers moved: true shift {min(halves):.3f}–"
        f"{max(halves):.3f}; the margin {MARGIN:.3f}. {machine_note()}; {seconds:.0f} s."
    )


if __name__ == "__main__":
    main()
