"""samples: auto against a pool: the pool read per prompt, and the stage plan driven by hand with
scored answers."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest

from promptcanary.core.models import LLMResponse, ProbeResult, ScoreSummary
from promptcanary.core.sampling import pool
from promptcanary.core.sampling.pool import answer_digest
from promptcanary.core.sampling.power import FIRST_BUILD, answers_to_settle, shows_drop
from promptcanary.core.sampling.sequencer import (
    PooledPrompt,
    Sequencer,
    counts_of,
    decide_run,
    pool_prompt,
    replay,
)
from promptcanary.core.sampling.sequential import (
    DETERMINISTIC_EVIDENCE,
    Counts,
    Policy,
    Verdict,
    answers_to_show,
)
from tests.unit.core.sampling.test_pool import _run

POLICY = Policy(min_samples=3, max_samples=12)
BUILD = Policy(min_samples=3, max_samples=12, top_up=True)


def _answers(
    prompt: str, outcomes: list[bool], text: str | None = None
) -> tuple[list[ProbeResult], list[LLMResponse]]:
    results, responses = [], []
    for i, ok in enumerate(outcomes):
        content = text if text is not None else f"{prompt} answer {i} {'ok' if ok else 'bad'}"
        responses.append(
            LLMResponse(prompt_id=prompt, provider_model_id="m", content=content, sample=i)
        )
        results.append(
            ProbeResult(
                probe_id="p", probe_key="p", prompt_id=prompt, passed=ok, score=float(ok), sample=i
            )
        )
    return results, responses


def _pooled(passes: int, n: int, text: str | None = None) -> PooledPrompt:
    summary = ScoreSummary(n=n, passes=passes, score_sum=passes, score_sq_sum=passes)
    return PooledPrompt(runs=5, results={"p": summary}, text=text)


def _digest(text: str) -> str:
    return answer_digest(LLMResponse(prompt_id="x", provider_model_id="m", content=text))


class TestPoolPrompt:
    def test_pools_matching_prompt_hashes_only(self) -> None:
        old = pool.entry_for(_run("old", {"a": ["ok", "no"]}, {"a": "edited"}))
        new = pool.entry_for(_run("new", {"a": ["ok", "ok"]}, {"a": "h"}))
        other = pool.entry_for(_run("other", {"a": ["ok"]}, {"a": "h"}))
        pooled = pool_prompt([new, old, other], "a", "h")
        assert pooled is not None
        assert pooled.runs == 2
        assert counts_of(pooled.results["p"]) == Counts(3, 3)
        assert pooled.text is not None  # "ok" in both matching runs

    def test_entries_without_hashes_still_count(self) -> None:
        legacy = pool.entry_for(_run("legacy", {"a": ["ok"]}, {}))
        pooled = pool_prompt([legacy], "a", "h")
        assert pooled is not None and pooled.runs == 1

    def test_differing_texts_across_runs_are_not_one_text(self) -> None:
        first = pool.entry_for(_run("1", {"a": ["ok"]}, {}))
        second = pool.entry_for(_run("2", {"a": ["ok!"]}, {}))
        pooled = pool_prompt([first, second], "a", None)
        assert pooled is not None and pooled.text is None

    def test_unknown_prompt(self) -> None:
        assert pool_prompt([pool.entry_for(_run("1", {"a": ["ok"]}, {}))], "b", None) is None


def test_first_stage_asks_the_minimum_even_where_the_pool_had_one_text() -> None:
    # "det": 20 pooled answers of one text; "var": varied texts; "new": nothing pooled, so
    # the run builds its pool, first stage FIRST_BUILD.
    seq = Sequencer(
        {"det": _pooled(20, 20, _digest("A")), "var": _pooled(20, 20), "new": None}, BUILD
    )
    assert seq.first_targets(["det", "var", "new"]) == {
        "det": BUILD.min_samples, "var": BUILD.min_samples, "new": FIRST_BUILD
    }  # fmt: skip
    # A run that may not become the baseline asks a prompt without a pool once, as run() did.
    plain = Sequencer({"new": None}, POLICY)
    assert plain.first_targets(["new"]) == {"new": 1}
    assert plain.look(*_answers("new", [True])) == {}


def test_too_few_identical_pooled_answers_are_no_evidence_of_determinism() -> None:
    # One pooled answer of text "A" (a first push of old): no shortcut, the e-values decide.
    thin = Sequencer({"det": _pooled(1, 1, _digest("A"))}, POLICY)
    assert thin.first_targets(["det"]) == {"det": POLICY.min_samples}
    targets = thin.look(*_answers("det", [False, False, False], text="B"))
    decision = thin.decisions[0]
    assert decision is not None and not decision.deterministic
    assert decision.verdict is not Verdict.REGRESSED
    assert targets == {"det": POLICY.next_size(3)}


def test_repeating_the_pooled_text_settles_only_as_a_tested_same() -> None:
    # A deterministic pool and today's answers all its text: no shortcut. Four passes do not
    # rule out a drop to 0.5 (0.5**4 > 1/25); the fifth does, as for any all-pass prompt.
    seq = Sequencer({"det": _pooled(20, 20, _digest("A"))}, POLICY)
    seq.first_targets(["det"])
    assert seq.look(*_answers("det", [True] * 4, text="A")) == {"det": POLICY.next_size(4)}
    assert seq.decisions[0] is not None and seq.decisions[0].verdict is Verdict.UNDECIDED
    assert seq.look(*_answers("det", [True] * 5, text="A")) == {}
    decision = seq.finish()[("det", "p")]
    assert decision.verdict is Verdict.SAME and not decision.deterministic
    assert decision.p_adjusted is not None  # a tested verdict, inside e-BH


def test_answers_to_settle_is_where_an_all_pass_prompt_settles() -> None:
    # Through the stages, against all-pass pools of several sizes: a thin pool's bound leaves
    # less room for a drop, so it takes more passes to rule one out.
    policy = Policy(min_samples=3, max_samples=30)
    settled = {}
    for pooled in (1, 5, 40):
        seq = Sequencer({"a": _pooled(pooled, pooled)}, policy)
        n = seq.first_targets(["a"])["a"]
        while targets := seq.look(*_answers("a", [True] * n)):
            n = targets["a"]
        assert seq.finish()[("a", "p")].verdict is Verdict.SAME
        assert n == answers_to_settle(Counts(pooled, pooled), policy)
        settled[pooled] = n
    assert settled[1] > settled[5] > settled[40]


def test_another_repeated_text_is_decided_by_its_pass_flags() -> None:
    # The pool always said "A" (a pass); today "B" three times, failing: a deterministic change.
    seq = Sequencer({"det": _pooled(20, 20, _digest("A"))}, POLICY)
    seq.first_targets(["det"])
    assert seq.look(*_answers("det", [False] * 3, text="B")) == {}
    decision = seq.finish()[("det", "p")]
    assert decision.verdict is Verdict.REGRESSED and decision.deterministic
    assert decision.p_adjusted is None  # no statistics were done


def test_another_varying_text_is_judged_by_the_statistics() -> None:
    seq = Sequencer({"det": _pooled(20, 20, _digest("A"))}, POLICY)
    seq.first_targets(["det"])
    seq.look(*_answers("det", [True], text="B"))
    targets = seq.look(*_answers("det", [True, True, True]))  # three different texts
    decision = seq.decisions[0]
    assert decision is not None and not decision.deterministic
    assert targets == {"det": 4}  # 3 passes do not yet rule out a drop of 0.5


def test_stages_until_a_regression_is_decided() -> None:
    # A baseline passing 12 of 20 against answers that all fail: e = 0.7, 1.1, 1.8, 4.6, 11.4,
    # 39.2 after 3, 4, 5, 7, 9, 12 answers; the bar for one comparison is 1 / 0.05 = 20.
    seq = Sequencer({"a": _pooled(12, 20)}, POLICY)
    seq.first_targets(["a"])
    sizes = []
    n = 3
    while True:
        targets = seq.look(*_answers("a", [False] * n))
        if not targets:
            break
        n = targets["a"]
        sizes.append(n)
    assert sizes == [4, 5, 7, 9, 12]
    final = seq.finish()[("a", "p")]
    assert final.verdict is Verdict.REGRESSED
    assert final.current.n == 12
    assert seq.stages == len(sizes) + 1


def test_undecided_stops_at_max_samples_and_is_inconclusive() -> None:
    # A baseline at 0.95 and answers at 0.75: neither ruled out nor proven within 12 answers.
    seq = Sequencer({"a": _pooled(19, 20)}, POLICY)
    seq.first_targets(["a"])
    pattern = [True, True, True, False]
    n = 3
    while targets := seq.look(*_answers("a", (pattern * 5)[:n])):
        n = targets["a"]
    assert n == POLICY.max_samples
    assert seq.finish()[("a", "p")].verdict is Verdict.UNDECIDED


def test_undecided_prompts_in_order_once() -> None:
    # The next stage asks the prompts with an undecided comparison, in order and once each: b
    # (two open probes) and c; a is settled: its pool fails, so no drop of 0.5 is possible.
    summary = _pooled(20, 20).results["p"]
    pooled = {
        "b": PooledPrompt(runs=5, results={"p": summary, "q": summary}, text=None),
        "a": _pooled(0, 20),
        "c": _pooled(20, 20),
    }
    seq = Sequencer(pooled, POLICY)
    seq.first_targets(list(pooled))
    results, responses = _answers("b", [True] * 3)
    results += [r.model_copy(update={"probe_key": "q"}) for r in results]
    for more_results, more_responses in (_answers("a", [False] * 3), _answers("c", [True] * 3)):
        results += more_results
        responses += more_responses
    targets = seq.look(results, responses)
    verdicts = [d.verdict for d in seq.decisions if d is not None]
    open_, same = Verdict.UNDECIDED, Verdict.SAME
    assert verdicts == [open_, open_, same, open_]
    assert list(targets) == ["b", "c"]


def test_prompts_without_pool_are_built_not_compared() -> None:
    # Varied answers that all pass: asked in stages until the pool could show a drop of 0.5
    # (shows_drop: the exact power), never beyond baseline_samples; nothing is compared.
    policy = Policy(min_samples=3, max_samples=30, baseline_samples=40, top_up=True)
    seq = Sequencer({"new": None}, policy)
    n = seq.first_targets(["new"])["new"]
    sizes = [n]
    while targets := seq.look(*_answers("new", [True] * n)):
        n = targets["new"]
        sizes.append(n)
    assert sizes[0] == FIRST_BUILD and sizes == sorted(set(sizes))
    assert n <= policy.baseline_samples
    assert shows_drop(Counts(n, n), 1, policy)
    assert not shows_drop(Counts(n - 1, n - 1), 1, policy)
    assert seq.finish() == {}


def test_a_prompt_with_one_text_is_built_like_any_other() -> None:
    # Ten identical passing answers cannot show a model that turns random: the pool of a
    # deterministic prompt grows until the exact power holds, as a varied one's does.
    policy = Policy(min_samples=3, max_samples=30, baseline_samples=40, top_up=True)
    sizes = []
    for text in ("always this", None):
        seq = Sequencer({"new": None}, policy)
        n = seq.first_targets(["new"])["new"]
        while targets := seq.look(*_answers("new", [True] * n, text=text)):
            n = targets["new"]
        sizes.append(n)
    assert sizes[0] == sizes[1] > DETERMINISTIC_EVIDENCE


def test_a_prompt_no_probe_scores_stops_after_identical_answers() -> None:
    seq = Sequencer({"new": None}, BUILD)
    n = seq.first_targets(["new"])["new"]
    texts = [LLMResponse(prompt_id="new", provider_model_id="m", content="same", sample=i)
             for i in range(n)]  # fmt: skip
    assert n >= DETERMINISTIC_EVIDENCE
    assert seq.look([], texts) == {}
    varied = [r.model_copy(update={"content": f"text {r.sample}"}) for r in texts]
    assert Sequencer({"new": None}, BUILD).look([], varied) != {}


def test_building_stops_at_baseline_samples() -> None:
    # Answers that pass 3 times in 4 never make a 12-answer comparison detectable at 20 in all.
    policy = Policy(min_samples=3, max_samples=12, baseline_samples=20, top_up=True)
    seq = Sequencer({"new": None}, policy)
    n = seq.first_targets(["new"])["new"]
    while targets := seq.look(*_answers("new", (([True] * 3 + [False]) * 10)[:n])):
        n = targets["new"]
    assert n == 20


def test_a_run_that_may_be_promoted_tops_up_a_thin_pool() -> None:
    # A pool of 3 answers cannot show a drop: a pull request (no top-up) asks the comparison's
    # stages only; a push (top_up) also builds the pool towards baseline_samples.
    pooled = {"a": _pooled(3, 3)}
    pull = Sequencer(pooled, POLICY)
    pull.first_targets(["a"])
    assert pull.look(*_answers("a", [True] * 3)) == {"a": POLICY.next_size(3)}
    push = Sequencer(pooled, Policy(min_samples=3, max_samples=12, baseline_samples=30,
                                    top_up=True))  # fmt: skip
    push.first_targets(["a"])
    assert push.look(*_answers("a", [True] * 3)) == {"a": FIRST_BUILD}


def test_finish_before_any_look_is_an_error() -> None:
    seq = Sequencer({"a": _pooled(5, 5)}, POLICY)
    seq.keys = [("a", "p")]
    seq.decisions = [None]
    with pytest.raises(RuntimeError, match="looked at"):
        seq.finish()


def test_replay_reaches_the_live_decisions() -> None:
    # Live: answers are handed out stage by stage; replay: from the full recording afterwards.
    pooled = {"a": _pooled(18, 20), "b": _pooled(20, 20), "c": _pooled(19, 20)}
    outcomes = {"a": [False] * 12, "b": [True] * 12, "c": [True, True, False, True] * 3}
    live = Sequencer(pooled, POLICY)
    asked = live.first_targets(list(pooled))
    while True:
        results, responses = [], []
        for pid, n in asked.items():
            r, s = _answers(pid, outcomes[pid][:n])
            results += r
            responses += s
        targets = live.look(results, responses)
        if not targets:
            break
        asked.update(targets)
    recorded_results, recorded_responses = [], []
    for pid, n in asked.items():
        r, s = _answers(pid, outcomes[pid][:n])
        recorded_results += r
        recorded_responses += s
    decisions, stages = replay(pooled, POLICY, list(pooled), recorded_results, recorded_responses)
    assert decisions == live.finish()
    assert stages == live.stages
    assert {d.verdict for d in decisions.values()} >= {Verdict.REGRESSED, Verdict.SAME}


def test_decide_run_reads_the_procedure_from_the_run() -> None:
    from promptcanary.core.models import (
        AdaptiveSampling,
        BaselineSnapshot,
        CanaryRunResult,
        Provenance,
        ProviderConfig,
    )

    def run(outcomes: list[bool], info: AdaptiveSampling | None, run_id: str) -> CanaryRunResult:
        results, responses = _answers("a", outcomes)
        return CanaryRunResult(
            run_id=run_id, suite_name="s", provider=ProviderConfig(model_id="m"),
            probe_results=results, llm_responses=responses,
            provenance=Provenance(adaptive=info),
        )  # fmt: skip

    baseline = run([True] * 12 + [False] * 8, None, "base")
    info = AdaptiveSampling(min_samples=3, max_samples=12)
    snapshot = BaselineSnapshot.of_run(baseline)  # a pool of one: the baseline's own run
    assert decide_run(snapshot, 1, run([True] * 3, None, "fixed")) is None
    decided = decide_run(snapshot, 1, run([False] * 12, info, "auto"))
    assert decided is not None
    decisions, stages = decided.decisions, decided.stages
    assert decisions[("a", "p")].verdict is Verdict.REGRESSED
    assert decisions[("a", "p")].current.n == 12  # as in test_stages_until_a_regression_is_decided
    assert stages == 6


def test_comparison_fields_of_a_regression_and_an_undecided_one() -> None:
    from promptcanary.core.sampling.sequencer import comparison_fields
    from promptcanary.core.sampling.sequential import Counts, Decision

    regressed = Decision(Verdict.REGRESSED, Counts(95, 100), Counts(5, 20), 4000.0, 0.01, 0.002)
    fields = comparison_fields(regressed)
    assert fields["verdict"] == "regressed" and fields["regression"] is True
    assert (fields["baseline_samples"], fields["current_samples"]) == (100, 20)
    assert fields["e_value"] == 4000.0 and fields["p_value"] == 1 / 4000
    low, high = fields["pass_rate_ci"]  # type: ignore[misc]
    assert low < -0.7 < high < 0  # 25% vs 95%
    undecided = Decision(Verdict.UNDECIDED, Counts(19, 20), Counts(12, 12), 0.5, 3.0, 0.4)
    open_ = comparison_fields(undecided)
    assert open_["verdict"] == "inconclusive" and open_["regression"] is False
    assert open_["e_value"] == 3.0  # the pass rate went up: the evidence shown is for "better"


# ── runs as the pool's unit ─────────────────────────────────────────────────────


def _by_runs(runs: tuple[Counts, ...]) -> PooledPrompt:
    passes, n = sum(c.passes for c in runs), sum(c.n for c in runs)
    summary = ScoreSummary(n=n, passes=passes, score_sum=passes, score_sq_sum=passes)
    return PooledPrompt(runs=len(runs), results={"p": summary}, text=None, by_run={"p": runs})


def test_the_pool_keeps_each_runs_counts_newest_first() -> None:
    new = pool.entry_for(_run("new", {"a": ["ok", "no"]}, {}))
    old = pool.entry_for(_run("old", {"a": ["ok", "ok", "ok"]}, {}))
    pooled = pool_prompt([new, old], "a", None)
    assert pooled is not None
    assert [c.n for c in pooled.by_run[next(iter(pooled.results))]] == [2, 3]


def test_each_comparison_is_widened_by_the_spread_the_others_show() -> None:
    calm = (Counts(18, 20), Counts(18, 20), Counts(18, 20))
    wild = (Counts(20, 20), Counts(10, 20), Counts(19, 20))
    assert Sequencer({"a": _by_runs(calm), "b": _by_runs(calm)}, POLICY).spread.suite == 0.0
    reading = Sequencer({"a": _by_runs(wild), "b": _by_runs(calm)}, POLICY).spread
    assert reading.suite > 0.5
    # The calm comparison is widened by what the wild one shows; the wild one by the calm one's.
    assert reading.of(("b", "p")) > 0.5 and reading.of(("a", "p")) == 0.0
    given = Sequencer({"a": _by_runs(wild)}, POLICY, spread=0.3).spread
    assert given.suite == given.of(("a", "p")) == 0.3


def test_continuous_scores_do_not_dilute_the_spread() -> None:
    # Pass/fail runs that vary, beside a continuous score whose pass flag holds still from run to
    # run (its scores are not 0 or 1): the spread is read from the pass/fail comparison alone.
    wild = (Counts(20, 20), Counts(10, 20), Counts(19, 20))
    steady = (Counts(15, 20), Counts(15, 20), Counts(15, 20))
    scores = ScoreSummary(n=60, passes=45, score_sum=40.5, score_sq_sum=28.9)
    continuous = PooledPrompt(runs=3, results={"p": scores}, text=None, by_run={"p": steady})
    alone = Sequencer({"a": _by_runs(wild)}, POLICY).spread.suite
    assert Sequencer({"a": _by_runs(wild), "b": continuous}, POLICY).spread.suite == alone
    # The same steady counts as a pass/fail comparison do count (and pull the estimate down).
    assert Sequencer({"a": _by_runs(wild), "b": _by_runs(steady)}, POLICY).spread.suite < alone


def _final(
    pooled: PooledPrompt,
    rate: float,
    spread: float | None = None,
    others: Mapping[str, PooledPrompt] | None = None,
) -> Verdict:
    """The final verdict of one comparison whose answers today pass at ``rate``, evenly spread
    (``others``: more pooled prompts, not asked today, that the spread is read from)."""
    outcomes = [math.floor((i + 1) * rate) > math.floor(i * rate) for i in range(40)]
    policy = Policy(min_samples=3, max_samples=40)
    seq = Sequencer({"a": pooled, **(others or {})}, policy, spread=spread)
    seq.first_targets(["a"])
    n = 3
    while targets := seq.look(*_answers("a", outcomes[:n])):
        n = targets["a"]
    return seq.finish()[("a", "p")].verdict


def test_a_decline_absorbed_by_the_pool_is_flagged_against_its_oldest_runs() -> None:
    # The first push at 0.97, then promoted runs sliding to 0.60: the pool as a whole sits near
    # 0.76, the anchor (its oldest half) at 0.97; today answers at 0.65. (No spread: the
    # decline itself would look like one.)
    runs = (Counts(12, 20), Counts(13, 20), Counts(14, 20), Counts(15, 20), Counts(58, 60))
    summed = _by_runs(runs)
    assert _final(summed, 0.65, spread=0.0) is Verdict.REGRESSED
    one_binomial = PooledPrompt(summed.runs, summed.results, None)  # no runs: no anchor
    assert _final(one_binomial, 0.65, spread=0.0) is Verdict.SAME


def test_a_first_push_of_baseline_samples_stays_the_anchor() -> None:
    # A first push of 57 answers (baseline-samples) at 1.0, then six promoted runs of 20 that
    # slid to 0.5; today answers at 0.65. Half the pooled answers would take two of the slid runs
    # into the anchor (0.79) and call it "same"; the first push alone flags the decline.
    runs = (*[Counts(10, 20)] * 6, Counts(57, 57))
    assert _final(_by_runs(runs), 0.65, spread=0.0) is Verdict.REGRESSED


def test_a_spread_the_pool_shows_widens_the_comparison() -> None:
    # Pooled runs that vary (0.67-1.0) in this and another flaky comparison, and a run today at
    # 0.5: within what the runs showed.
    runs = (Counts(30, 30), Counts(20, 30), Counts(30, 30), Counts(21, 30), Counts(30, 30))
    other = {"b": _by_runs((Counts(21, 30), Counts(30, 30), Counts(29, 30), Counts(19, 30)))}
    assert _final(_by_runs(runs), 0.5, spread=0.0) is Verdict.REGRESSED
    assert Sequencer({"a": _by_runs(runs), **other}, POLICY).spread.of(("a", "p")) > 1.0
    assert _final(_by_runs(runs), 0.5, others=other) is not Verdict.REGRESSED
    # Alone, its own runs do not excuse it: their variation may be its own decline.
    assert _final(_by_runs(runs), 0.5) is Verdict.REGRESSED


def _run_to_the_end(seq: Sequencer, pattern: list[bool], shrunk: dict[str, float] | None) -> int:
    seq.first_targets(["a"])
    n = 3
    while targets := seq.look(*_answers("a", (pattern * 100)[:n]), attenuation=shrunk):
        n = targets["a"]
    return n


def test_a_shrunk_drop_is_chased_past_max_samples() -> None:
    # Baseline 0.8, answers at 0.6: as a judge hiding part of every drop would show a real
    # one. Exact pass flags stop at max_samples; shrunk ones ask until such a drop would show.
    pattern = [True, True, True, False, False]
    exact = Sequencer({"a": _pooled(160, 200)}, POLICY)
    assert _run_to_the_end(exact, pattern, None) == POLICY.max_samples
    assert exact.finish()[("a", "p")].verdict is Verdict.UNDECIDED
    shrunk = Sequencer({"a": _pooled(160, 200)}, POLICY)
    n = _run_to_the_end(shrunk, pattern, {"p": 0.5})
    limit = answers_to_show(Counts(160, 200), 1, POLICY, 0.5)
    assert POLICY.max_samples < n <= limit
    assert shrunk.finish()[("a", "p")].verdict is Verdict.REGRESSED


def test_an_attenuation_of_one_changes_nothing() -> None:
    pattern = [True, True, True, False]
    plain = Sequencer({"a": _pooled(19, 20)}, POLICY)
    exact = Sequencer({"a": _pooled(19, 20)}, POLICY)
    assert _run_to_the_end(plain, pattern, None) == _run_to_the_end(exact, pattern, {"p": 1.0})
    assert plain.finish() == exact.finish()


def test_decide_run_replays_with_the_runs_attenuation() -> None:
    from promptcanary.core.models import (
        AdaptiveSampling,
        BaselineSnapshot,
        CanaryRunResult,
        JudgeInfo,
        Provenance,
        ProviderConfig,
    )

    pattern = [True, True, True, False, False]  # 0.6 against a baseline of 0.8

    def run(outcomes: list[bool], provenance: Provenance, run_id: str) -> CanaryRunResult:
        results, responses = _answers("a", outcomes)
        return CanaryRunResult(
            run_id=run_id, suite_name="s", provider=ProviderConfig(model_id="m"),
            probe_results=results, llm_responses=responses, provenance=provenance,
        )  # fmt: skip

    snapshot = BaselineSnapshot.of_run(run([True] * 160 + [False] * 40, Provenance(), "base"))
    info = AdaptiveSampling(min_samples=3, max_samples=12)
    live = Sequencer({"a": _pooled(160, 200)}, POLICY)
    n = _run_to_the_end(live, pattern, {"p": 0.5})
    judge = JudgeInfo(attenuation={"p": 0.5})
    recorded = run((pattern * 100)[:n], Provenance(adaptive=info, judge=judge), "judged")
    decided = decide_run(snapshot, 1, recorded)
    assert decided is not None
    assert decided.decisions == live.finish()
    assert decided.decisions[("a", "p")].current.n == n > POLICY.max_samples
    # Without the attenuation the same recording is replayed as exact pass flags: 12 answers.
    plain = decide_run(
        snapshot, 1, recorded.model_copy(update={"provenance": Provenance(adaptive=info)})
    )
    assert plain is not None and plain.decisions[("a", "p")].current.n == POLICY.max_samples
