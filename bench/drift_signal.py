"""Signal benchmark: how often a verdict cries wolf, how often it catches real drift, at what cost.

Two tables, both seeded (two runs print the same figures), printing and never asserting:

1. **samples: auto** (the default): the adaptive procedure of ``promptcanary.core.sampling``
   played over a history of promoted runs: each row is a chain of runs, each compared against the
   pool of the last K promoted ones (the no-drift run of each step is promoted; the drifted runs
   of the same step are compared against the same pool and not promoted). The first K runs fill
   the pool and are not counted. ``bench/_drift_model.py`` describes the suite and the model.
2. **fixed samples** (1, 5, 10 answers a prompt a side): the real ``compare()`` on real
   ``CanaryRunResult`` / ``BaselineSnapshot`` objects, as before ``samples: auto``.

The simulated suite is the same in both: 100 comparisons (85 always pass, 10 pass 90-97% of the
time, 5 continuous scores). "Drift" makes the 0.95 probe pass at 0.50 (or 0.75) in the current
run only.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from math import comb
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _drift_model as dm
from bench._common import machine_note
from promptcanary.core import stats
from promptcanary.core.comparator import compare
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    ProbeCategory,
    ProbeResult,
    Provenance,
    ProviderConfig,
)
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.sampling.sequential import Counts, Policy

SEED = 20240611
RUNS = int(os.environ.get("DRIFT_SIGNAL_RUNS", "500"))
ALPHA = 0.05
THRESHOLD = 0.05
DRIFT_KEY = dm.DRIFT_KEY
DRIFT_RATE = 0.50
PROVIDER = ProviderConfig(model_id="sim/model")
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _run(rng: random.Random, behaviour: dict[str, dm.Draw], samples: int) -> CanaryRunResult:
    results = []
    for key, draw in behaviour.items():
        for s in range(samples):
            score, ok = draw(rng)
            # model_construct skips validation: 2,000 results per run would dominate the time.
            results.append(
                ProbeResult.model_construct(
                    probe_id=key.split("-")[0],
                    probe_name=key,
                    category=ProbeCategory.CUSTOM,
                    prompt_id=f"prompt-{key}",
                    passed=ok,
                    score=score,
                    details="",
                    metadata={},
                    probe_key=key,
                    sample=s,
                    errored=False,
                )
            )
    return CanaryRunResult.model_construct(
        run_id="run",
        suite_name="sim",
        provider=PROVIDER,
        probe_results=results,
        llm_responses=[],
        provenance=Provenance(samples=samples),
    )


@dataclass
class Tally:
    runs: int = 0
    any_regression: int = 0
    drift_caught: int = 0
    midp_any: int = 0
    midp_caught: int = 0

    def share(self, count: int) -> str:
        return f"{100.0 * count / self.runs:5.1f}%"


def _midp_regressions(base: CanaryRunResult, cur: CanaryRunResult) -> set[str]:
    """What-if: the same verdict as compare() but with Lancaster's mid-p in place of Fisher."""
    groups: dict[str, list[list[ProbeResult]]] = {}
    for side, run in enumerate((base, cur)):
        for r in run.probe_results:
            groups.setdefault(r.probe_key, [[], []])[side].append(r)
    keys, tests, deltas = [], [], []
    for key, (b, c) in groups.items():
        t = stats.test_samples(
            [r.score for r in b], [r.passed for r in b],
            [r.score for r in c], [r.passed for r in c],
            mid_p=True,
        )  # fmt: skip
        keys.append(key)
        tests.append(t)
        deltas.append(sum(r.score for r in c) / len(c) - sum(r.score for r in b) / len(b))
    keep = stats.testable([t.min_p_worse for t in tests], ALPHA)
    family = [i for i, k in enumerate(keep) if k]
    adjusted = stats.benjamini_hochberg([tests[i].p_worse for i in family])
    return {
        keys[i]
        for i, p in zip(family, adjusted, strict=True)
        if p < ALPHA and deltas[i] <= -THRESHOLD + 1e-9
    }


