"""How often meaning *same* is wrong on real answers: the error of its bound at its own margin.

A meaning comparison is *same* once the shift's upper bound (estimate + ``FUTILITY_Z`` standard
errors, the larger of the jackknife's and the one a shift of the margin would have along the
direction the answers moved: ``Shift.rules_out``) is below the margin. A calibrated bound would be
below the margin for a true shift *at* the margin in 10% of looks (``FUTILITY_Z`` = 1.28,
one-sided). This bench measures the real rate on Gemma 3 270M's answers, the recording of
``bench/meaning_change_power.py`` (300 answers a prompt under each of two system prompts,
embedded by all-MiniLM-L6-v2):

* **at the margin**: the margin set to the prompt's true shift (over every recorded answer), a
  pool of ``--pool`` vectors drawn from the first system prompt's answers, ``n`` of today's from
  the changed one's; the share of draws the engine's rule (``Shift.rules_out``) calls *same*;
* **no change**: the same margin, today's ``n`` drawn from the first system prompt's answers
  outside the pool; the share called *same* (how soon *same* settles a prompt that did not move).

And, with no recording needed, **the worst mixture**: a change of exactly the margin made by a share
``√margin`` of the answers moving to an unrelated meaning (orthogonal unit vectors plus a little
wording noise). Any rule misses it when today's answers hold none of the moved ones, which
happens with probability ``(1 − √margin)ⁿ``: the table sets the rule's error beside that floor.

One look per draw: the runner looks again as answers arrive, so a comparison that reaches
``max-samples`` has had several chances to be wrongly *same*. Seeded. Replays a saved recording
(``--recording F``, as ``meaning_change_power.py`` writes it); without one it records (about 12
minutes, the optional model set, ``make model-install``) and is skipped without the model.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine_note, positive, print_table
from bench.meaning_change_power import ANSWERS, Recording, obtain
from promptcanary.core.sampling.meaning import SAME_MARGIN
from promptcanary.core.sampling.semantic import FUTILITY_Z, shift
from promptcanary.core.spec import DEFAULT_MIN_SHIFT
from promptcanary.core.vectors import Vector, checked, decode
from scripts import local_model

SEED = 20261207
TODAY = (5, 8, 12, 16, 24, 32)
"""Today's answers at the look (5 is the default ``min-samples``)."""


def _vectors(recording: Recording, pid: str) -> list[Vector]:
    return [decode(r.embedding or "") for r in recording[pid]]


def rows(before: Recording, after: Recording, pool: int, draws: int) -> list[list[object]]:
    """One row per prompt and today's count: the true shift, *same* at the margin, and *same*
    under no change (see the module doc)."""
    out: list[list[object]] = []
    rng = random.Random(SEED)
    for pid in sorted(before):
        old, new = _vectors(before, pid), _vectors(after, pid)
        margin = shift(old, new).estimate
        for n in TODAY:
            wrong = settled = 0
            for _ in range(draws):
                drawn = rng.sample(range(len(old)), pool + n)
                baseline = [old[i] for i in drawn[:pool]]
                wrong += shift(baseline, rng.sample(new, n)).rules_out(margin)
                settled += shift(baseline, [old[i] for i in drawn[pool:]]).rules_out(margin)
            out.append([pid, f"{margin:.3f}", n, f"{wrong / draws:.1%}", f"{settled / draws:.1%}"])
    return out


def worst_rows(draws: int, pool: int) -> list[list[object]]:
    """*Same* at the default margin against the worst mixture (see the module doc)."""
    margin = SAME_MARGIN * DEFAULT_MIN_SHIFT
    share = math.sqrt(margin)
    rng = random.Random(SEED)

    def answer(axis: int) -> Vector:
        return checked([float(k == axis) + 0.05 * rng.gauss(0.0, 1.0) for k in range(3)])

    out: list[list[object]] = []
    for n in TODAY[:4]:
        wrong = 0
        for _ in range(draws):
            baseline = [answer(0) for _ in range(pool)]
            today = [answer(1 if rng.random() < share else 0) for _ in range(n)]
            wrong += shift(baseline, today).rules_out(margin)
        out.append([f"{margin:.2f}", f"{share:.3f}", n, f"{wrong / draws:.1%}",
                    f"{(1 - share) ** n:.1%}"])  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recording", type=Path, help="replay this saved recording (or save one)")
    parser.add_argument("--server-seed", type=int, default=local_model.DEFAULT_SEED)
    parser.add_argument("--pool", type=positive, default=80, help="pooled vectors of a prompt")
    parser.add_argument("--draws", type=positive, default=1000, help="draws a row")
    args = parser.parse_args(argv)
    print(machine_note())
    started = time.monotonic()
    print_table(
        f"meaning *same* against the worst mixture at the default margin, one look, pool "
        f"{args.pool}, {args.draws} draws a row",
        ["margin", "share moved", "today", "*same* (error)", "floor for any rule"],
        worst_rows(args.draws, args.pool),
    )
    obtained = obtain(args.recording, ANSWERS, args.server_seed)
    if obtained is None:
        print("\nreal answers: skipped, the local model is not installed: make model-install")
        return
    _, before, after = obtained
    print_table(
        f"meaning *same* on real answers, one look, bound = Shift.upper ({FUTILITY_Z} s.e.) "
        f"(calibrated: 10% at the margin); pool {args.pool}, {args.draws} draws a row",
        [
            "prompt",
            "margin (true shift)",
            "today",
            "*same* at the margin",
            "*same*, no change",
        ],
        rows(before, after, args.pool, args.draws),
    )
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
