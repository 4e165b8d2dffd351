"""``promptcanary run`` decides ``samples: auto`` against the stored baseline pool, as the action
does: the newest snapshot of the suite and model in ``--baseline-dir`` (default
``.promptcanary/baselines``), with the pool it carries. Through the real CLI, LiteLLM and the
OpenAI-compatible fake server, whose request count is what a provider would bill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptcanary.core.sampling.power import answers_to_settle
from promptcanary.core.sampling.sequential import Counts, Policy
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.test_litellm_models import cli, write_suite

STORE = Path(".promptcanary/baselines")


def _run(tmp_path: Path, *flags: str) -> tuple[Any, dict[str, Any]]:
    done = cli("run", "-c", "canary.yaml", "--output-json", "run.json", *flags, cwd=tmp_path)
    return done, json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))


def test_run_decides_against_the_stored_baseline_pool_without_being_given_it(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", content="Paris.", drifted={"content": "Lyon."})
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}', prompts=2)
    for _ in range(2):  # two promoted runs: the second carries a pool of both
        saved, _first = _run(tmp_path, "--save-baseline")
        assert saved.returncode == 0, saved.stdout + saved.stderr
    assert len(list((tmp_path / STORE).glob("*.json"))) == 2
    pooled = len(llm_server.requests_matching("Say Paris 1."))  # both saved runs' answers
    llm_server.reset()
    llm_server.drift = True

    # No baseline to decide against (an empty store): one answer per prompt settles nothing.
    fresh, fresh_run = _run(tmp_path, "--baseline-dir", "empty")
    fresh_requests = len(llm_server.requests_matching("capital"))
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert fresh_run["provenance"]["adaptive"]["pool_runs"] == 0
    llm_server.reset()

    # The default store: the changed prompt is asked until its regression is shown.
    done, run = _run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert run["provenance"]["adaptive"]["pool_runs"] == 2
    assert "a pool of 2 promoted runs" in done.stdout
    assert "capital / expected_keywords" in done.stdout.split("Regressions (", 1)[1]
    assert fresh_requests == 1 < len(llm_server.requests_matching("capital"))
    # The unchanged prompts answered as the pool did: "same" once their passes rule out a drop.
    settles = answers_to_settle(Counts(pooled, pooled), Policy())
    assert len(llm_server.requests_matching("Say Paris 1.")) == settles > 1


def test_a_run_saved_as_a_baseline_carries_the_pool_on(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", content="Paris.")
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}')
    for _ in range(3):
        done, _run_doc = _run(tmp_path, "--save-baseline", "--baseline-pool", "2")
        assert done.returncode == 0, done.stdout + done.stderr
    newest = max((tmp_path / STORE).glob("*.json"), key=lambda p: p.name.rsplit("__", 1)[-1])
    snapshot = json.loads(newest.read_text(encoding="utf-8"))
    assert len(snapshot["pool"]) == 2  # itself and the one before, --baseline-pool at most


def test_an_unreadable_newest_baseline_stops_the_run_before_any_request(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", content="Paris.")
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}')
    (tmp_path / STORE).mkdir(parents=True)
    broken = tmp_path / STORE / "models__openai-local__20990101T000000000000Z_deadbeef.json"
    broken.write_text("{not json", encoding="utf-8")
    done = cli("run", "-c", "canary.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert str(broken.relative_to(tmp_path)) in done.stderr
    assert "--baseline FILE" in done.stderr and "Traceback" not in done.stderr
    assert llm_server.request_count == 0


def test_run_decides_against_the_baseline_the_actions_path_store_keeps_there(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    from promptcanary.storage.base import snapshot_from_json
    from promptcanary_action.baselines.path import PathBackend

    llm_server.script("capital", content="Paris.", drifted={"content": "Lyon."})
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}')
    saved, _first = _run(tmp_path, "--save-baseline", "--baseline-dir", "elsewhere")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    [snapshot_file] = (tmp_path / "elsewhere").glob("*.json")
    snapshot = snapshot_from_json(snapshot_file.read_text(encoding="utf-8"), str(snapshot_file))
    # The action's `baseline: path` (its default baseline-path is the CLI's folder) keeps it.
    PathBackend(tmp_path / STORE).save(snapshot, sha="a" * 40, ref="main")
    llm_server.reset()
    llm_server.drift = True

    done, run = _run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert run["provenance"]["adaptive"]["pool_runs"] == 1
    assert len(llm_server.requests_matching("capital")) > 1
