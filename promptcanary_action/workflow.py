"""GitHub Actions workflow commands, step outputs and the job summary.

The runner executes any stdout line of the form ``::command::`` — including one inside a model
answer. Everything we print about a run either goes through :func:`escape_data` /
:func:`escape_property` (our own messages) or :meth:`Workflow.print_untrusted`, which suspends
command processing with a random ``::stop-commands::`` token for the duration of the text.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from promptcanary.core.render.markdown import sanitize


def escape_data(value: str) -> str:
    """A workflow-command message: ``%``, CR and LF encoded as the runner decodes them."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A workflow-command property (``title=``, ``file=``): data escaping plus ``:`` and ``,``."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _new_token() -> str:
    # Not compared with anything: it only has to be unguessable by the text it guards.
    return secrets.token_hex(16)


class Workflow:
    """Writes workflow commands to ``stdout`` and appends to the runner's command files.

    ``output_path`` / ``summary_path`` are ``GITHUB_OUTPUT`` / ``GITHUB_STEP_SUMMARY``; when one is
    ``None`` (a local run) the writes are kept in :attr:`outputs` / :attr:`summary` only.
    """

    def __init__(
        self, stdout: TextIO, output_path: Path | None = None, summary_path: Path | None = None
    ) -> None:
        self.stdout = stdout
        self.output_path = output_path
        self.summary_path = summary_path
        self.outputs: dict[str, str] = {}
        self.summary: list[str] = []

    # -- command files ------------------------------------------------------------------------

    def set_output(self, name: str, value: str) -> None:
        """Set a step output; always the multi-line form, so any value is safe."""
        if not name or any(ch in name for ch in "\r\n=<") or name != name.strip():
            raise ValueError(f"invalid output name {name!r}")
        self.outputs[name] = value
        if self.output_path is None:
            return
        lines = value.split("\n")
        delimiter = f"ghadelimiter_{_new_token()}"
        while delimiter in lines or any(line.rstrip("\r") == delimiter for line in lines):
            delimiter = f"ghadelimiter_{_new_token()}"
        with self.output_path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

    def add_summary(self, markdown: str) -> None:
        """Append markdown to the job summary (the caller budgets it; GitHub's cap is 1 MiB)."""
        self.summary.append(markdown)
        if self.summary_path is None:
            return
        with self.summary_path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write(markdown if markdown.endswith("\n") else markdown + "\n")

    # -- workflow commands --------------------------------------------------------------------

    def _command(self, name: str, message: str, properties: dict[str, str | int | None]) -> None:
        props = ",".join(
            f"{key}={escape_property(sanitize(str(value)))}"
            for key, value in properties.items()
            if value is not None
        )
        head = f"::{name} {props}::" if props else f"::{name}::"
        self._write(head + escape_data(sanitize(message)))

    def _write(self, line: str) -> None:
        self.stdout.write(line + "\n")
        self.stdout.flush()

    def debug(self, message: str) -> None:
        self._command("debug", message, {})

    def notice(
        self,
        message: str,
        *,
        title: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        self._command("notice", message, {"title": title, "file": file, "line": line})

    def warning(
        self,
        message: str,
        *,
        title: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        self._command("warning", message, {"title": title, "file": file, "line": line})

    def error(
        self,
        message: str,
        *,
        title: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        self._command("error", message, {"title": title, "file": file, "line": line})

    @contextmanager
    def group(self, name: str) -> Iterator[None]:
        """A collapsible log group around the body."""
        self._write(f"::group::{escape_data(sanitize(name))}")
        try:
            yield
        finally:
            self._write("::endgroup::")

    def print_untrusted(self, text: str) -> None:
        """Print text (model output) so that no line of it can act as a workflow command."""
        token = _new_token()
        while token in text:
            token = _new_token()
        body = sanitize(text)
        self._write(f"::stop-commands::{token}")
        self._write(body.removesuffix("\n"))
        self._write(f"::{token}::")
