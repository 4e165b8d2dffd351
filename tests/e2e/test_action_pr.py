"""End to end on pull requests: the sticky comment, the check run and its annotations, outputs,
the gate, the comment size limit, and several suites times several models."""

from __future__ import annotations

import json
import re

import pytest

from promptcanary.core.sampling.sequential import DETERMINISTIC_EVIDENCE
from tests.e2e.conftest import (
    HEAD_SHA,
    MODEL,
    PR_NUMBER,
    ActionHarness,
    line_of,
    suite_text,
)
from tests.e2e.runner import ActionResult

pytestmark = pytest.mark.e2e

MARKER = "<!-- promptcanary-action:comment-id=default -->"
BASELINE_INPUTS = {"baseline": "path", "update-baseline": "always"}

PROMPTS = """\
  - id: refund-policy
    text: What is the refund window?
    probes:
      - type: keyword_presence
        id: mentions-days
        required_keywords: [30 days]
  - id: greeting
    text: Greet the customer
"""
# Suite-wide: applies to both prompts, so a regression of it points at the prompt's own line.
SUITE_PROBES = """\
  - type: response_length
    id: short
    max_chars: 80
"""


def write_support_suite(harness: ActionHarness) -> str:
    """The two-prompt suite in canary.yaml, with answers scripted to drift on demand."""
    text = suite_text("support", harness.llm.url, PROMPTS, probes=SUITE_PROBES)
    harness.write("canary.yaml", text)
    harness.llm.script(
        "refund window",
        content="You can ask for a refund within 30 days.",
        drifted={"content": "Refunds depend on the product."},
    )
    harness.llm.script(
        "Greet the customer",
        content="Hello, how can I help?",
        drifted={"content": "Hello! " + "We are delighted to welcome you today. " * 12},
    )
    return text


def create_baseline(harness: ActionHarness) -> None:
    result = harness.run_push(BASELINE_INPUTS)
    assert result.returncode == 0, result.log
    assert result.outputs["baseline-status"] == "created", result.log


def test_pr_without_drift_comments_and_passes_the_check(harness: ActionHarness) -> None:
    write_support_suite(harness)
    create_baseline(harness)

    result = harness.run_pr({"baseline": "path"})

    assert result.returncode == 0, result.log
    comments = harness.github.comments(PR_NUMBER)
    assert len(comments) == 1
    body = comments[0].body
    assert body.splitlines()[0] == "**✅ No drift in 1 compared model run**"
    assert MARKER in body
    assert "| support | `openai/fake` |" in body

    # The check run is created while the suite runs, then completed with the verdict.
    check = harness.check_run()
    assert check.head_sha == HEAD_SHA
    requests = harness.github.requests
    [create] = [
        r
        for r in harness.github.requests_to("POST", r"/check-runs$")
        if r.json["head_sha"] == HEAD_SHA
    ]
    updates = harness.github.requests_to("PATCH", rf"/check-runs/{check.id}$")
    assert create.json["status"] == "in_progress"
    assert updates and requests.index(create) < requests.index(updates[0])
    assert (check.status, check.conclusion) == ("completed", "success")
    assert check.annotations == []

    out = result.outputs
    assert out["overall-score"] == "1.0000"
    assert out["baseline-score"] == "1.0000"
    assert (out["regressions"], out["drift-detected"], out["baseline-status"]) == (
        "0",
        "false",
        "found",
    )
    assert out["comment-url"].endswith(f"/issues/{PR_NUMBER}#issuecomment-{comments[0].id}")
    assert out["check-run-url"].endswith(f"/runs/{check.id}")
    # Relative to the workspace: /github/workspace inside the container is not the host's path.
    assert (out["report-dir"], out["comment-file"]) == (
        "promptcanary-report",
        "promptcanary-report/comment.md",
    )
    assert (
        result.output_path("comment-file")
        .read_text(encoding="utf-8")
        .startswith(body.splitlines()[0])
    )
    assert "No drift" in result.summary


