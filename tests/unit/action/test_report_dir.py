"""The report folder, the step outputs and the combined baseline status."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptcanary.core.comparator import compare
from promptcanary.core.config.schema import suite_from_text
from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.suite import CanarySuite
from promptcanary_action.baselines.history import history_record
from promptcanary_action.outcome import BaselineStatus, PairOutcome, StepOutcome, build_outcome
from promptcanary_action.rejudge import rejudge
from promptcanary_action.render import render_comment
from promptcanary_action.report_dir import (
    STEP_FILE,
    combined_status,
    pair_dir,
    set_outputs,
    write_reports,
)
from promptcanary_action.settings import Settings
from promptcanary_action.workflow import Workflow
from tests.fakes.provider_fake import FakeProvider
from tests.unit.action.outcomes import judged, push_activity
from tests.unit.core.render.test_html import page_data

ROOT = Path(__file__).resolve().parents[3]
SECRET = "sk-live-do-not-leak-123"

SUITE = suite_from_text(
    """
name: Demo Suite
probes:
  - type: keyword_presence
    required_keywords: [ok]
prompts:
  - {id: p1, text: one}
  - {id: p2, text: two}
""",
    suite_class=CanarySuite,
)


def real_run(model: str, answers: dict[str, str]) -> CanaryRunResult:
    return SUITE.run(
        # A credential among the call parameters, as a suite's model entry may carry one.
        FakeProvider(
            model, answers, {"api_key": SECRET, "extra_headers": {"Authorization": SECRET}}
        ),
        show_progress=False,
        samples=1,
    )


def pair(
    model: str,
    *,
    baseline: dict[str, str] | None,
    current: dict[str, str],
    status: BaselineStatus = BaselineStatus.FOUND,
) -> PairOutcome:
    run = real_run(model, current)
    drift = base_run = None
    if baseline is not None:
        base_run = real_run(model, baseline)
        drift = compare(BaselineSnapshot.of_run(base_run), run)
    return judged(
        PairOutcome(
            suite_name=SUITE.name,
            suite_file="canary.yaml",
            model=model,
            run=run,
            drift=drift,
            baseline_run=base_run,
            baseline_status=status,
        )
    )


OK = {"p1": "ok", "p2": "ok"}
HALF = {"p1": "ok", "p2": "nope"}


def outcome(pairs: list[PairOutcome]) -> StepOutcome:
    return StepOutcome(
        pairs=pairs,
        fail_on="regression",
        gate_failed=any(p.gate_failed for p in pairs),
        verdict="❌ something",
        warnings=["a warning"],
        pr_number=12,
        sha="abc123",
        comment_id="nightly",
    )


def read_outputs(path: Path) -> dict[str, str]:
    """Parse GITHUB_OUTPUT's ``name<<delimiter`` blocks."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, delimiter = lines[i].split("<<", 1)
        end = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return values


# ── write_reports ───────────────────────────────────────────────────────────