def simulate(samples: int, drift: bool, seed: int, stress: bool = False) -> Tally:
    rng = random.Random(seed)
    behaviour = dm.all_flaky_behaviour() if stress else dm.suite_behaviour()
    drifted = dm.drifted(behaviour, DRIFT_RATE) if drift else behaviour
    tally = Tally()
    for _ in range(RUNS):
        base_run = _run(rng, behaviour, samples)
        snapshot = BaselineSnapshot.model_construct(
            schema_version=2, snapshot_id="base", suite_name="sim", provider=PROVIDER,
            run_result=base_run, created_at=_EPOCH, note="",
        )  # fmt: skip
        cur_run = _run(rng, drifted, samples)
        report = compare(
            snapshot, cur_run, regression_threshold=THRESHOLD, improvement_threshold=THRESHOLD,
            alpha=ALPHA,
        )  # fmt: skip
        flagged = {c.probe_key for c in report.comparisons if c.regression}
        tally.runs += 1
        tally.any_regression += bool(flagged)
        tally.drift_caught += DRIFT_KEY in flagged
        if samples >= 2:
            mid = _midp_regressions(base_run, cur_run)
            tally.midp_any += bool(mid)
            tally.midp_caught += DRIFT_KEY in mid
    return tally


def _binom(k: int, n: int, p: float) -> float:
    return comb(n, k) * p**k * (1 - p) ** (n - k)


def fisher_ceiling(n: int, level: float, p_base: float = 0.95, p_cur: float = DRIFT_RATE) -> float:
    """Exact chance that one one-sided Fisher test, alone, reaches p ≤ level on the drift."""
    return sum(
        _binom(xb, n, p_base) * _binom(xc, n, p_cur)
        for xb in range(n + 1)
        for xc in range(n + 1)
        if xb > xc and stats.fisher_one_sided(xb, n, xc, n).p_worse <= level
    )


def oracle_ceiling(n: int, level: float, p_base: float = 0.95, p_cur: float = DRIFT_RATE) -> float:
    """Power of the best test that *knows* the baseline pass rate (reject when passes ≤ c)."""
    c = -1
    while sum(_binom(k, n, p_base) for k in range(c + 2)) <= level:
        c += 1
    return sum(_binom(k, n, p_cur) for k in range(c + 1))


def fixed_table() -> None:
    print(
        f"{RUNS} simulated runs per row, suite of 100 comparisons, alpha={ALPHA}, "
        f"threshold={THRESHOLD}; drift = one probe 0.95 → {DRIFT_RATE} pass rate."
    )
    print(
        "samples=1 is the spec's single-sample threshold rule (the reference); samples ≥ 2 use "
        "Fisher/Mann-Whitney + BH over testable hypotheses."
    )
    header = (
        f"{'scenario':<10}{'samples':>8}  {'runs with ≥1 regression':>24}  "
        f"{'drifted probe caught':>21}  {'mid-p what-if (any / caught)':>29}"
    )
    print(header)
    print("-" * len(header))
    rows = [(1, False), (5, False), (10, False), (1, True), (5, True), (10, True)]
    rows_stress = [(10, False)]
    plan = [(s, d, False) for s, d in rows] + [(s, d, True) for s, d in rows_stress]
    # Rows are independent and seeded each on its own, so two processes print the same table.
    with multiprocessing.Pool(2) as pool:
        tallies = pool.starmap(
            simulate, [(s, d, SEED + i, st) for i, (s, d, st) in enumerate(plan)]
        )
    for (samples, drift, stress), t in zip(plan, tallies, strict=True):
        caught = t.share(t.drift_caught) if drift else "    -"
        what_if = f"{t.share(t.midp_any)} / " + (t.share(t.midp_caught) if drift else "    -")
        if samples < 2:
            what_if = "-"
        scenario = "stress" if stress else "drift" if drift else "no drift"
        print(
            f"{scenario:<10}{samples:>8}  {t.share(t.any_regression):>24}  "
            f"{caught:>21}  {what_if:>29}"
        )
    print()
    print("Reading: 'runs with ≥1 regression' under no drift is the false-alarm rate per run")
    print("(target ≤ 5% at samples ≥ 5); 'drifted probe caught' is the detection rate (target")
    print("≥ 90% at samples = 10). 'stress' is a suite of 100 probes all at pass rate 0.90, no")
    print("drift. Monte Carlo error is about ±1 point near 5%, ±2 near 50%. The mid-p columns are")
    print("a what-if (Lancaster's mid-p instead of Fisher), not what compare() does.")
    print()
    print("Ceilings for the drift (exact, no simulation): chance that a single one-sided test")
    print("reaches the level, with no other probe in the family (level 0.05) or with a family")
    print("of six testable hypotheses as in this suite (level 0.05/6, BH's bar for one discovery):")
    for n in (5, 10, 15, 20, 30):
        print(
            f"  samples={n:>2}: Fisher {fisher_ceiling(n, ALPHA):.3f} / "
            f"{fisher_ceiling(n, ALPHA / 6):.3f};  test that knows the baseline rate "
            f"{oracle_ceiling(n, ALPHA):.3f} / {oracle_ceiling(n, ALPHA / 6):.3f}"
        )


