"""Model strings, model entries and their errors, through the CLI and the action with the real
LiteLLM provider against local fake servers (OpenAI-compatible and Anthropic's Messages API)."""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from promptcanary_action.effects import Effects, make_backend
from promptcanary_action.main import action
from promptcanary_action.workflow import Workflow
from tests.e2e.runner import parse_workflow_commands
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.llm_server import FakeLLMServer
from tests.unit.action.test_action_inprocess import NOW, push_event

ROOT = Path(__file__).resolve().parents[2]
README_ANTHROPIC = "anthropic/claude-3-5-haiku-20241022"

SUITE = """\
name: models
models:
{models}
prompts:
  - id: capital
    text: What is the capital of France?
    expected_keywords: [Paris]
    probes: [{{type: expected_keywords}}]
"""


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    environ = {
        **base,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(ROOT),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "promptcanary", *args, "--no-progress"],
        cwd=cwd, env=environ, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def write_suite(folder: Path, models: str, prompts: int = 1) -> Path:
    text = SUITE.format(models=models)
    for i in range(1, prompts):
        text += f"  - id: p{i}\n    text: Say Paris {i}.\n    expected_keywords: [Paris]\n"
        text += "    probes: [{type: expected_keywords}]\n"
    (folder / "canary.yaml").write_text(text, encoding="utf-8")
    return folder / "canary.yaml"


def test_the_readme_anthropic_model_answers_and_is_scored_through_the_cli(tmp_path: Path) -> None:
    with FakeAnthropicServer() as server:
        server.answers["capital"] = "Paris."
        write_suite(tmp_path, f'  - {{model: {README_ANTHROPIC}, api_base: "{server.url}"}}')
        done = cli("run", "-c", "canary.yaml", "--samples", "1", "--output-json", "run.json",
                   cwd=tmp_path, env={"ANTHROPIC_API_KEY": "x"})  # fmt: skip
        requests = server.requests
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["pass_rate"] == 1.0
    assert [r["content"] for r in run["llm_responses"]] == ["Paris."]
    # The Messages API has no seed: none is sent (LiteLLM refused it before any request).
    assert requests and all("seed" not in r["body"] and r["has_api_key"] for r in requests)


def test_the_default_seed_is_still_sent_to_a_provider_that_takes_one(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}')
    done = cli("run", "-c", "canary.yaml", "--samples", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r["seed"] for r in llm_server.requests] == [42]


def test_the_first_answers_latency_is_not_the_clients_warm_up(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    # Every answer takes the server half a second, so the first answer's own connection set-up
    # (TCP, the transport's first use: tens of ms, more on a loaded machine) stays well inside
    # the bound below, while the client's warm-up (~1 s of imports and set-up) would not.
    llm_server.latency = 0.5
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}', prompts=8)
    done = cli("run", "-c", "canary.yaml", "--samples", "1", "--concurrency", "1",
               "--output-json", "run.json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    by_text = {r["last_user"]: i for i, r in enumerate(llm_server.requests)}
    prompts = {"capital": "What is the capital of France?"}
    prompts.update({f"p{i}": f"Say Paris {i}." for i in range(1, 8)})
    responses = json.loads((tmp_path / "run.json").read_text())["llm_responses"]
    ordered = sorted(responses, key=lambda r: by_text[prompts[r["prompt_id"]]])
    latencies = [r["latency_ms"] for r in ordered]
    assert len(latencies) == 8
    first, rest = latencies[0], latencies[1:]
    assert min(rest) >= 500, latencies  # the server's time is in every answer's latency
    assert first < 2 * statistics.median(rest), latencies


def test_a_model_flag_matching_a_suite_entry_takes_its_api_base(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script("capital", content="Paris")
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}')
    done = cli(
        "run", "-c", "canary.yaml", "--model", "openai/local", "--samples", "1", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert llm_server.request_count == 1


def test_a_refused_connection_names_the_api_base(tmp_path: Path) -> None:
    with FakeLLMServer() as closed:
        url = closed.url  # a port nothing listens on once the server stopped
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{url}"}}')
    done = cli("run", "-c", "canary.yaml", "--samples", "1", "--max-retries", "0",
               "--output-json", "run.json", cwd=tmp_path)  # fmt: skip
    errors = [r["error"] for r in json.loads((tmp_path / "run.json").read_text())["llm_responses"]]
    assert done.returncode == 3
    assert errors and all(f"cannot connect to {url}" in e and "HTTP 500" not in e for e in errors)


@pytest.mark.parametrize("model", ["gpt-9000", "foo/bar"])
def test_an_unknown_model_string_is_a_configuration_error_with_litellms_whole_hint(
    tmp_path: Path, model: str
) -> None:
    write_suite(tmp_path, "  - openai/gpt-4o-mini")
    done = cli("run", "-c", "canary.yaml", "--model", model, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"model {model!r} is not a model string LiteLLM knows" in done.stderr
    assert "Learn more: https://docs.litellm.ai/docs/providers" in done.stderr


def test_an_unknown_model_in_the_action_exits_2_with_an_annotation(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    write_suite(workspace, "  - gpt-9000")
    out = io.StringIO()
    effects = Effects(workflow=Workflow(out), github=lambda _s: None, backend=make_backend,
                      now=lambda: NOW)  # fmt: skip
    code = action({**push_event(workspace), "INPUT_GITHUB-TOKEN": ""}, effects)
    errors = [c for c in parse_workflow_commands(out.getvalue()) if c.name == "error"]
    assert code == 2
    assert [e.properties["title"] for e in errors] == ["PromptCanary: unknown model"]
    assert "Learn more: https://docs.litellm.ai/docs/providers" in errors[0].message


def test_every_model_is_checked_before_the_first_request(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    write_suite(tmp_path, f'  - {{model: openai/local, api_base: "{llm_server.url}"}}\n'
                "  - replay:missing.jsonl\n  - anthropic/claude-3-5-haiku-20241022")  # fmt: skip
    missing_recording = cli(
        "run", "-c", "canary.yaml", cwd=tmp_path, env={"ANTHROPIC_API_KEY": "x"}
    )
    (tmp_path / "missing.jsonl").write_text('{"prompt_id": "capital", "content": "Paris"}\n')
    missing_key = cli("run", "-c", "canary.yaml", cwd=tmp_path)
    assert missing_recording.returncode == 2 and "missing.jsonl" in missing_recording.stderr
    assert missing_key.returncode == 3 and "ANTHROPIC_API_KEY" in missing_key.stderr
    assert llm_server.request_count == 0