def test_pr_rerun_updates_the_same_comment(harness: ActionHarness) -> None:
    write_support_suite(harness)
    first = harness.run_pr({"baseline": "none"})
    assert first.returncode == 0, first.log
    [comment] = harness.github.comments(PR_NUMBER)
    first_body = comment.body

    # Someone else's comment in between must not be taken for ours.
    harness.github.add_comment(PR_NUMBER, "LGTM")
    harness.llm.drift = True  # a different body, so the edit is visible
    second = harness.run_pr({"baseline": "none"}, head_sha="d4" * 20)

    assert second.returncode == 0, second.log
    ours = [c for c in harness.github.comments(PR_NUMBER) if MARKER in c.body]
    assert [c.id for c in ours] == [comment.id]
    assert ours[0].body != first_body
    assert "`d4d4d4d4d4d4`" in ours[0].body
    assert len(harness.github.requests_to("POST", rf"/issues/{PR_NUMBER}/comments$")) == 1
    assert len(harness.github.requests_to("PATCH", r"/issues/comments/\d+$")) == 1
    assert first.outputs["comment-url"] == second.outputs["comment-url"]


def _drift_run(harness: ActionHarness, fail_on: str | None = None) -> ActionResult:
    inputs = {"baseline": "path"}
    if fail_on is not None:
        inputs["fail-on"] = fail_on
    return harness.run_pr(inputs)


def test_pr_with_drift_reports_regressions_at_the_suite_lines(harness: ActionHarness) -> None:
    suite = write_support_suite(harness)
    create_baseline(harness)
    harness.llm.drift = True

    result = _drift_run(harness)

    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == "2"
    assert result.outputs["drift-detected"] == "true"
    [comment] = harness.github.comments(PR_NUMBER)
    body = comment.body
    # The verdict is markdown-escaped like any text: "(severity" is written "\\(severity".
    assert body.startswith("**❌ 2 regressions in 1 of 1 model run \\(severity ")
    assert "#### Regressions: support on `openai/fake`" in body
    # samples: auto (the default): a deterministic model that changed its answer; its pass flags
    # decide, after the answers it took (baseline → this run). Each regression row links its
    # prompt to the prompt's line at the commit under test.
    blob = f"https://github.com/octo-org/octo-repo/blob/{HEAD_SHA}/canary.yaml"
    refund, greeting = line_of(suite, "- id: refund-policy"), line_of(suite, "- id: greeting")
    # The pool was built as for any prompt (identical answers are no shortcut): the same size
    # for both, more than the evidence the changed-answer rule asks.
    pools = [
        re.search(rf"\| \[`{prompt}`\]\({re.escape(blob)}#L{line}\) \| `{probe}` \| "
                  r"100% → 0% \| (\d+) → 3 \|", body)
        for prompt, line, probe in (
            ("refund-policy", refund, "mentions-days"), ("greeting", greeting, "short")
        )
    ]  # fmt: skip
    assert all(pools), body
    sizes = {int(m.group(1)) for m in pools if m}
    assert len(sizes) == 1 and sizes.pop() > DETERMINISTIC_EVIDENCE
    assert "Responses to refund-policy" in body  # the folded before/after diff

    check = harness.check_run()
    assert check.conclusion == "failure"
    where = {
        (a["start_line"], a["annotation_level"])
        for a in check.annotations
        if a["path"] == "canary.yaml"
    }
    probe_line = line_of(suite, "- type: keyword_presence")
    prompt_line = line_of(suite, "- id: greeting")
    assert where == {(probe_line, "failure"), (prompt_line, "failure")}
    assert all(a["path"] == "canary.yaml" for a in check.annotations)
    titles = sorted(a["title"] for a in check.annotations)
    assert titles == [
        f"Regression: greeting / short ({MODEL})",
        f"Regression: refund-policy / mentions-days ({MODEL})",
    ]


def test_pr_with_drift_and_fail_on_never_passes_with_a_neutral_check(
    harness: ActionHarness,
) -> None:
    write_support_suite(harness)
    create_baseline(harness)
    harness.llm.drift = True

    result = _drift_run(harness, fail_on="never")

    assert result.returncode == 0, result.log
    assert result.outputs["regressions"] == "2"
    assert harness.check_run().conclusion == "neutral"
    [comment] = harness.github.comments(PR_NUMBER)
    assert comment.body.startswith("**⚠️ 2 regression")


