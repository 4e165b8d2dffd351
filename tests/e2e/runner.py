"""Run ``entrypoint.py`` the way the GitHub runner runs this Docker action (a helper, not a test).

:func:`run_action` starts ``python entrypoint.py`` as a subprocess with the environment a Docker
action gets on a runner: the ``GITHUB_*`` variables, the event payload in a file, the command files
(``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV``, ``GITHUB_PATH``, ``GITHUB_STATE``),
``RUNNER_*``, and every input as ``INPUT_<NAME UPPERCASED>`` with hyphens kept
(``INPUT_GITHUB-TOKEN``). Inputs that a test does not give take their ``default:`` from
``action.yml``, as on the runner. It returns an :class:`ActionResult` with what a user would see.

``GITHUB_API_URL`` defaults to a closed local port, so a test that forgets to start the fake GitHub
server fails fast instead of reaching the internet.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e import launch

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = launch.ENTRYPOINT
ACTION_YML = REPO_ROOT / "action.yml"

DEFAULT_REPOSITORY = "octo-org/octo-repo"
DEFAULT_BRANCH = "main"
FAKE_TOKEN = "ghs_e2eFakeToken0000000000000000000000"
#: Nothing listens on the discard port: requests fail at once, never leave the machine.
UNREACHABLE_API_URL = "http://127.0.0.1:9"
ZERO_SHA = "0" * 40

PR_EVENTS = frozenset({"pull_request", "pull_request_target"})


class CommandFileError(ValueError):
    """A ``GITHUB_OUTPUT``-style file is malformed (the runner would fail the step)."""


class ActionTimeout(AssertionError):
    """The action did not finish in time; the message carries what it had printed."""


@dataclass(frozen=True)
class WorkflowCommand:
    """One ``::name key=value,...::message`` line the action printed to stdout."""

    name: str
    properties: dict[str, str]
    message: str


@dataclass(frozen=True)
class ActionResult:
    returncode: int
    stdout: str
    stderr: str
    #: ``GITHUB_OUTPUT`` parsed: step outputs by name.
    outputs: dict[str, str]
    #: ``GITHUB_STEP_SUMMARY`` contents (markdown).
    summary: str
    #: Where the action's report files are (from the ``report-dir`` output, else the input).
    report_dir: Path
    #: ``GITHUB_ENV`` parsed: variables the action exported to later steps.
    exported_env: dict[str, str] = field(default_factory=dict)
    #: The environment the action ran with (for debugging a failing test).
    env: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def log(self) -> str:
        """Everything the action printed: stdout, then stderr."""
        return self.stdout + self.stderr

    @property
    def commands(self) -> list[WorkflowCommand]:
        """The workflow commands the runner would act on (honours ``::stop-commands::``)."""
        return parse_workflow_commands(self.stdout)

    def output_path(self, name: str) -> Path:
        """A path output as a later step sees it: relative ones are under ``GITHUB_WORKSPACE``."""
        path = Path(self.outputs[name])
        return path if path.is_absolute() else Path(self.env["GITHUB_WORKSPACE"]) / path

    def annotations(self, level: str | None = None) -> list[WorkflowCommand]:
        """``error`` / ``warning`` / ``notice`` commands, optionally of one level only."""
        levels = {level} if level else {"error", "warning", "notice"}
        return [c for c in self.commands if c.name in levels]


# ------------------------------------------------------------------------------------------------
# command files and workflow commands


def parse_command_file(text: str) -> dict[str, str]:
    """Parse a ``GITHUB_OUTPUT`` / ``GITHUB_ENV`` file as the runner does.

    Each entry is either ``name=value`` on one line, or the multi-line form::

        name<<DELIMITER
        line 1
        line 2
        DELIMITER

    A later entry of the same name wins. Blank lines between entries are ignored.
    """
    lines = text.split("\n")
    result: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index].removesuffix("\r")
        index += 1
        if not line:
            continue
        equals = line.find("=")
        heredoc = line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, value = line[:equals], line[equals + 1 :]
        elif heredoc >= 0:
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            if not delimiter:
                raise CommandFileError(f"line {index}: empty delimiter in {line!r}")
            body: list[str] = []
            while True:
                if index >= len(lines):
                    raise CommandFileError(
                        f"line {index}: delimiter {delimiter!r} for {name!r} is never closed"
                    )
                body_line = lines[index].removesuffix("\r")
                index += 1
                if body_line == delimiter:
                    break
                body.append(body_line)
            value = "\n".join(body)
        else:
            raise CommandFileError(f"line {index}: neither name=value nor name<<DELIMITER")
        if not name:
            raise CommandFileError(f"line {index}: empty name in {line!r}")
        result[name] = value
    return result


_COMMAND_RE = re.compile(r"^::(?P<name>[A-Za-z0-9_-]+)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def _unescape_data(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(value: str) -> str:
    return _unescape_data(value.replace("%3A", ":").replace("%2C", ","))


def parse_workflow_commands(stdout: str) -> list[WorkflowCommand]:
    """The ``::command::`` lines of ``stdout`` the runner would execute.

    Between ``::stop-commands::TOKEN`` and ``::TOKEN::`` the runner executes nothing, so nothing
    there is returned.
    """
    commands: list[WorkflowCommand] = []
    resume_token: str | None = None
    for raw in stdout.splitlines():
        line = raw.strip()
        if resume_token is not None:
            if line == f"::{resume_token}::":
                resume_token = None
            continue
        match = _COMMAND_RE.match(line)
        if not match:
            continue
        name, message = match["name"], match["message"]
        if name == "stop-commands":
            resume_token = message
            continue
        properties: dict[str, str] = {}
        for pair in (match["props"] or "").split(","):
            key, sep, value = pair.partition("=")
            if sep:
                properties[key.strip()] = _unescape_property(value)
        commands.append(WorkflowCommand(name, properties, _unescape_data(message)))
    return commands


# ------------------------------------------------------------------------------------------------
# the runner's environment


def input_env_name(name: str) -> str:
    """``github-token`` → ``INPUT_GITHUB-TOKEN`` (the runner keeps hyphens, turns spaces to _)."""
    return "INPUT_" + name.replace(" ", "_").upper()


_EXPRESSION_RE = re.compile(r"\$\{\{\s*(?P<expr>[^}]*?)\s*\}\}")


def action_input_defaults(context: Mapping[str, str]) -> dict[str, str]:
    """``{input: default}`` from ``action.yml``, with ``${{ github.X }}`` expressions evaluated
    against ``context`` (``github.token``, ``github.workspace``, ...). Empty if no action.yml."""
    if not ACTION_YML.is_file():
        return {}
    document = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8")) or {}
    defaults: dict[str, str] = {}
    for name, spec in (document.get("inputs") or {}).items():
        if not isinstance(spec, Mapping) or "default" not in spec:
            continue

        def evaluate(match: re.Match[str], name: str = name) -> str:
            expr = match["expr"]
            if expr not in context:
                raise ValueError(
                    f"action.yml input {name!r}: the e2e runner cannot evaluate ${{{{ {expr} }}}};"
                    f" known: {sorted(context)}"
                )
            return context[expr]

        defaults[str(name)] = _EXPRESSION_RE.sub(evaluate, _scalar(spec["default"]))
    return defaults


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _workspace_head(workspace: Path) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "HEAD"],
            cwd=workspace,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = proc.stdout.strip()
    return sha if proc.returncode == 0 and sha else None


def _refs(event_name: str, event: Mapping[str, Any], default_branch: str) -> dict[str, str]:
    """``GITHUB_REF`` and friends, as the runner derives them from the event."""
    head_ref = base_ref = ""
    if event_name in PR_EVENTS:
        pr = event.get("pull_request") or {}
        number = pr.get("number", event.get("number", 1))
        head_ref = str((pr.get("head") or {}).get("ref", ""))
        base_ref = str((pr.get("base") or {}).get("ref", default_branch))
        ref = (
            f"refs/heads/{base_ref}"
            if event_name == "pull_request_target"
            else f"refs/pull/{number}/merge"
        )
    elif event_name == "merge_group":
        group = event.get("merge_group") or {}
        ref = str(group.get("head_ref", f"refs/heads/gh-readonly-queue/{default_branch}/pr-1"))
    else:
        ref = str(event.get("ref") or f"refs/heads/{default_branch}")
        if not ref.startswith("refs/"):
            ref = f"refs/heads/{ref}"
    if ref.startswith("refs/heads/"):
        ref_name, ref_type = ref.removeprefix("refs/heads/"), "branch"
    elif ref.startswith("refs/tags/"):
        ref_name, ref_type = ref.removeprefix("refs/tags/"), "tag"
    else:
        ref_name, ref_type = ref.removeprefix("refs/").removeprefix("pull/"), "branch"
    return {
        "GITHUB_REF": ref,
        "GITHUB_REF_NAME": ref_name,
        "GITHUB_REF_TYPE": ref_type,
        "GITHUB_HEAD_REF": head_ref,
        "GITHUB_BASE_REF": base_ref,
    }


def _sha(event_name: str, event: Mapping[str, Any], workspace: Path) -> str:
    head = _workspace_head(workspace)
    if head:
        return head
    if event_name == "push" and event.get("after"):
        return str(event["after"])
    if event_name in PR_EVENTS:
        pr = event.get("pull_request") or {}
        sha = pr.get("merge_commit_sha") or (pr.get("head") or {}).get("sha")
        if sha:
            return str(sha)
    if event_name == "merge_group":
        sha = (event.get("merge_group") or {}).get("head_sha")
        if sha:
            return str(sha)
    return ZERO_SHA


def build_env(
    tmp_path: Path,
    *,
    inputs: Mapping[str, str],
    event_name: str,
    event: Mapping[str, Any],
    workspace: Path,
    env: Mapping[str, str | None] | None = None,
    github_api_url: str | None = None,
    apply_action_defaults: bool = True,
) -> dict[str, str]:
    """The environment :func:`run_action` gives ``entrypoint.py``; creates the runner's files
    under ``tmp_path / "runner"``. ``env`` entries override (``None`` removes a variable)."""
    extra = dict(env or {})
    runner = tmp_path / "runner"
    for folder in ("files", "temp", "home", "tool-cache"):
        (runner / folder).mkdir(parents=True, exist_ok=True)
    files = runner / "files"
    event_path = files / "event.json"
    event_path.write_text(json.dumps(event, indent=2), encoding="utf-8")
    command_files = {
        "GITHUB_OUTPUT": files / "output.txt",
        "GITHUB_STEP_SUMMARY": files / "step_summary.md",
        "GITHUB_ENV": files / "env.txt",
        "GITHUB_PATH": files / "path.txt",
        "GITHUB_STATE": files / "state.txt",
    }
    for path in command_files.values():
        path.write_text("", encoding="utf-8")

    repo_info = event.get("repository") or {}
    repository = extra.get("GITHUB_REPOSITORY") or str(
        repo_info.get("full_name") or DEFAULT_REPOSITORY
    )
    default_branch = str(repo_info.get("default_branch") or DEFAULT_BRANCH)
    api_url = (github_api_url or UNREACHABLE_API_URL).rstrip("/")
    workspace = workspace.resolve()

    result: dict[str, str] = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(runner / "home"),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": repository,
        "GITHUB_REPOSITORY_OWNER": repository.split("/", 1)[0],
        "GITHUB_SHA": _sha(event_name, event, workspace),
        **_refs(event_name, event, default_branch),
        "GITHUB_API_URL": api_url,
        "GITHUB_GRAPHQL_URL": f"{api_url}/graphql",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKSPACE": str(workspace),
        **{name: str(path) for name, path in command_files.items()},
        "GITHUB_RUN_ID": "1658821493",
        "GITHUB_RUN_NUMBER": "42",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "canary",
        "GITHUB_WORKFLOW": "PromptCanary",
        "GITHUB_WORKFLOW_REF": f"{repository}/.github/workflows/canary.yml@refs/heads/main",
        "GITHUB_ACTION": "promptcanary",
        "GITHUB_ACTOR": "octocat",
        "GITHUB_ACTOR_ID": "583231",
        "GITHUB_TRIGGERING_ACTOR": "octocat",
        "GITHUB_RETENTION_DAYS": "90",
        "RUNNER_OS": "Linux",
        "RUNNER_ARCH": "X64",
        "RUNNER_NAME": "GitHub Actions 1",
        "RUNNER_ENVIRONMENT": "github-hosted",
        "RUNNER_TEMP": str(runner / "temp"),
        "RUNNER_TOOL_CACHE": str(runner / "tool-cache"),
        # As in the Docker image.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(REPO_ROOT),
        # Test isolation, not runner fidelity: the machine's /etc/gitconfig must not matter.
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    given = {name: str(value) for name, value in inputs.items()}
    if apply_action_defaults:
        context = {
            "github.token": FAKE_TOKEN,
            "github.workspace": str(workspace),
            "github.repository": repository,
            "github.event_name": event_name,
            "github.ref": result["GITHUB_REF"],
            "github.sha": result["GITHUB_SHA"],
            "github.server_url": result["GITHUB_SERVER_URL"],
            "github.api_url": api_url,
            "github.run_id": result["GITHUB_RUN_ID"],
            "runner.temp": result["RUNNER_TEMP"],
        }
        given = {**action_input_defaults(context), **given}
    for name, value in given.items():
        result[input_env_name(name)] = value

    for name, value in extra.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = value
    return result


def run_action(
    tmp_path: Path,
    *,
    inputs: dict[str, str],
    event_name: str,
    event: dict[str, Any],
    workspace: Path,
    env: Mapping[str, str | None] | None = None,
    github_api_url: str | None = None,
    timeout: float = 120,
    apply_action_defaults: bool = True,
    fresh: bool | None = None,
    signal: tuple[Callable[[], bool], int] | None = None,
) -> ActionResult:
    """Run ``entrypoint.py`` in ``workspace`` like the runner runs the Docker action.

    ``fresh=True`` starts a new interpreter; by default the step is forked from a warm one
    (:mod:`tests.e2e.launch` says what that changes). ``signal=(when, signum)`` sends
    ``signum`` to the step once ``when()`` is true, as the runner signals a cancelled job."""
    if not ENTRYPOINT.is_file():
        raise FileNotFoundError(f"{ENTRYPOINT} does not exist: nothing to run end to end")
    full_env = build_env(
        tmp_path,
        inputs=inputs,
        event_name=event_name,
        event=event,
        workspace=workspace,
        env=env,
        github_api_url=github_api_url,
        apply_action_defaults=apply_action_defaults,
    )
    files = Path(tempfile.mkdtemp(prefix="step-", dir=tmp_path))
    stdout_path, stderr_path = files / "stdout", files / "stderr"
    step = launch.start(full_env, workspace, stdout_path, stderr_path, fresh=fresh)
    try:
        if signal is not None:
            when, signum = signal
            while step.poll() is None and not when():
                time.sleep(0.05)
            step.send_signal(signum)
        returncode = step.wait(timeout)
    except subprocess.TimeoutExpired:
        printed = _read(stdout_path) + _read(stderr_path)
        raise ActionTimeout(
            f"entrypoint.py ran longer than {timeout}s; it printed:\n{printed}"
        ) from None
    return _result(returncode, _read(stdout_path), _read(stderr_path), full_env, workspace)


def signal_action(
    tmp_path: Path, *, when: Callable[[], bool], signum: int, **kwargs: Any
) -> ActionResult:
    """:func:`run_action` that sends ``signum`` to the step once ``when()`` is true, then waits
    for it to exit."""
    return run_action(tmp_path, signal=(when, signum), **kwargs)


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def _result(
    returncode: int, stdout: str, stderr: str, full_env: Mapping[str, str], workspace: Path
) -> ActionResult:
    outputs = parse_command_file(Path(full_env["GITHUB_OUTPUT"]).read_text(encoding="utf-8"))
    exported = parse_command_file(Path(full_env["GITHUB_ENV"]).read_text(encoding="utf-8"))
    summary = Path(full_env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    return ActionResult(
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        outputs=outputs,
        summary=summary,
        report_dir=_report_dir(outputs, full_env, workspace),
        exported_env=exported,
        env=full_env,
    )


def _report_dir(outputs: Mapping[str, str], env: Mapping[str, str], workspace: Path) -> Path:
    if outputs.get("report-dir"):
        reported = Path(outputs["report-dir"])
        return reported if reported.is_absolute() else workspace / reported
    working = Path(env.get(input_env_name("working-directory")) or ".")
    base = working if working.is_absolute() else workspace / working
    return base / (env.get(input_env_name("report-dir")) or "promptcanary-report")
