"""End to end: what the reports show beyond the verdict — the score trend from the baseline
history, latency / tokens / cost with the usage gates, and links from regressions to the suite."""

from __future__ import annotations

import re

import pytest

from promptcanary_action.baselines.branch import BranchBackend
from tests.e2e.conftest import HEAD_SHA, MODEL, PR_NUMBER, ActionHarness, line_of, suite_text
from tests.e2e.runner import DEFAULT_REPOSITORY
from tests.e2e.test_action_pr import PROMPTS
from tests.fakes.git_fixtures import GitWorkspace

pytestmark = pytest.mark.e2e

# A model id Mermaid would misread if it reached the chart as it is.
HOSTILE_MODEL = 'openai/fake;"v2"'
LINE_RE = re.compile(r'^\s*line "([^"]*)" \[([^\]]*)\]$', re.MULTILINE)
REFUND = "You can ask for a refund within 30 days of purchase."
HELLO = "Hello, how can I help you today?"


def mermaid_blocks(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)\n```", markdown, flags=re.DOTALL)


def comment_body(harness: ActionHarness) -> str:
    comments = harness.github.comments(PR_NUMBER)
    assert len(comments) == 1
    return str(comments[0].body)


def script_answers(harness: ActionHarness, *, drifted: dict[str, dict[str, object]]) -> None:
    harness.llm.script("refund window", content=REFUND, drifted=drifted.get("refund"))
    harness.llm.script("Greet the customer", content=HELLO, drifted=drifted.get("greeting"))


def test_five_promotions_on_the_branch_store_draw_six_points_per_model(
    git_harness: ActionHarness, git_workspace: GitWorkspace
) -> None:
    harness = git_harness
    models = f"models:\n  - model: {MODEL}\n    api_base: {harness.llm.url}\n"
    models += f"  - model: '{HOSTILE_MODEL}'\n    api_base: {harness.llm.url}\n"
    suite = f"name: support\n{models}prompts:\n{PROMPTS}"
    script_answers(harness, drifted={})
    git_workspace.commit_file("canary.yaml", suite, "Add canaries")
    git_workspace.run("push", "--quiet", "origin", "main")
    first = harness.run_push({"baseline": "branch"})
    assert first.returncode == 0 and first.outputs["baseline-status"] == "created", first.log
    # Four more promotions through the store's own code (real git, same data branch).
    store = BranchBackend.for_workspace(git_workspace.path)
    for number in range(1, 5):
        for model in (MODEL, HOSTILE_MODEL):
            snapshot = store.load("support", model)
            assert snapshot is not None
            store.save(snapshot, sha=f"{number:02x}" * 20, ref="main", regressions=0)

    result = harness.run_pr({"baseline": "branch"})

    assert result.returncode == 0, result.log
    body = comment_body(harness)
    (chart,) = mermaid_blocks(body)
    assert "\nxychart-beta\n" in chart
    lines = dict(LINE_RE.findall(chart))
    assert set(lines) == {MODEL, "openai/fake__v2_"}  # ';' and '"' cannot break the chart
    assert all(len(data.split(",")) == 6 for data in lines.values())
    x_axis = next(line for line in chart.splitlines() if line.strip().startswith("x-axis"))
    assert x_axis.count('"') == 12 and '"this run"' in x_axis


def test_no_history_no_chart_and_a_long_history_draws_only_the_last_points(
    harness: ActionHarness,
) -> None:
    harness.write("canary.yaml", suite_text("support", harness.llm.url, PROMPTS))
    script_answers(harness, drifted={})
    inputs = {"baseline": "path", "update-baseline": "always"}
    created = harness.run_push(inputs)
    assert created.returncode == 0, created.log
    history = harness.workspace / ".promptcanary/baselines/support/openai-fake/history.jsonl"
    history.unlink()

    without = harness.run_pr({"baseline": "path"})

    assert without.returncode == 0, without.log
    assert mermaid_blocks(comment_body(harness)) == []

    record = '{"sha":"%040x","time":"2024-01-01T00:%02d:%02d+00:00","overall_score":%.3f}\n'
    history.write_text(
        "".join(record % (i, i // 60, i % 60, 0.5 + i / 1000) for i in range(200)),
        encoding="utf-8",
    )
    drawn = harness.run_pr({"baseline": "path", "trend-points": "5"})

    assert drawn.returncode == 0, drawn.log
    (chart,) = mermaid_blocks(comment_body(harness))
    (data,) = [d for _, d in LINE_RE.findall(chart)]
    assert data.split(", ") == ["69.5", "69.6", "69.7", "69.8", "69.9", "100.0"]


def test_doubled_answers_slower_replies_and_the_token_gate(harness: ActionHarness) -> None:
    text = suite_text("support", harness.llm.url, PROMPTS)
    harness.write("canary.yaml", text)
    script_answers(
        harness,
        drifted={
            # Twice as long (and the refund answer loses its keyword: a regression too).
            "refund": {"content": REFUND.replace("30 days", "a month") * 2, "latency": 2.0},
            "greeting": {"content": f"{HELLO} {HELLO}", "latency": 2.0},
        },
    )
    created = harness.run_push({"baseline": "path"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True

    result = harness.run_pr({"baseline": "path", "fail-on": "never", "max-token-increase": "50"})

    # fail-on: never ignores the probe regression; the token gate alone fails the step.
    assert result.returncode == 1, result.log
    body = comment_body(harness)
    shown = body.replace("\\", "")  # markdown escapes removed: the text a reader sees
    assert "Usage limits exceeded" in shown
    assert re.search(r"completion tokens per answer rose \+\d+\.\d%.*max-token-increase 50%", shown)
    assert result.outputs["usage-findings"] == "1"
    usage_row = next(line for line in body.splitlines() if line.startswith(f"| `{MODEL}` |"))
    p95 = usage_row.split("|")[3]
    # The p95 latency and its change are shown (the server waited 2 s before each answer; the
    # baseline's own latency depends on the machine's load, so only the current one is pinned).
    assert re.fullmatch(r" \d\\.\d\d s \(\\[+-]\d+%\) ", p95), usage_row
    assert float(result.outputs["latency-p95-ms"]) >= 2000

    # The regression row links to the prompt's line in the suite file at the run's commit.
    link = (
        f"https://github.com/{DEFAULT_REPOSITORY}/blob/{HEAD_SHA}/canary.yaml"
        f"#L{line_of(text, '- id: refund-policy')}"
    )
    regression_rows = [line for line in body.splitlines() if "mentions-days" in line]
    assert regression_rows and all(link in row for row in regression_rows)