def test_an_oversized_comment_is_cut_and_says_where_the_rest_is(harness: ActionHarness) -> None:
    count = 60
    prompts = "".join(
        f"  - id: topic-{n:02d}\n    text: Explain topic {n:02d} briefly\n" for n in range(count)
    )
    probes = "  - type: response_length\n    id: brief\n    max_chars: 100\n"
    harness.write("canary.yaml", suite_text("long", harness.llm.url, prompts, probes=probes))
    long_answer = "".join(
        f"Paragraph {i}: the drifted answer rambles on and on. " for i in range(80)
    )
    harness.llm.script(
        "Explain topic",
        content="Short answer.",
        drifted={"content": lambda record: record["last_user"] + " " + long_answer},
    )
    create_baseline(harness)
    harness.llm.drift = True

    result = harness.run_pr({"baseline": "path"})

    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == str(count)
    [comment] = harness.github.comments(PR_NUMBER)
    assert len(comment.body) <= 65_536
    assert MARKER in comment.body
    assert "Not everything fits here" in comment.body
    assert "moved to the job summary and the report files" in comment.body
    # What the comment left out is in the job summary and the comment file equals the comment.
    assert len(result.summary) > len(comment.body)
    assert f"topic-{count - 1:02d}" in result.summary
    comment_file = result.output_path("comment-file").read_text(encoding="utf-8")
    assert comment_file == comment.body


def test_two_suites_on_two_models_cover_every_pair(harness: ActionHarness) -> None:
    harness.write(
        "suites/billing.yaml",
        suite_text(
            "billing",
            None,
            "  - id: invoice\n    text: Total of the invoice?\n    probes:\n"
            "      - type: keyword_presence\n        required_keywords: [EUR]\n"
            "  - id: currency\n    text: Which currency?\n    probes:\n"
            "      - type: keyword_presence\n        required_keywords: [EUR]\n",
        ),
    )
    harness.write(
        "suites/tone.yaml",
        suite_text(
            "tone",
            None,
            "  - id: thanks\n    text: Thank the customer\n    probes:\n"
            "      - type: keyword_presence\n        required_keywords: [thank]\n",
        ),
    )

    def drifted_billing(record: dict) -> str:
        # fake-b loses the currency everywhere, fake-a only on the invoice total.
        if record["model"] == "fake-b" or "invoice" in record["last_user"]:
            return "It is 1250."
        return "1250 EUR"

    harness.llm.script("invoice", content="1250 EUR", drifted={"content": drifted_billing})
    harness.llm.script("currency", content="EUR", drifted={"content": drifted_billing})
    harness.llm.script("Thank", content="We thank you!")
    inputs = {
        "config": "suites/*.yaml",
        "models": "openai/fake-a, openai/fake-b",
        "baseline": "path",
    }
    harness.env["OPENAI_API_BASE"] = harness.llm.url
    created = harness.run_push({**inputs, "update-baseline": "always"})
    assert created.returncode == 0, created.log
    harness.llm.drift = True

    result = harness.run_pr(inputs)

    assert result.returncode == 1, result.log
    [comment] = harness.github.comments(PR_NUMBER)
    rows = [
        line
        for line in comment.body.splitlines()
        if line.startswith("| billing |") or line.startswith("| tone |")
    ]
    assert sorted(row.split(" | ")[0:2] for row in rows) == [
        ["| billing", "`openai/fake-a`"],
        ["| billing", "`openai/fake-b`"],
        ["| tone", "`openai/fake-a`"],
        ["| tone", "`openai/fake-b`"],
    ]
    outcome = json.loads((result.report_dir / "outcome.json").read_text(encoding="utf-8"))
    per_pair = {(p["suite"], p["model"]): p["regressions"] for p in outcome["pairs"]}
    assert per_pair == {
        ("billing", "openai/fake-a"): 1,
        ("billing", "openai/fake-b"): 2,
        ("tone", "openai/fake-a"): 0,
        ("tone", "openai/fake-b"): 0,
    }
    assert result.outputs["regressions"] == "3"
    ranks = ["none", "low", "medium", "high", "critical"]
    worst = max((p["severity"] for p in outcome["pairs"]), key=ranks.index)
    assert worst != "none"
    assert result.outputs["severity"] == worst
    assert {p["baseline_status"] for p in outcome["pairs"]} == {"found"}