# ── samples: auto ───────────────────────────────────────────────────────────

POLICY = Policy()


@dataclass
class AutoTally:
    runs: int = 0
    alarms: int = 0
    caught: int = 0
    inconclusive: int = 0
    answers: int = 0
    prompts: int = 0

    def add(self, regressed: set[str], inconclusive: int, answers: int, prompts: int) -> None:
        self.runs += 1
        self.alarms += bool(regressed)
        self.caught += DRIFT_KEY in regressed
        self.inconclusive += inconclusive
        self.answers += answers
        self.prompts += prompts


def chain(
    pool_size: int, drifts: tuple[float, ...], seed: int, *, deterministic: bool = False,
    stress: bool = False,
) -> list[AutoTally]:  # fmt: skip
    """One history of RUNS promoted no-drift runs; per step also one run per drifted rate."""
    rng = random.Random(seed)
    behaviour = dm.all_flaky_behaviour() if stress else dm.suite_behaviour()
    base = dm.Model.frozen(behaviour, rng) if deterministic else dm.Model(behaviour)
    models = [base] + [dm.Model(dm.drifted(behaviour, rate)) for rate in drifts]
    tallies = [AutoTally() for _ in models]
    history: list[dict[str, Counts]] = []
    for step in range(pool_size + RUNS):
        outcomes = [dm.adaptive_run(m, history[-pool_size:], POLICY, rng) for m in models]
        history.append(outcomes[0].summary)
        if step < pool_size:
            continue  # the pool is still filling
        for tally, outcome in zip(tallies, outcomes, strict=True):
            tally.add(outcome.regressed, outcome.inconclusive, outcome.answers, len(behaviour))
    return tallies


