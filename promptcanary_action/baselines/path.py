"""Baselines as files in the workspace (``baseline: path``), committed by the user if they wish."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot
from promptcanary.storage.base import BaselineFileError, snapshot_from_json, snapshot_to_json
from promptcanary.storage.layout import baseline_file, history_file
from promptcanary_action.baselines.base import BaselineStoreError
from promptcanary_action.baselines.history import (
    HISTORY_KEEP,
    append_history,
    history_record,
    parse_history,
)


class PathBackend:
    """``<root>/<suite-slug>/<model-slug>/baseline.json`` and a bounded ``history.jsonl``.

    Args:
        root: The baseline folder (``baseline-path`` resolved against the working directory).
        clock: The time written to history lines.
    """

    def __init__(
        self, root: Path, *, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.root = root
        self._clock = clock

    def _path(self, relative: str) -> Path:
        return self.root.joinpath(*relative.split("/"))

    def load(self, suite_name: str, model_id: str, *, for_ref: str = "") -> BaselineSnapshot | None:
        # One folder holds one baseline per pair: `for_ref` is the branch whose baseline is
        # wanted, and only the default branch writes here, so there is nothing to choose from.
        path = self._path(baseline_file(suite_name, model_id))
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise BaselineFileError(str(path), f"cannot be read ({exc})") from None
        return snapshot_from_json(text, str(path))

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str:
        model_id = snapshot.provider.model_id
        path = self._path(baseline_file(snapshot.suite_name, model_id))
        record = history_record(
            snapshot, sha=sha, ref=ref, now=self._clock(), regressions=regressions
        )
        history = self._path(history_file(snapshot.suite_name, model_id))
        try:
            atomic_write_text(path, snapshot_to_json(snapshot))
            atomic_write_text(
                history, append_history(_read_or_empty(history), record, keep=HISTORY_KEEP)
            )
        except OSError as exc:  # a full disk: the run is still reported, unpromoted
            raise BaselineStoreError(
                f"cannot write {exc.filename or path}: {exc.strerror}"
            ) from None
        return str(path)

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]:
        return parse_history(_read_or_empty(self._path(history_file(suite_name, model_id))))


def _read_or_empty(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
