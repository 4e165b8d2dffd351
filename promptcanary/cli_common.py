"""What every ``promptcanary`` command shares: the exit codes, :class:`CliError`, and reading
the files a command is given (suite, probe modules, runs, baselines) with errors that name them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from promptcanary.core.models import BaselineSnapshot
from promptcanary.core.spec import SuiteSpec
from promptcanary.storage.base import BaselineFileError
from promptcanary.storage.file import DEFAULT_DIRECTORY
from promptcanary.storage.layout import baseline_file

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_UNTRUSTED = 0, 1, 2, 3
DEFAULT_BASELINE_DIR = DEFAULT_DIRECTORY


class CliError(Exception):
    """A problem the user can fix; ``code`` is the exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def import_probe_modules(entries: Sequence[str]) -> None:
    """Import custom probe files or modules so their probes register before the suite loads."""
    from promptcanary.core.probes.plugins import ProbeModuleError
    from promptcanary.core.probes.plugins import import_probe_modules as import_all

    try:
        import_all(entries, base_dir=Path.cwd(), label="--probe-module")
    except ProbeModuleError as exc:
        raise CliError(str(exc)) from None


def load_suite(path: str) -> SuiteSpec:
    from promptcanary.core.config.schema import load_suite as load
    from promptcanary.core.config.source import SuiteFileNotFoundError

    try:
        return load(path)
    except SuiteFileNotFoundError as exc:
        raise CliError(f"{exc}; write a starter suite with `promptcanary init`") from None


def read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def find_baseline(args: argparse.Namespace, suite: str, model_id: str) -> BaselineSnapshot | None:
    """What a run decides against (and ``compare`` compares with): ``--baseline FILE``, else the
    newest baseline of ``suite`` on ``model_id`` (the model that answers, as the action keys it)
    in ``--baseline-dir``: a snapshot this CLI saved, or the one the action's ``baseline: path``
    keeps there (``<suite>/<model>/baseline.json``), whichever was created last; else none."""
    from promptcanary.storage.base import snapshot_from_json

    if args.baseline:
        return snapshot_from_json(read_text(args.baseline, "baseline file"), args.baseline)
    directory = Path(args.baseline_dir)
    if not directory.is_dir():  # nothing saved yet (and no folder made for reading)
        return None
    try:
        found = [
            s
            for s in (_saved(directory, suite, model_id), _actions(directory, suite, model_id))
            if s
        ]
    except BaselineFileError as exc:
        # Its own remedy, not BaselineFileError's "re-create it with run --save-baseline":
        # `run` would stop on the same file.
        raise CliError(
            f"{exc.location}: {exc.problem}: the newest baseline of {suite!r} on {model_id!r} "
            "cannot be read; delete or move it, or pass --baseline FILE or another --baseline-dir"
        ) from None
    return max(found, key=lambda snapshot: _utc(snapshot.created_at), default=None)


def _saved(directory: Path, suite: str, model_id: str) -> BaselineSnapshot | None:
    from promptcanary.storage.file import FileBaselineStore

    try:
        return FileBaselineStore(directory).load_latest(suite, model_id)
    except FileNotFoundError:
        return None


def _actions(directory: Path, suite: str, model_id: str) -> BaselineSnapshot | None:
    """The baseline the action's ``baseline: path`` keeps for the pair in ``directory``."""
    from promptcanary.storage.base import snapshot_from_json

    path = directory.joinpath(*baseline_file(suite, model_id).split("/"))
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineFileError(str(path), f"cannot be read ({exc})") from None
    return snapshot_from_json(text, str(path))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


EXAMPLES = {"conversation": (), "dataset": ("data/tickets.csv",)}
"""``init --example NAME``: starters in the package's ``starters/`` folder, and the files
each writes next to the suite."""
