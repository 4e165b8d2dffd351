"""The CLI and the action reach the same verdict on the same baseline and the same recordings.

Both front ends call one evaluation (``promptcanary.core.verdict.evaluate``); this test holds them to it
end to end. The CLI runs as a user runs it (``run --replay`` then ``compare --update-baseline``);
the action's side is its per-pair step, ``pipeline.run_pair``, with its real provider factory and
its real ``baseline: path`` store. Each side reads the same baseline snapshot and replays the same
recording; the drift JSON (minus the run's own id and time), the gate and the promotion must match.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from promptcanary.cli import main as cli_main
from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.spec import ModelSpec
from promptcanary.core.suite import CanarySuite
from promptcanary.core.verdict.evaluate import PROMOTION_RULES
from promptcanary.providers.replay import ReplayProvider
from promptcanary.storage.file import FileBaselineStore
from promptcanary_action.activity import Activity
from promptcanary_action.baselines.path import PathBackend
from promptcanary_action.effects import real_provider
from promptcanary_action.outcome import BaselineStatus, gate_failed
from promptcanary_action.pipeline import LoadedSuite, run_pair
from promptcanary_action.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2024, 6, 1, tzinfo=UTC)
# Differ between any two runs, whoever makes them: not part of the verdict.
VOLATILE = {"created_at", "current_run_id"}
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
    assert code in (0, 1)
    drift = json.loads((workdir / "drift.json").read_text(encoding="utf-8"))
    promoted = len(store.list_baselines()) == 2
    return drift, code == 1, promoted


def action_verdict(
    workdir: Path, snapshot: BaselineSnapshot, recording: str, rule: str, fail_on: str
) -> tuple[dict[str, Any], bool, bool]:
    """(drift JSON, gate failed, run promoted) as the action decides them for one pair."""
    backend = PathBackend(workdir / "action-baselines", clock=lambda: NOW)
    backend.save(snapshot, sha="0" * 40, ref="main")
    settings = Settings.from_environ({"INPUT_FAIL-ON": fail_on})
    promotion = PROMOTION_RULES[rule]
    activity = Activity(
        compare=True,
        comment=False,
        check_run=False,
        baseline_ref="main",
        may_create_baseline=promotion != "never",
        promotion=promotion,
        issue_on_drift=False,
        is_pull_request=False,
    )
    suite = CanarySuite.from_yaml(workdir / "canary.yaml")
    pair = asyncio.run(
        run_pair(
            LoadedSuite(suite, workdir / "canary.yaml", "canary.yaml"),
            ModelSpec(f"replay:recordings/{recording}"),
            settings=replace(settings, concurrency=4),
            activity=activity,
            sha="1" * 40,
            ref="main",
            provider_factory=real_provider,
            backend=backend,
            now=lambda: NOW,
        )
    )
    assert pair.drift is not None
    drift = json.loads(pair.drift.model_dump_json())
    return drift, gate_failed([pair], fail_on), pair.baseline_status is BaselineStatus.UPDATED


def without(document: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in keys}


@pytest.mark.parametrize(
    ("baseline_suite", "recording", "rule", "fail_on", "drifted", "promoted"),
    [
        ("canary.yaml", "baseline.jsonl", "auto", "regression", False, True),
        ("canary.yaml", "drifted.jsonl", "auto", "regression", True, False),
        ("canary.yaml", "drifted.jsonl", "always", "medium", True, True),
        ("canary.yaml", "drifted.jsonl", "never", "failure", True, False),
        ("old-probes.yaml", "baseline.jsonl", "auto", "regression", False, True),
        ("old-probes.yaml", "drifted.jsonl", "auto", "high", True, False),
        ("canary.yaml", "one-error.jsonl", "auto", "regression", False, False),
        ("canary.yaml", "outage.jsonl", "always", "regression", False, False),
    ],
)
def test_cli_and_action_reach_the_same_verdict(
    workdir: Path,
    baseline_suite: str,
    recording: str,
    rule: str,
    fail_on: str,
    drifted: bool,
    promoted: bool,
) -> None:
    snapshot = baseline_snapshot(workdir, baseline_suite)
    cli_drift, cli_gate, cli_promoted = cli_verdict(workdir, snapshot, recording, rule, fail_on)
    act_drift, act_gate, act_promoted = action_verdict(workdir, snapshot, recording, rule, fail_on)

    assert without(cli_drift, VOLATILE) == without(act_drift, VOLATILE)
    assert (cli_gate, cli_promoted) == (act_gate, act_promoted)
    # The scenario is the one intended, so equality is not reached by both sides doing nothing.
    assert bool(cli_drift["regressions"]) is drifted
    assert cli_promoted is promoted
    assert cli_drift["baseline_snapshot_id"] == snapshot.snapshot_id
    if baseline_suite == "old-probes.yaml":
        assert cli_drift["rescored_responses"] == 14
