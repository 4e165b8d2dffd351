"""Run the action's image the way the GitHub runner runs a Docker action (a helper, not a test).

:func:`run_in_container` takes the environment :func:`tests.e2e.runner.build_env` prepares for a
subprocess run and turns it into the runner's ``docker run``:

* ``--workdir /github/workspace`` with the workspace mounted there, the command files
  (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ...) under ``/github/file_commands``, the event
  payload under ``/github/workflow``, ``HOME`` at ``/github/home`` and ``RUNNER_TEMP`` at
  ``/home/runner/work/_temp``, every one of them owned by another uid than the container's root
  (the runner's user is uid 1001);
* the variables passed by name (``-e INPUT_GITHUB-TOKEN``, hyphens kept) with their values in
  podman's own environment, as the runner does; only what the runner passes: ``INPUT_*``,
  ``GITHUB_*``, ``RUNNER_*``, ``HOME``, ``CI`` and the step's ``env:`` (``OPENAI_API_KEY``);
  nothing of this machine's Python set-up (``PYTHONPATH``, ``GIT_CONFIG_NOSYSTEM``, ``PATH``);
* host networking, so the fake LLM and GitHub servers on 127.0.0.1 are reachable.

A git ``origin`` that is a folder on disk is mounted at the same path, so the workspace's remote
URL works unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.e2e.runner import ActionResult, ActionTimeout, build_env, parse_command_file

RUNNER_UID = 1001
WORKSPACE = "/github/workspace"
FILE_COMMANDS = "/github/file_commands"
WORKFLOW = "/github/workflow"
HOME = "/github/home"
RUNNER_TEMP = "/home/runner/work/_temp"

#: Set by the test harness for a subprocess run; the runner does not pass them to a container.
_HOST_ONLY = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "GIT_CONFIG_NOSYSTEM",
        "LANG",
    }
)
_COMMAND_FILES = (
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
)


# podman raises a container's open-files and process limits by default, which a machine without
# CAP_SYS_RESOURCE (a CI job that is itself a container) refuses; lower limits always work.
LIMITS = ("--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096")


def podman() -> list[str]:
    """The podman command line prefix (rootful, runc runtime)."""
    binary = shutil.which("podman")
    if binary is None:
        raise FileNotFoundError("podman is not installed: run scripts/container/install-podman.sh")
    return [binary, "--runtime", "runc"]


def podman_run() -> list[str]:
    """``podman run --rm`` with the limits above."""
    return [*podman(), "run", "--rm", *LIMITS]


def container_env(host_env: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """The variables the runner passes, with host paths replaced by the container's."""
    runner = Path(host_env["RUNNER_TEMP"]).parent
    files = Path(host_env["GITHUB_OUTPUT"]).parent
    moves = {
        str(workspace.resolve()): WORKSPACE,
        str(files): FILE_COMMANDS,
        str(runner / "home"): HOME,
        str(runner / "temp"): RUNNER_TEMP,
    }
    env: dict[str, str] = {}
    for name, value in host_env.items():
        if name in _HOST_ONLY:
            continue
        for host, inside in moves.items():
            if value == host or value.startswith(host + "/"):
                value = inside + value[len(host) :]
                break
        env[name] = value
    env["GITHUB_EVENT_PATH"] = f"{WORKFLOW}/event.json"
    env["HOME"] = HOME
    return env


def run_in_container(
    image: str,
    host_env: Mapping[str, str],
    workspace: Path,
    *,
    extra_mounts: Sequence[Path] = (),
    timeout: float = 180,
    on_start: Callable[[], None] = lambda: None,
    on_exit: Callable[[], None] = lambda: None,
) -> ActionResult:
    """Run ``image`` like the runner runs the action; ``host_env`` comes from ``build_env``.
    ``on_start``/``on_exit`` are called just before and after ``podman run`` (bench/startup.py
    times the container with them, without the ownership changes around it)."""
    runner = Path(host_env["RUNNER_TEMP"]).parent
    files = Path(host_env["GITHUB_OUTPUT"]).parent
    workflow = runner / "workflow"
    workflow.mkdir(exist_ok=True)
    shutil.copy(host_env["GITHUB_EVENT_PATH"], workflow / "event.json")
    env = container_env(host_env, workspace)
    mounts = [
        (workspace.resolve(), WORKSPACE),
        (files, FILE_COMMANDS),
        (workflow, WORKFLOW),
        (runner / "home", HOME),
        (runner / "temp", RUNNER_TEMP),
    ]
    mounts += [(path.resolve(), str(path.resolve())) for path in extra_mounts]
    command = [*podman_run(), "--network", "host", "--workdir", WORKSPACE]
    for host, inside in mounts:
        command += ["--volume", f"{host}:{inside}"]
    for name in env:
        command += ["--env", name]
    command.append(image)

    owned = [path for path, _ in mounts[:5]]
    _chown(owned, RUNNER_UID)
    try:
        on_start()
        proc = subprocess.run(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        on_exit()
    except subprocess.TimeoutExpired as exc:
        raise ActionTimeout(f"the container ran longer than {timeout}s: {exc}") from exc
    finally:
        # Back to this process's uid, so the test's own git commands accept the checkout.
        _chown(owned, os.getuid())
    return _result(proc, host_env, workspace)


def container_runner(image: str, extra_mounts: Sequence[Path] = ()) -> Callable[..., ActionResult]:
    """A drop-in for :func:`tests.e2e.runner.run_action` that runs the action in ``image``."""

    def run(
        tmp_path: Path,
        *,
        workspace: Path,
        timeout: float = 180,
        **environment: Any,
    ) -> ActionResult:
        host_env = build_env(tmp_path, workspace=workspace, **environment)
        return run_in_container(
            image, host_env, workspace, extra_mounts=extra_mounts, timeout=max(timeout, 180)
        )

    return run


def _chown(paths: Sequence[Path], uid: int) -> None:
    for path in paths:
        subprocess.run(["chown", "-R", f"{uid}:{uid}", str(path)], check=True)


def _result(
    proc: subprocess.CompletedProcess[str], host_env: Mapping[str, str], workspace: Path
) -> ActionResult:
    read = {name: Path(host_env[name]).read_text(encoding="utf-8") for name in _COMMAND_FILES}
    outputs = parse_command_file(read["GITHUB_OUTPUT"])
    report = outputs.get("report-dir", "promptcanary-report")
    if report.startswith(WORKSPACE):
        report = str(workspace) + report[len(WORKSPACE) :]
    return ActionResult(
        returncode=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=outputs,
        summary=read["GITHUB_STEP_SUMMARY"],
        report_dir=workspace / report,
        exported_env=parse_command_file(read["GITHUB_ENV"]),
        env=dict(host_env),
    )
