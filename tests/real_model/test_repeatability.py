"""Repeatability against a real model, and a real provider-side change.

Both run with the action's default sampling, ``samples: auto``, which decides against a *pool*
of promoted runs (``baseline-pool``): the baseline is therefore built the way a repository's
default branch builds it, by ``BASELINE_PUSHES`` pushes of the unchanged suite: one, a new
repository's first pull request. That push has no baseline and builds one, asking each prompt up
to ``baseline-samples`` answers (``BUILD_SAMPLES`` here, below the default derived from the
suite's size, so that the layer fits its time on 2 cores); it is promoted
(``update-baseline: always``).

**No change.** Ten of the 20 prompts in ``suites/repeatability.yaml`` (``PROMPTS``: temperature
0.8, so every answer varies; ``bench/real_model.py`` runs all 20) then run ``NO_CHANGE_RUNS``
times on a pull request against that one baseline, with the same server. Nothing changed, so every run that reports drift is a false alarm. With one
sample per prompt most runs did (4 of 4 when this layer was designed); the target with the
sequential procedure is at most 1 in 10, and at most 1 of the six runs here may report drift.

**Meaning.** The suite's free-text prompts (tag ``free-text``) also have their meaning compared
(``semantic_drift:`` with all-MiniLM-L6-v2 served beside the chat model): the baseline pool holds
each answer's vector, and each pull request compares today's answers with them. A no-change run
that reports a change of meaning on any prompt is a false alarm: at most ``MAX_MEANING_ALARMS`` of
the ``NO_CHANGE_RUNS``.

**Provider-side change.** The same weights behind the plain Gemma chat template instead of the
function-calling one: what a provider can change without telling anyone. The same suite against
the same baseline must report drift and name the regressed prompts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from scripts.local_model import LocalServer
from tests.e2e.runner import ActionResult
from tests.real_model.conftest import (
    RealHarness,
    harness_with_github,
    meaning_rows,
    read_pair,
    regressed_prompts,
    semantic_drift,
)

pytestmark = pytest.mark.real_model

SUITE = Path(__file__).with_name("suites") / "repeatability.yaml"
#: The prompts this layer runs: the tool prompt (the chat-template change must regress it), four
#: short facts and five free-text prompts. Half the suite, so that the layer fits CI's hour on a
#: slow 2-core day (the whole suite took 2,500 s of the layer's 3,230 there: each pull request
#: 244 s).
PROMPTS = (
    "weather-tool", "after-monday", "capital-france", "http-404", "kill-process",
    "reset-password", "refund-window", "greeting", "opening-hours", "two-plus-two",
)  # fmt: skip
#: The action's default sampling, written out so that the printed figures name it.
SAMPLING = {"samples": "auto"}
#: Pushes that build the baseline pool: a young repository's default branch (the pool holds up
#: to ``baseline-pool``, 20, runs once that many pushes happened).
BASELINE_PUSHES = 1
#: Answers per prompt the first push asks at most while it builds the baseline.
BUILD_SAMPLES = "20"
#: Six pull requests (ten, of all 20 prompts, until the layer neared CI's 60-minute line); three
#: clean-clone runs of ten saw 0 false alarms in 30, two of six (20 prompts, then 10) 0 in 12.
NO_CHANGE_RUNS = 6
#: The target is at most 1 false alarm in 10 runs; one in six is allowed so that CI does not
#: flake (at a true rate of 5% two or more come up in 3.3% of runs), yet it fails the
#: single-sample behaviour (nearly every run).
MAX_FALSE_ALARMS = 1
#: The issue's target for the meaning comparisons, asserted as it stands.
MAX_MEANING_ALARMS = 1
FREE_TEXT = "free-text"
#: Quiet runs: no comment, no check run; the pull request never updates the baseline.
#: ``max-samples`` 12 (default 60) keeps the pull requests within the layer's time on 2 cores:
#: a prompt still open at 12 answers ends inconclusive, never a false alarm.
RUN_INPUTS = {
    **SAMPLING,
    "max-samples": "12",
    "comment": "off",
    "check-run": "false",
    "fail-on": "never",
}
TOOL_PROMPT = "weather-tool"


def spent(result: ActionResult) -> tuple[float, str]:
    """Answers per prompt the run spent, and a note on how it sampled."""
    record = read_pair(result, "run.json")["provenance"]["adaptive"]
    per_prompt = record["requests"] / record["prompts"]
    if not record["pool_runs"]:  # the first push: no baseline, nothing to decide
        return per_prompt, f"{per_prompt:.2f} answers/prompt, no baseline yet"
    return per_prompt, (
        f"{per_prompt:.2f} answers/prompt in {record['stages']} stage(s) against a pool of "
        f"{record['pool_runs']} run(s), {result.outputs['inconclusive']} inconclusive"
    )


def layer_suite() -> str:
    """The suite's text with only ``PROMPTS`` (each of them found)."""
    suite = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    suite["prompts"] = [p for p in suite["prompts"] if p["id"] in PROMPTS]
    assert {p["id"] for p in suite["prompts"]} == set(PROMPTS), "a PROMPTS id is not in the suite"
    return yaml.safe_dump(suite, sort_keys=False)


