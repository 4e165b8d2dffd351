"""The ``promptcanary`` command line, run as a subprocess (``python -m promptcanary``).

Exit codes and stderr are what a user sees, so they are asserted from outside the process.
Responses come from replay recordings written here, against the suite ``init`` writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from promptcanary.core.models import (
    CanaryRunResult,
    DriftReport,
    ProbeComparison,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.core.render.terminal import format_drift, format_run
from promptcanary.core.sampling.sequential import DETERMINISTIC_EVIDENCE
from promptcanary.storage.base import snapshot_from_json
from tests.unit.core.render.test_html import texts, view

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b"

# Answers to the starter suite's prompts (ids as `init` writes them).
GOOD = {
    "capital-france": "Paris",
    "extract-user": '{"name": "Ada", "age": 36}',
    "short-answer": "A unit test checks one small piece of code in isolation.",
}
DRIFTED = {
    **GOOD,
    "extract-user": 'Sure! Here is the JSON:\n```json\n{"name": "Ada", "age": 36}\n```',
    "capital-france": "I'm sorry, but I can't help with that.",
}


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    environ["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "promptcanary", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def write_recording(path: Path, answers: dict[str, str]) -> Path:
    lines = [
        json.dumps({"prompt_id": pid, "content": text, "model": "openai/gpt-4o-mini"})
        for pid, text in answers.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    done = cli("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    write_recording(tmp_path / "good.jsonl", GOOD)
    write_recording(tmp_path / "drifted.jsonl", DRIFTED)
    return tmp_path


def run_and_save_baseline(workdir: Path) -> None:
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--save-baseline",
        "--baseline-dir", "bl", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pass rate 100%" in done.stdout


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    (tmp_path / "canary.yaml").write_text("mine", encoding="utf-8")
    refused = cli("init", cwd=tmp_path)
    assert refused.returncode == 2
    assert "--force" in refused.stderr
    assert (tmp_path / "canary.yaml").read_text(encoding="utf-8") == "mine"
    assert cli("init", "--force", cwd=tmp_path).returncode == 0
    assert "prompts:" in (tmp_path / "canary.yaml").read_text(encoding="utf-8")


def test_round_trip_drift_fails_the_gate_and_lists_the_regressions(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    assert len(list((workdir / "bl").glob("*.json"))) == 1
    current = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--output-json",
        "run.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert current.returncode == 0, current.stderr
    assert "Failed (" in current.stdout

    compared = cli(
        "compare", "--baseline-dir", "bl", "--current", "run.json", "--fail-on", "regression",
        "--output-json", "drift.json", "--output-md", "drift.md", cwd=workdir,
    )  # fmt: skip
    assert compared.returncode == 1, compared.stderr
    regressions = compared.stdout.split("Regressions (", 1)[1]
    assert "extract-user / json_validity" in regressions
    assert "capital-france / no-ai-boilerplate" not in regressions  # unchanged result
    assert "capital-france /" in regressions
    drift = json.loads((workdir / "drift.json").read_text(encoding="utf-8"))
    assert {r["prompt_id"] for r in drift["regressions"]} == {"extract-user", "capital-france"}
    assert "## Regressions" in (workdir / "drift.md").read_text(encoding="utf-8")

    never = cli(
        "compare", "--baseline-dir", "bl", "--current", "run.json", "--fail-on", "never",
        cwd=workdir,
    )  # fmt: skip
    assert never.returncode == 0
    report = cli("report", "--drift", "drift.json", "--format", "md", cwd=workdir)
    assert report.returncode == 0
    assert "Regressions (" in report.stdout


def test_identical_replays_pass_the_gate(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    again = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--output-json", "run.json",
        "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    compared = cli("compare", "--baseline-dir", "bl", "--current", "run.json", cwd=workdir)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert " 0 regressions" in compared.stdout
    assert "Regressions (" not in compared.stdout


def test_compare_rescores_the_baseline_when_the_probes_changed(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    suite = workdir / "canary.yaml"
    # Tighten a probe: the baseline's stored answer must be judged by the new rule too.
    suite.write_text(
        suite.read_text(encoding="utf-8").replace("max_chars: 300", "max_chars: 20"),
        encoding="utf-8",
    )
    ran = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--output-json", "run.json",
        "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    compared = cli(
        "compare", "--baseline-dir", "bl", "--current", "run.json", "--config", "canary.yaml",
        cwd=workdir,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stdout + compared.stderr
    # run --save-baseline built the pool: every stored answer is judged again.
    [saved] = (workdir / "bl").glob("*.json")
    stored = snapshot_from_json(saved.read_text(encoding="utf-8"), str(saved))
    rescored = len(stored.run_result.llm_responses)
    assert rescored > 3 * DETERMINISTIC_EVIDENCE  # identical answers are no shortcut
    assert f"re-scored {rescored} stored baseline responses" in compared.stdout
    # Without the suite the probe edit cannot be told from drift: the user is told so.
    blind = cli("compare", "--baseline-dir", "bl", "--current", "run.json", cwd=workdir)
    assert "pass --config" in blind.stdout
    assert "New probes (1)" in blind.stdout  # the re-keyed probe: neither side compares it


def test_bad_yaml_exits_2_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "name: x\nprompts:\n  - text: hi\n    probes:\n      - type: json_valdity\n",
        encoding="utf-8",
    )
    done = cli("run", "--config", "bad.yaml", "--model", "replay:none.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "bad.yaml:5:" in done.stderr
    assert "json_validity" in done.stderr  # the suggestion
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--config", "missing.yaml"],
        ["run", "--config", "canary.yaml", "--no-such-flag"],
        ["compare", "--current", "missing.json", "--baseline-dir", "."],
        ["report", "--drift", "missing.json"],
        ["compare", "--current", "canary.yaml", "--fail-on", "sometimes"],
    ],
)
def test_usage_errors_exit_2_without_traceback(workdir: Path, args: list[str]) -> None:
    done = cli(*args, cwd=workdir)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()


def test_missing_api_key_exits_3_naming_the_variable(workdir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    environ = {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "promptcanary", "run", "--config", "canary.yaml", "--no-progress"],
        cwd=workdir,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3
    assert "OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_errored_replay_above_the_error_rate_exits_3(workdir: Path) -> None:
    lines = [json.dumps({"prompt_id": p, "error": "HTTP 500: upstream failed"}) for p in GOOD]
    (workdir / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "broken.jsonl", "--no-progress", cwd=workdir
    )
    assert done.returncode == 3
    assert "untrustworthy" in done.stderr
    assert "upstream failed" in done.stdout


def test_an_all_errored_run_has_no_score_and_exits_3_in_run_and_compare(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    lines = [json.dumps({"prompt_id": p, "error": "HTTP 500: upstream failed"}) for p in GOOD]
    (workdir / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "broken.jsonl", "--max-error-rate", "1",
        "--output-json", "unreach.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "score –, pass rate – (" in done.stdout
    stored = json.loads((workdir / "unreach.json").read_text(encoding="utf-8"))
    assert (stored["overall_score"], stored["pass_rate"]) == (None, None)
    (baseline,) = (workdir / "bl").rglob("*.json")
    compared = cli(
        "compare", "--baseline", str(baseline), "--current", "unreach.json",
        "--max-error-rate", "1", cwd=workdir,
    )  # fmt: skip
    assert compared.returncode == 3, compared.stdout + compared.stderr
    assert "Untrustworthy run" in compared.stdout


def test_untrustworthy_run_is_not_saved_as_the_baseline(workdir: Path) -> None:
    # An all-errored baseline would make every later comparison "errored, not a regression":
    # the gate would pass whatever the model does.
    lines = [json.dumps({"prompt_id": p, "error": "HTTP 500: upstream failed"}) for p in GOOD]
    (workdir / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "broken.jsonl", "--save-baseline",
        "--baseline-dir", "bl", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 3
    assert not list((workdir / "bl").glob("*.json"))
    assert "not saved" in done.stdout


def test_baselines_lists_them_and_shows_unreadable_files(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    (workdir / "bl" / "starter-canaries__broken__20240101T000000000000Z_deadbeef.json").write_text(
        "{not json", encoding="utf-8"
    )
    done = cli("baselines", "--baseline-dir", "bl", cwd=workdir)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert any("starter-canaries" in ln and "openai/gpt-4o-mini" in ln for ln in lines)
    assert any(ln.startswith("ERROR") and "deadbeef" in ln for ln in lines)
    only = cli("baselines", "--baseline-dir", "bl", "--model", "other/model", cwd=workdir)
    assert "No baselines" in only.stdout


def test_terminal_output_neutralises_control_characters() -> None:
    hostile = f"{ESC}]0;pwned{ESC}\\{ESC}[2J answer"
    result = ProbeResult(probe_id="p", prompt_id="q", passed=False, score=0.0, details=hostile)
    run = CanaryRunResult(
        suite_name="s", provider=ProviderConfig(model_id="m"), probe_results=[result]
    )
    comparison = ProbeComparison(
        probe_id="p", prompt_id="q", baseline_score=1.0, current_score=0.0, score_delta=-1.0,
        baseline_passed=True, current_passed=False, regression=True, current_details=hostile,
    )  # fmt: skip
    report = DriftReport(
        suite_name="s",
        provider=ProviderConfig(model_id="m"),
        baseline_snapshot_id="b",
        baseline_created_at=run.started_at,
        current_run_id=run.run_id,
        comparisons=[comparison],
    )
    for text in (format_run(run), format_drift(report)):
        assert ESC not in text
        assert "answer" in text


CUSTOM_SUITE = """\
name: custom
prompts:
  - id: deploy
    text: Where do builds run?
    probes:
      - type: no_internal_hosts
      - type: max_sentences
        max_sentences: 1
