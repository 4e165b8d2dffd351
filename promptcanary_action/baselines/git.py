"""Running git for the data-branch store: isolation from the user's index, and token hygiene.

The token reaches git only as an ``http.extraheader`` in *command-scope* configuration given
through the environment (``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``):
never on a command line (``GIT_TRACE`` would print it), never in a URL or a config file on disk.
Whatever git prints is scrubbed of the token before it can reach an exception or a log.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from promptcanary.core.redact import REDACTED

GIT_TIMEOUT = 300.0

_URL_USERINFO_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@'\"]+@")

# Variables that would redirect our commands to another repository, index or work tree.
_LEAKY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")


class GitCommandError(RuntimeError):
    """A git command failed; ``stderr`` is already scrubbed of the token."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.args_ = tuple(args)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"git {' '.join(args)} exited {returncode}: {stderr.strip()}")


def auth_header(token: str) -> str:
    """The header GitHub's git endpoints accept for an installation (workflow) token."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")
    return f"AUTHORIZATION: basic {basic}"


class Git:
    """Runs git in one repository with a prepared environment.

    Args:
        cwd: The repository (a work tree or a bare repository).
        env: The base environment (default: this process's); ``GIT_DIR`` and friends are dropped.
        token: Sent as an HTTP header to the remote; empty for none.
        config: Command-scope settings (e.g. a checkout's ``http.*`` credentials), given through
            the environment like the token; ``*.extraheader`` values are scrubbed like it.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        env: Mapping[str, str] | None = None,
        token: str = "",
        config: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.cwd = cwd
        self._token = token
        self._secrets = [
            part
            for key, value in config
            if key.lower().endswith(".extraheader")
            for part in (value, value.split()[-1] if value.split() else "")
            if len(part) >= 8  # never "redact" a short, common word out of every message
        ]
        base = dict(os.environ if env is None else env)
        for key in _LEAKY:
            base.pop(key, None)
        base.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C")
        # In a Docker action the workspace belongs to the runner's user, not the container's:
        # without this, git refuses the repository as of "dubious ownership".
        self._base_env = _with_config(base, [("safe.directory", "*"), *config])
        self.send_token = bool(token)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(self._base_env)
        if self.send_token and self._token:
            env = _with_config(env, [("http.extraheader", auth_header(self._token))])
        env.update(extra)
        return env

    def run(
        self,
        *args: str,
        input_bytes: bytes | None = None,
        extra_env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        git = shutil.which("git")
        if git is None:
            raise GitCommandError(
                args, 127, "git is not installed (the `branch` baseline store needs it)"
            )
        try:
            proc = subprocess.run(
                [git, *args],
                cwd=self.cwd,
                env=self.env(**dict(extra_env or {})),
                input=input_bytes,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise GitCommandError(args, -1, f"no answer within {GIT_TIMEOUT:.0f} s") from None
        if check and proc.returncode != 0:
            raise GitCommandError(args, proc.returncode, self.scrub(_text(proc.stderr)))
        return proc

    def out(
        self,
        *args: str,
        input_bytes: bytes | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> str:
        """stdout of a successful command, stripped."""
        proc = self.run(*args, input_bytes=input_bytes, extra_env=extra_env)
        return _text(proc.stdout).strip()

    def scrub(self, text: str) -> str:
        """``text`` without the token (or a configured header) in any form git could print it."""
        secrets = list(self._secrets)
        if self._token:
            secrets += [self._token, auth_header(self._token).split()[-1]]
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        # A remote URL may carry credentials of its own (https://user:token@host/…).
        return _URL_USERINFO_RE.sub(rf"\1{REDACTED}@", text)


def _with_config(env: dict[str, str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """``env`` with ``pairs`` appended to command-scope config (keeps any the caller set)."""
    result = dict(env)
    try:
        count = int(result.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    for key, value in pairs:
        result[f"GIT_CONFIG_KEY_{count}"] = key
        result[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    result["GIT_CONFIG_COUNT"] = str(count)
    return result


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