def test_write_reports_writes_every_file(tmp_path: Path) -> None:
    drifted = pair("openai/gpt-4o", baseline=OK, current=HALF)
    fresh = pair("local/model", baseline=None, current=OK, status=BaselineStatus.CREATED)
    out = outcome([drifted, fresh])
    files = write_reports(out, tmp_path / "report", "COMMENT BODY", "SUMMARY BODY")

    assert files.comment.read_text(encoding="utf-8") == "COMMENT BODY"
    assert files.summary.read_text(encoding="utf-8") == "SUMMARY BODY"
    first = tmp_path / "report" / "demo-suite" / "openai-gpt-4o"
    second = tmp_path / "report" / "demo-suite" / "local-model"
    assert pair_dir(tmp_path / "report", drifted) == first
    assert sorted(p.name for p in first.iterdir()) == ["drift.json", "run.json", "snapshot.json"]
    assert sorted(p.name for p in second.iterdir()) == ["run.json", "snapshot.json"]
    assert files.snapshots == [first / "snapshot.json", second / "snapshot.json"]

    run = CanaryRunResult.model_validate_json((first / "run.json").read_bytes())
    assert run.run_id == drifted.run.run_id
    drift = json.loads((first / "drift.json").read_text(encoding="utf-8"))
    assert [c["prompt_id"] for c in drift["regressions"]] == ["p2"]
    snapshot = BaselineSnapshot.model_validate_json((first / "snapshot.json").read_bytes())
    assert snapshot.run_result.run_id == drifted.run.run_id
    assert snapshot.provider.model_id == "openai/gpt-4o"

    summary = json.loads((tmp_path / "report" / "outcome.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "❌ something"
    assert summary["gate_failed"] is True
    assert summary["severity"] == out.severity.value
    assert summary["pr_number"] == 12 and summary["comment_id"] == "nightly"
    assert [(p["model"], p["regressions"], p["baseline_status"]) for p in summary["pairs"]] == [
        ("openai/gpt-4o", 1, "found"),
        ("local/model", 0, "created"),
    ]
    assert summary["pairs"][1]["baseline_score"] is None
    assert summary["pairs"][0]["pass_rate"] == pytest.approx(0.5)


def test_step_json_round_trips_into_a_step_outcome(tmp_path: Path) -> None:
    out = outcome([pair("m", baseline=OK, current=HALF)])
    write_reports(out, tmp_path, "c", "s")
    back = StepOutcome.model_validate_json((tmp_path / STEP_FILE).read_bytes())
    assert back.model_dump(mode="json") == out.model_dump(mode="json")
    assert back.regression_count == 1
    assert back.pairs[0].response_text("p2") == "nope"
    assert back.pairs[0].response_text("p2", baseline=True) == "ok"


def verdict_of(outcome: StepOutcome) -> tuple[object, ...]:
    return (outcome.gate_failed, outcome.untrustworthy, outcome.verdict, outcome.drift_detected)


def test_a_stored_step_builds_into_an_outcome_with_the_same_verdict(tmp_path: Path) -> None:
    pairs = [pair("a", baseline=OK, current=HALF), pair("b", baseline=OK, current=OK)]
    out = build_outcome(pairs, Settings(), warnings=[])
    assert out.gate_failed and out.drift_detected  # a verdict worth carrying
    write_reports(out, tmp_path, "c", "s")
    back = StepOutcome.model_validate_json((tmp_path / STEP_FILE).read_bytes())
    assert verdict_of(build_outcome(back.pairs, Settings(), warnings=[])) == verdict_of(out)


def test_an_older_step_json_without_the_pairs_decisions_loads_and_is_judged_alike(
    tmp_path: Path,
) -> None:
    # Re-judging (a label change) and mode: merge read a step.json an older version may have
    # written, before the pairs kept the engine's decisions: they judge its results again.
    out = build_outcome([pair("a", baseline=OK, current=HALF)], Settings(), warnings=[])
    write_reports(out, tmp_path, "c", "s")
    data = json.loads((tmp_path / STEP_FILE).read_text(encoding="utf-8"))
    for stored in data["pairs"]:
        for name in ("gate_failed", "untrustworthy", "unapproved", "gated_severity"):
            del stored[name]
    older = StepOutcome.model_validate(data)
    again = [rejudge(p, Settings(), push_activity(), None) for p in older.pairs]
    assert verdict_of(build_outcome(again, Settings(), warnings=[])) == verdict_of(out)


def page_tags(html: str) -> dict[str, list[str]]:
    """Prompt id → its tags, as the report page's data gives them to the tag filter."""
    (pair,) = page_data(html)["pairs"]
    return dict(zip(pair["prompts"], pair["tags"], strict=True))


def test_the_page_of_the_step_carries_each_prompts_tags(tmp_path: Path) -> None:
    tagged = pair("m", baseline=OK, current=HALF).model_copy(
        update={"prompt_tags": {"p2": ["billing", "json"]}}
    )
    write_reports(outcome([tagged]), tmp_path, "c", "s")
    tags = page_tags((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert tags == {"p1": [], "p2": ["billing", "json"]}


def test_no_secret_reaches_any_report_file(tmp_path: Path) -> None:
    out = outcome([pair("m", baseline=OK, current=HALF)])
    write_reports(out, tmp_path, "c", "s")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 8  # report.html included
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path
    snapshot = json.loads((tmp_path / "demo-suite" / "m" / "snapshot.json").read_text())
    assert snapshot["provider"]["extra_params"]["api_key"] == "***"
    assert snapshot["provider"]["extra_params"]["extra_headers"]["Authorization"] == "***"


def test_rewriting_the_folder_leaves_no_temporary_files(tmp_path: Path) -> None:
    out = outcome([pair("m", baseline=OK, current=HALF)])
    write_reports(out, tmp_path, "c", "s")
    write_reports(out, tmp_path, "c2", "s2")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert (tmp_path / "comment.md").read_text(encoding="utf-8") == "c2"


def test_models_with_one_slug_get_their_own_folders(tmp_path: Path) -> None:
    # Long ids (Bedrock ARNs) share their first 60 slug characters; case differs only in case.
    arn = "bedrock/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic."
    pairs = [
        pair(arn + "claude-3-5-sonnet", baseline=None, current=OK),
        pair(arn + "claude-3-haiku", baseline=None, current=HALF),
        pair("openai/GPT-4o", baseline=None, current=OK),
        pair("openai/gpt-4o", baseline=None, current=HALF),
    ]
    files = write_reports(outcome(pairs), tmp_path / "report", "c", "s")

    assert len(set(files.snapshots)) == 4
    for p, snapshot in zip(pairs, files.snapshots, strict=True):
        run = CanaryRunResult.model_validate_json((snapshot.parent / "run.json").read_bytes())
        assert run.run_id == p.run.run_id
    # The first pair keeps the plain folder name.
    assert files.snapshots[2].parent.name == "openai-gpt-4o"


# ── set_outputs ─────────────────────────────────────────────────────────────


def action_outputs() -> set[str]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return set(data["outputs"])


def test_set_outputs_sets_every_output_but_the_urls(tmp_path: Path) -> None:
    drifted = pair("a", baseline=OK, current=HALF)
    clean = pair("b", baseline=HALF, current=HALF, status=BaselineStatus.UPDATED)
    out = outcome([drifted, clean])
    files = write_reports(out, tmp_path / "report", "c", "s")
    output_file = tmp_path / "github_output"
    output_file.touch()
    set_outputs(Workflow(io.StringIO(), output_file), out, files)
    values = read_outputs(output_file)

    assert set(values) == action_outputs() - {"comment-url", "check-run-url"}
    # drifted: baseline 1.0 → current 0.5; clean: 0.5 → 0.5. Means over the pairs.
    assert values["overall-score"] == "0.5000"
    assert values["baseline-score"] == "0.7500"
    assert values["score-delta"] == "-0.2500"
    assert values["pass-rate"] == "0.5000"
    assert values["regressions"] == "1"
    assert values["improvements"] == "0"
    assert values["errors"] == "0"
    assert values["severity"] == out.severity.value != "none"
    assert values["drift-detected"] == "true"
    assert values["baseline-status"] == "updated"
    assert values["report-dir"] == str(tmp_path / "report")
    assert values["snapshot-path"].split("\n") == [str(p) for p in files.snapshots]
    assert values["comment-file"] == str(tmp_path / "report" / "comment.md")
    assert values["summary"] == "❌ something"


def test_path_outputs_are_relative_to_the_workspace(tmp_path: Path) -> None:
    # A Docker action sees the workspace at /github/workspace; the steps after it see the host
    # path. Only a workspace-relative path means the same file to both.
    workspace = tmp_path / "github" / "workspace"
    out = outcome([pair("a", baseline=OK, current=OK)])
    files = write_reports(out, workspace / "sub" / "report", "c", "s")
    workflow = Workflow(io.StringIO())
    set_outputs(workflow, out, files, workspace=workspace)

    assert workflow.outputs["report-dir"] == "sub/report"
    assert workflow.outputs["comment-file"] == "sub/report/comment.md"
    assert workflow.outputs["snapshot-path"] == "sub/report/demo-suite/a/snapshot.json"


def test_path_outputs_outside_the_workspace_stay_absolute(tmp_path: Path) -> None:
    out = outcome([pair("a", baseline=OK, current=OK)])
    files = write_reports(out, tmp_path / "elsewhere", "c", "s")
    workflow = Workflow(io.StringIO())
    set_outputs(workflow, out, files, workspace=tmp_path / "workspace")

    assert workflow.outputs["report-dir"] == str(tmp_path / "elsewhere")


def test_outputs_without_any_baseline(tmp_path: Path) -> None:
    fresh = pair("a", baseline=None, current=OK, status=BaselineStatus.MISSING)
    out = outcome([fresh])
    files = write_reports(out, tmp_path, "c", "s")
    workflow = Workflow(io.StringIO())
    set_outputs(workflow, out, files)
    assert workflow.outputs["baseline-score"] == ""
    assert workflow.outputs["score-delta"] == ""
    assert workflow.outputs["overall-score"] == "1.0000"
    assert workflow.outputs["drift-detected"] == "false"
    assert workflow.outputs["severity"] == "none"
    assert workflow.outputs["baseline-status"] == "missing"


def test_the_output_file_format_survives_a_multiline_verdict(tmp_path: Path) -> None:
    out = outcome([pair("a", baseline=None, current=OK)]).model_copy(
        update={"verdict": "line one\nregressions<<EOF\nline three"}
    )
    files = write_reports(out, tmp_path / "r", "c", "s")
    output_file = tmp_path / "out"
    set_outputs(Workflow(io.StringIO(), output_file), out, files)
    assert read_outputs(output_file)["summary"] == "line one\nregressions<<EOF\nline three"
    assert read_outputs(output_file)["regressions"] == "0"


# ── combined_status ─────────────────────────────────────────────────────────


def status_pair(status: BaselineStatus) -> PairOutcome:
    run = CanaryRunResult(
        suite_name="s",
        provider=ProviderConfig(model_id="m"),
        started_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    return PairOutcome(suite_name="s", suite_file="c", model="m", run=run, baseline_status=status)


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["found"], "found"),
        (["found", "updated"], "updated"),
        (["updated", "created"], "created"),
        (["found", "created", "missing"], "missing"),
        ([], "missing"),
    ],
)
def test_combined_status_is_the_least_established(statuses: list[str], expected: str) -> None:
    assert combined_status([status_pair(BaselineStatus(s)) for s in statuses]) == expected


def _uneven_run() -> CanaryRunResult:
    """5 prompts, 2 pass; the 3 failing ones have 4 answers each, the passing ones 1."""
    results = [
        ProbeResult(probe_id="kw", prompt_id=p, passed=p in "ab", score=float(p in "ab"), sample=s)
        for p in "abcde"
        for s in range(1 if p in "ab" else 4)
    ]
    return CanaryRunResult(
        suite_name=SUITE.name, provider=ProviderConfig(model_id="m"), probe_results=results
    )


def test_headline_figures_weigh_each_prompt_equally_in_outputs_comment_and_history(
    tmp_path: Path,
) -> None:
    run = _uneven_run()
    unjudged = PairOutcome(
        suite_name=SUITE.name, suite_file="canary.yaml", model="m", run=run, drift=None,
        baseline_run=None, baseline_status=BaselineStatus.CREATED,
    )  # fmt: skip
    out = outcome([judged(unjudged)])
    files = write_reports(out, tmp_path / "report", "c", "s")
    output_file = tmp_path / "github_output"
    output_file.touch()
    set_outputs(Workflow(io.StringIO(), output_file), out, files)
    values = read_outputs(output_file)
    assert (values["overall-score"], values["pass-rate"]) == ("0.4000", "0.4000")
    assert "| 40% |" in render_comment(out, "<!-- m -->")
    record = history_record(BaselineSnapshot.of_run(run), sha="s", ref="main")
    assert (record["overall_score"], record["pass_rate"]) == (0.4, 0.4)