def auto_table(*, real_runner: bool) -> None:
    plan = [
        ("default", DEFAULT_POOL, (0.50, 0.75), {}),
        ("deterministic", DEFAULT_POOL, (), {"deterministic": True}),
        ("stress", DEFAULT_POOL, (), {"stress": True}),
        ("pool 5", 5, (0.50,), {}),
        ("pool 1", 1, (0.50,), {}),
    ]
    job = _runner_job if real_runner else _chain_job
    started = time.perf_counter()
    with multiprocessing.Pool(2) as pool:
        results = pool.starmap(
            job, [(k, d, SEED + 100 + i, kw) for i, (_, k, d, kw) in enumerate(plan)]
        )
    rows = []
    for (label, k, drifts, _), tallies in zip(plan, results, strict=True):
        names = ["no drift"] + [f"0.95 → {r:.2f}" for r in drifts]
        for name, t in zip(names, tallies, strict=True):
            scenario = name if label in ("default", "pool 5", "pool 1") else f"{label}, {name}"
            caught = f"{100 * t.caught / t.runs:.1f}%" if name != "no drift" else "-"
            rows.append(
                [scenario, k, t.runs, f"{100 * t.alarms / t.runs:.1f}%", caught,
                 f"{t.inconclusive / t.runs:.2f}", f"{t.answers / t.prompts:.2f}"]
            )  # fmt: skip
    how = (
        "the real runner (CanarySuite.run, compare, promote) with a seeded fake provider"
        if real_runner
        else "the fast model of sampling (pass flags drawn directly, same decision rules)"
    )
    print(
        f"samples: auto (min {POLICY.min_samples}, max {POLICY.max_samples}, alpha {POLICY.alpha},"
        f" futility: no drop of {POLICY.margin} at LR {1 / POLICY.futility_level:g}); "
        f"{RUNS} counted runs per row after the pool filled; {how}; "
        f"{time.perf_counter() - started:.0f} s."
    )
    print("| scenario | pool K | runs | runs with ≥1 regression | drifted probe caught |"
          " inconclusive per run | answers per prompt |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print(
        f"Fixed samples: max ({POLICY.max_samples}) would cost {POLICY.max_samples} answers per "
        "prompt; 'stress' is 100 probes all at pass rate 0.90. Monte Carlo error about ±1 point "
        "near 5%, ±1.3 near 90%."
    )


def runner_chain(
    pool_size: int, drifts: tuple[float, ...], seed: int, *, deterministic: bool = False,
    stress: bool = False,
) -> list[AutoTally]:  # fmt: skip
    """:func:`chain` through the real runner: ``CanarySuite.run(samples="auto", baseline=...)``
    with the seeded fake provider, ``compare()`` on the result, ``promote()`` for the pool."""
    from bench._drift_provider import SimProvider, sim_suite
    from promptcanary.core.sampling.pool import promote

    rng = random.Random(seed)
    behaviour = dm.all_flaky_behaviour() if stress else dm.suite_behaviour()
    suite = sim_suite(list(behaviour))
    base = dm.Model.frozen(behaviour, rng) if deterministic else dm.Model(behaviour)
    models = [base] + [dm.Model(dm.drifted(behaviour, rate)) for rate in drifts]
    tallies = [AutoTally() for _ in models]
    snapshot = None
    for step in range(pool_size + RUNS):
        runs = [
            suite.run(SimProvider(m, rng), show_progress=False, baseline=snapshot,
                      baseline_pool=pool_size, max_retries=0)
            for m in models
        ]  # fmt: skip
        if step >= pool_size:  # the pool is full: count
            assert snapshot is not None
            for tally, run in zip(tallies, runs, strict=True):
                report = compare(snapshot, run)
                flagged = {c.prompt_id for c in report.regressions}
                tally.add(flagged, len(report.inconclusive), len(run.llm_responses), len(behaviour))
        snapshot = promote(runs[0], snapshot, pool_size)
    return tallies


def _runner_job(
    pool_size: int, drifts: tuple[float, ...], seed: int, kw: dict[str, bool]
) -> list[AutoTally]:
    return runner_chain(pool_size, drifts, seed, **kw)


def _chain_job(
    pool_size: int, drifts: tuple[float, ...], seed: int, kw: dict[str, bool]
) -> list[AutoTally]:
    return chain(pool_size, drifts, seed, **kw)


def main() -> None:
    """``--model``: the fast model of sampling instead of the real runner (seconds, not minutes);
    ``--no-fixed``: skip the fixed-sample rows."""
    started = time.perf_counter()
    print(machine_note())
    print()
    auto_table(real_runner="--model" not in sys.argv)
    if "--no-fixed" not in sys.argv:
        print()
        fixed_table()
    print(f"\n({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