"""


def test_custom_probe_module_registers_the_example_probes(tmp_path: Path) -> None:
    (tmp_path / "custom.yaml").write_text(CUSTOM_SUITE, encoding="utf-8")
    write_recording(
        tmp_path / "rec.jsonl", {"deploy": "On ci.acme.internal. Ask the platform team."}
    )
    args = ["run", "--config", "custom.yaml", "--replay", "rec.jsonl", "--no-progress"]
    unknown = cli(*args, cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown probe type 'no_internal_hosts'" in unknown.stderr

    module = str(ROOT / "examples" / "custom_probes.py")
    done = cli(*args, "--probe-module", module, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "deploy / no_internal_hosts  0.000  Internal host(s) in the answer: ci.acme.internal"
        in (done.stdout)
    )
    assert "2 sentence(s); at most 1 allowed" in done.stdout


def test_run_auto_tests_a_repeating_model_like_any_other(workdir: Path) -> None:
    # A replay repeats its one answer: a deterministic model. A run saved as the first baseline
    # builds the pool until it could show a drop, as for varied answers; against that baseline
    # each prompt asks what a tested "same" needs: more than one answer, far fewer than built.
    first = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--samples", "auto",
        "--output-json", "first.json", "--save-baseline", "--baseline-dir", "bl", "--no-progress",
        cwd=workdir,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    first_run = CanaryRunResult.model_validate_json((workdir / "first.json").read_text())
    built = Counter(r.prompt_id for r in first_run.llm_responses)
    assert len(built) == len(GOOD) and min(built.values()) > DETERMINISTIC_EVIDENCE
    [saved] = (workdir / "bl").glob("*.json")
    again = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--baseline", str(saved),
        "--output-json", "again.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    again_run = CanaryRunResult.model_validate_json((workdir / "again.json").read_text())
    asked = Counter(r.prompt_id for r in again_run.llm_responses)
    assert all(1 < asked[p] < built[p] for p in built)
    assert " 0 regressions" in again.stdout
    # The drifted replay repeats other texts: the changed prompts are regressions at 3 answers.
    drifted = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--baseline", str(saved),
        "--output-json", "drifted.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    assert "extract-user / json_validity" in drifted.stdout.split("Regressions (", 1)[1]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--samples", "0"], "must be auto or an integer ≥ 1"),
        (["--min-samples", "9", "--max-samples", "4"], "--min-samples 9 is above --max-samples 4"),
        (["--max-samples", "10000"], "--max-samples must be an integer ≥ 1 and ≤ 1000, got 10000"),
    ],
)
def test_invalid_sampling_flags_exit_2(workdir: Path, flags: list[str], message: str) -> None:
    done = cli("run", "--config", "canary.yaml", "--replay", "good.jsonl", *flags, cwd=workdir)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timeout", "-1"], "--timeout must be a number of seconds > 0"),
        (["--timeout", "0"], "--timeout must be a number of seconds > 0"),
        (["--timeout", "nan"], "--timeout must be a number of seconds > 0"),
        (["--max-retries", "-1"], "--max-retries must be an integer ≥ 0, got -1"),
        (["--concurrency", "0"], "--concurrency must be an integer ≥ 1, got 0"),
        (["--temperature", "2.5"], "--temperature must be a number ≥ 0 and ≤ 2, got 2.5"),
        (
            ["--max-tokens", "99999999999999999999999"],
            "--max-tokens must be an integer ≥ 1 and ≤ 1000000",
        ),
        (["--baseline-pool", "0"], "--baseline-pool must be an integer ≥ 1 and ≤ 100, got 0"),
    ],
)
def test_the_cli_refuses_the_run_options_the_action_refuses(
    workdir: Path, flags: list[str], message: str
) -> None:
    done = cli("run", "--config", "canary.yaml", "--replay", "good.jsonl", *flags, cwd=workdir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_report_html_from_stored_files_and_view_finds_the_latest(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    folder = workdir / "promptcanary-report"
    folder.mkdir()
    current = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--output-json",
        str(folder / "run.json"), "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert current.returncode == 0, current.stderr
    compared = cli(
        "compare", "--baseline-dir", "bl", "--current", str(folder / "run.json"),
        "--fail-on", "never", "--output-json", str(folder / "drift.json"), cwd=workdir,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    missing = cli("view", "--print", cwd=workdir)
    assert missing.returncode == 2 and "no report.html" in missing.stderr

    page = folder / "report.html"
    done = cli("report", "--drift", str(folder / "drift.json"), "--format", "html", "-o",
               str(page), cwd=workdir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html
    drift = json.loads((folder / "drift.json").read_text(encoding="utf-8"))
    assert drift["regressions"]
    assert f"{len(drift['regressions'])} regression" in html
    assert "Sure! Here is the JSON:" in html  # today's answer, shown

    viewed = cli("view", "--print", cwd=workdir)
    assert viewed.returncode == 0, viewed.stderr
    assert viewed.stdout.strip() == str(page.resolve())


def test_report_html_from_stored_files_shows_the_baseline_the_drift_names(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    current = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--output-json",
        "run.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert current.returncode == 0, current.stderr
    compared = cli("compare", "--baseline-dir", "bl", "--current", "run.json", "--fail-on",
                   "never", "--output-json", "drift.json", cwd=workdir)  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    # A later baseline in the same directory: the page must show the one the drift names.
    resaved = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--save-baseline",
        "--baseline-dir", "bl", "--no-progress", cwd=workdir,
    )  # fmt: skip
    # `run` decides against the stored baseline: the drifted run regresses (exit 1), still saved.
    assert resaved.returncode == 1, resaved.stderr
    assert "Saved baseline" in resaved.stdout

    found = cli("report", "drift.json", "--format", "html", "--baseline-dir", "bl", "-o",
                "found.html", cwd=workdir)  # fmt: skip
    assert found.returncode == 0, found.stderr
    html = (workdir / "found.html").read_text(encoding="utf-8")
    assert texts(view(html, "capital-france")["baseline"]) == ["Paris"]
    assert "answers are not shown" not in html and found.stdout == ""

    lost = cli("report", "drift.json", "--format", "html", "-o", "lost.html", cwd=workdir)
    assert lost.returncode == 0, lost.stderr
    why = "and the baseline directory .promptcanary/baselines does not exist"
    assert why in lost.stdout
    page = (workdir / "lost.html").read_text(encoding="utf-8")
    assert why in page and not view(page, "capital-france")["baseline"]["known"]

    oldest, newest = sorted((workdir / "bl").glob("*.json"))
    given = cli("report", "drift.json", "--format", "html", "--baseline", str(oldest),
                cwd=workdir)  # fmt: skip
    assert given.returncode == 0, given.stderr
    assert texts(view(given.stdout, "capital-france")["baseline"]) == ["Paris"]
    wrong = cli("report", "drift.json", "--format", "html", "--baseline", str(newest),
                cwd=workdir)  # fmt: skip
    assert wrong.returncode == 2
    assert "but the drift report was compared with" in wrong.stderr


def test_report_into_a_closed_pipe_ends_quietly_with_141(workdir: Path) -> None:
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "good.jsonl", "--output-json",
        "run.json", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = json.loads((workdir / "run.json").read_text(encoding="utf-8"))
    run["probe_results"] = run["probe_results"] * 2000  # far more than a pipe buffer holds
    (workdir / "big.json").write_text(json.dumps(run), encoding="utf-8")
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    reader = subprocess.Popen(
        ["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    assert reader.stdin is not None
    writer = subprocess.run(
        [sys.executable, "-m", "promptcanary", "report", "big.json", "--format", "json"],
        cwd=workdir, env=environ, stdout=reader.stdin, stderr=subprocess.PIPE, text=True,
        timeout=60,
    )  # fmt: skip
    reader.stdin.close()
    reader.wait(timeout=60)
    assert writer.stderr == ""
    assert writer.returncode == 141


def test_run_without_a_suite_suggests_promptcanary_init(tmp_path: Path) -> None:
    done = cli("run", "--no-progress", cwd=tmp_path)
    assert done.returncode == 2
    assert "canary.yaml" in done.stderr
    assert "promptcanary init" in done.stderr


@pytest.mark.parametrize(
    ("example", "answers"),
    [
        (
            "dataset",
            {
                "route-ticket.t-001": '{"team": "billing"}',
                "route-ticket.t-002": '{"team": "shipping"}',
                "route-ticket.t-003": '{"team": "account"}',
                "route-ticket.t-004": '{"team": "billing"}',
                "route-ticket.t-005": '{"team": "shipping"}',
            },
        ),
        (
            "conversation",
            {
                "late-order-follow-up": "We are talking about order A-1234.",
                "weather-after-tool": "It is 31 °C and clear in Paris.",
            },
        ),
    ],
)
def test_init_writes_starters_of_each_shape_that_run(
    tmp_path: Path, example: str, answers: dict[str, str]
) -> None:
    done = cli("init", "--example", example, "--path", "suites/canary.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    if example == "dataset":
        assert (tmp_path / "suites" / "data" / "tickets.csv").is_file()
    write_recording(tmp_path / "answers.jsonl", answers)
    ran = cli(
        "run", "--config", "suites/canary.yaml", "--replay", "answers.jsonl", "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "pass rate 100%" in ran.stdout
    refused = cli("init", "--example", example, "--path", "suites/canary.yaml", cwd=tmp_path)
    assert refused.returncode == 2 and "--force" in refused.stderr


def test_baselines_lists_files_it_cannot_name_with_the_reason(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    [saved] = (workdir / "bl").glob("*.json")
    (workdir / "bl" / "my-copy.json").write_text(saved.read_text(encoding="utf-8"))
    (workdir / "bl" / "old").mkdir()
    (workdir / "bl" / "old" / "notes.json").write_text("{}", encoding="utf-8")
    # The action's `baseline: path` layout is named: listed as a baseline, not as unnamed.
    action_file = workdir / "bl" / "starter-canaries" / "openai-gpt-4o-mini" / "baseline.json"
    action_file.parent.mkdir(parents=True)
    action_file.write_text(saved.read_text(encoding="utf-8"))
    done = cli("baselines", "--baseline-dir", "bl", cwd=workdir)
    assert done.returncode == 0, done.stderr
    unnamed = [ln for ln in done.stdout.splitlines() if ln.startswith("UNNAMED")]
    assert [ln.split()[1].rstrip(":") for ln in unnamed] == [
        str(Path("bl/my-copy.json")),
        str(Path("bl/old/notes.json")),
    ]
    assert all("pass it as --baseline FILE" in ln for ln in unnamed)
    listed = [ln for ln in done.stdout.splitlines() if not ln.startswith(("UNNAMED", "ERROR"))]
    assert len(listed) == 2 and any(str(Path(*action_file.parts[-4:])) in ln for ln in listed)


def test_run_with_a_report_dir_writes_the_runs_the_drift_and_the_page(workdir: Path) -> None:
    run_and_save_baseline(workdir)
    done = cli(
        "run", "--config", "canary.yaml", "--replay", "drifted.jsonl", "--baseline-dir", "bl",
        "--report-dir", "out", "--no-progress", cwd=workdir,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # the drifted run regresses against the baseline
    (pair,) = [p for p in (workdir / "out").iterdir() if p.is_dir()]
    run = json.loads((pair / "run.json").read_text(encoding="utf-8"))
    drift = json.loads((pair / "drift.json").read_text(encoding="utf-8"))
    assert run["suite_name"] == drift["suite_name"] and drift["regressions"]
    html = (workdir / "out" / "report.html").read_text(encoding="utf-8")
    # The page holds the baseline's answers beside today's, as the action's page does.
    assert texts(view(html, "capital-france")["baseline"]) == ["Paris"]
    assert texts(view(html, "capital-france")["current"]) == [DRIFTED["capital-france"]]
    shown = cli("view", "out", "--print", cwd=workdir)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == str((workdir / "out" / "report.html").resolve())