@pytest.fixture(scope="module")
def baseline(
    tmp_path_factory: pytest.TempPathFactory,
    function_calling_server: LocalServer,
    embedding_server: LocalServer,
) -> Iterator[RealHarness]:
    """A workspace whose baseline pool is ``BASELINE_PUSHES`` pushes on the function-calling
    server, with the answers' vectors from the embedding server."""
    with harness_with_github(tmp_path_factory.mktemp("repeatability")) as harness:
        harness.write_suite(layer_suite() + semantic_drift(embedding_server, FREE_TEXT))
        for push in range(1, BASELINE_PUSHES + 1):
            result = harness.run_push(
                function_calling_server,
                {**RUN_INPUTS, "update-baseline": "always", "baseline-samples": BUILD_SAMPLES},
            )
            assert result.returncode == 0, result.log
            status = result.outputs["baseline-status"]
            assert status == ("created" if push == 1 else "updated"), result.log
            assert result.outputs["errors"] == "0", result.log
            print(
                f"\nbaseline push {push}: {status}, drift-detected="
                f"{result.outputs['drift-detected']}, {spent(result)[1]}"
            )
        yield harness


@pytest.mark.timeout(4800)
def test_no_change_runs_rarely_report_drift(
    baseline: RealHarness, function_calling_server: LocalServer
) -> None:
    alarms: list[tuple[int, list[str]]] = []
    meaning_alarms: list[tuple[int, list[str]]] = []
    verdicts: dict[str, int] = {}
    answers: list[float] = []
    for number in range(1, NO_CHANGE_RUNS + 1):
        result = baseline.run_pr(function_calling_server, RUN_INPUTS)
        assert result.returncode == 0, result.log
        assert result.outputs["baseline-status"] == "found", result.log
        drift = read_pair(result, "drift.json")
        assert drift["statistical"] is True
        # Decided sequentially against the whole pool, not as a fixed-sample run.
        assert drift["adaptive"]["pool_runs"] == BASELINE_PUSHES, drift["adaptive"]
        per_prompt, note = spent(result)
        answers.append(per_prompt)
        regressed = regressed_prompts(result)
        detected = result.outputs["drift-detected"]
        meaning = meaning_rows(result)
        assert meaning, result.log  # the free-text prompts were compared
        for row in meaning.values():
            assert row["semantic"]["reason"] is None, row  # vectors of one model, pooled
            verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
        changed = sorted(p for p, row in meaning.items() if row["verdict"] == "changed")
        print(
            f"\n  run {number}: drift-detected={detected} {regressed}, meaning changed "
            f"{changed}, {note}"
        )
        if detected == "true":
            alarms.append((number, regressed))
        if changed:
            meaning_alarms.append((number, changed))
    print(
        f"\nno-change repeatability ({SAMPLING}, pool of {BASELINE_PUSHES} pushes, temperature "
        f"0.8, {len(PROMPTS)} prompts): {len(alarms)} of {NO_CHANGE_RUNS} runs reported drift; "
        f"answers per prompt {min(answers):.2f}-{max(answers):.2f} (mean {sum(answers) / len(answers):.2f})"
        + "".join(f"\n  run {n}: regressed {prompts}" for n, prompts in alarms)
        + f"\nmeaning ({FREE_TEXT} prompts, all-MiniLM-L6-v2): {len(meaning_alarms)} of "
        f"{NO_CHANGE_RUNS} runs reported a change of meaning; verdicts {verdicts}"
        + "".join(f"\n  run {n}: meaning changed {prompts}" for n, prompts in meaning_alarms)
    )
    assert len(alarms) <= MAX_FALSE_ALARMS, alarms
    assert len(meaning_alarms) <= MAX_MEANING_ALARMS, meaning_alarms


@pytest.mark.timeout(1800)
def test_a_chat_template_change_on_the_server_is_reported(
    baseline: RealHarness, plain_gemma_server: LocalServer
) -> None:
    result = baseline.run_pr(plain_gemma_server, RUN_INPUTS)

    assert result.returncode == 0, result.log
    regressed = regressed_prompts(result)
    print(
        f"\nprovider-side change (chat template chatml-function-calling -> gemma, {SAMPLING}, "
        f"pool of {BASELINE_PUSHES} pushes): drift-detected={result.outputs['drift-detected']}, "
        f"severity {result.outputs['severity']}, regressed prompts {regressed}, "
        f"{spent(result)[1]}"
    )
    assert result.outputs["drift-detected"] == "true", result.log
    # The plain template has no tools: the tool prompt loses its native call.
    assert TOOL_PROMPT in regressed
    # The regressed prompts are named where a reviewer reads them.
    for prompt_id in regressed:
        assert f"`{prompt_id}`" in result.summary, prompt_id
