"""The verdict on the example recordings, end to end through the command line.

The CLI runs as a user runs it (``run --replay`` then ``compare --update-baseline``) against a
stored baseline snapshot: its exit code (the gate), its drift JSON and whether it promoted the run.
The action reaches its verdict through the same engine function
(:func:`promptcanary.core.verdict.evaluate.evaluate`, ending in ``decide``), so there is no second
path to hold in parity; the action's own step is tested in ``tests/unit/action/test_pipeline.py``
and end to end in ``tests/e2e``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from promptcanary.cli import main as cli_main
from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.suite import CanarySuite
from promptcanary.providers.replay import ReplayProvider
from promptcanary.storage.file import FileBaselineStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BOILERPLATE = 'forbidden_keywords: ["As an AI language model", "I am just an AI"]'


def errored_copy(source: Path, target: Path, prompt_ids: set[str]) -> None:
    """The recording with the answers to ``prompt_ids`` replaced by a recorded error."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["prompt_id"] in prompt_ids:
            record.update(content="", error="HTTP 500: upstream failed")
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(EXAMPLES / "canary.yaml", tmp_path / "canary.yaml")
    shutil.copytree(EXAMPLES / "recordings", tmp_path / "recordings")
    recordings = tmp_path / "recordings"
    errored_copy(recordings / "baseline.jsonl", recordings / "one-error.jsonl", {"extract-invoice"})
    four = {"extract-invoice", "extract-contact", "triage-ticket", "weather-tool"}
    errored_copy(recordings / "baseline.jsonl", recordings / "outage.jsonl", four)
    text = (tmp_path / "canary.yaml").read_text(encoding="utf-8")
    assert BOILERPLATE in text
    old = text.replace(BOILERPLATE, 'forbidden_keywords: ["Northwind", "Globex"]')
    (tmp_path / "old-probes.yaml").write_text(old, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def baseline_snapshot(workdir: Path, suite_file: str) -> BaselineSnapshot:
    """The baseline both sides read: the recorded baseline answers, scored by ``suite_file``."""
    suite = CanarySuite.from_yaml(workdir / suite_file)
    run = suite.run(ReplayProvider(workdir / "recordings" / "baseline.jsonl"), show_progress=False)
    return BaselineSnapshot.of_run(run)


def cli_verdict(
    workdir: Path, snapshot: BaselineSnapshot, recording: str, rule: str, fail_on: str
) -> tuple[dict[str, Any], bool, bool]:
    """(drift JSON, gate failed, run promoted) as the command line decides them."""
    store = FileBaselineStore(workdir / "cli-baselines")
    store.save_snapshot(snapshot)
    ran = cli_main(
        [
            *("run", "--config", "canary.yaml", "--replay", f"recordings/{recording}"),
            *("--output-json", "run.json", "--no-progress"),
        ]
    )
    assert ran in (0, 3)  # 3: an untrustworthy run, still written and comparable
    code = cli_main(
        [
            *("compare", "--baseline-dir", "cli-baselines", "--current", "run.json"),
            *("--config", "canary.yaml", "--output-json", "drift.json"),
            *("--fail-on", fail_on, "--update-baseline", rule),
        ]
    )
    assert code in (0, 1, 3)  # 3: an untrustworthy run (the outage) cannot gate
    drift = json.loads((workdir / "drift.json").read_text(encoding="utf-8"))
    promoted = len(store.list_baselines()) == 2
    return drift, code == 1, promoted


@pytest.mark.parametrize(
    ("baseline_suite", "recording", "rule", "fail_on", "drifted", "failed", "promoted"),
    [
        ("canary.yaml", "baseline.jsonl", "auto", "regression", False, False, True),
        ("canary.yaml", "drifted.jsonl", "auto", "regression", True, True, False),
        ("canary.yaml", "drifted.jsonl", "always", "medium", True, True, True),
        ("canary.yaml", "drifted.jsonl", "never", "failure", True, True, False),
        ("old-probes.yaml", "baseline.jsonl", "auto", "regression", False, False, True),
        ("old-probes.yaml", "drifted.jsonl", "auto", "high", True, True, False),
        ("canary.yaml", "one-error.jsonl", "auto", "regression", False, False, False),
        ("canary.yaml", "outage.jsonl", "always", "regression", False, False, False),
    ],
)
def test_compare_decides_the_gate_and_the_promotion_on_the_recordings(
    workdir: Path,
    baseline_suite: str,
    recording: str,
    rule: str,
    fail_on: str,
    drifted: bool,
    failed: bool,
    promoted: bool,
) -> None:
    snapshot = baseline_snapshot(workdir, baseline_suite)
    drift, gate, was_promoted = cli_verdict(workdir, snapshot, recording, rule, fail_on)

    assert bool(drift["regressions"]) is drifted
    assert gate is failed  # exit code 1
    assert was_promoted is promoted
    assert drift["baseline_snapshot_id"] == snapshot.snapshot_id
    if baseline_suite == "old-probes.yaml":
        assert drift["rescored_responses"] == 14
