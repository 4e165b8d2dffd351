"""FileBaselineStore: baseline snapshots as JSON files in one directory.

File naming: ``{suite_slug}__{model_slug}__{timestamp}_{id8}.json``. The timestamp sorts
chronologically; the id prefix lets a snapshot be found by id without reading every file.
"""

from __future__ import annotations

import glob
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot, CanaryRunResult, slugify
from promptcanary.storage.base import BaselineFileError, snapshot_from_json, snapshot_to_json


def legacy_slug(name: str, replaced: str) -> str:
    """How PromptCanary 0.2.2 put a suite or model name in a file name (cut to 40 characters)."""
    for char in replaced:
        name = name.replace(char, "_" if char == " " else "-")
    return name[:40]


class AmbiguousSnapshotIdError(LookupError):
    """A snapshot id prefix matches more than one snapshot."""


DEFAULT_DIRECTORY = ".promptcanary/baselines"
"""Where the CLI keeps baselines too (``--baseline-dir``), relative to the working directory."""


class FileBaselineStore:
    """Stores and retrieves :class:`BaselineSnapshot` objects as JSON files.

    Args:
        directory: Where baseline JSON files are stored; created if it does not exist.
    """

    def __init__(self, directory: str | Path = DEFAULT_DIRECTORY) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    # ── naming ───────────────────────────────────────────────────────────────

    @staticmethod
    def _filename(*, suite_name: str, model_id: str, ts: datetime, snap_id: str) -> str:
        # Names sort chronologically only if every stamp is in one zone: UTC (naive = UTC).
        utc = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
        stamp = utc.strftime("%Y%m%dT%H%M%S%fZ")
        return f"{slugify(suite_name, 60)}__{slugify(model_id, 60)}__{stamp}_{snap_id[:8]}.json"

    def _list_files(self, suite_name: str | None = None, model_id: str | None = None) -> list[Path]:
        suite = slugify(suite_name, 60) if suite_name else "*"
        model = slugify(model_id, 60) if model_id else "*"
        found = set(self.directory.glob(f"{suite}__{model}__*.json"))
        # PromptCanary 0.2.2 named files without lowercasing ("My_Suite__openai-gpt-4.1__…").
        legacy_suite = glob.escape(legacy_slug(suite_name, "/ ")) if suite_name else "*"
        legacy_model = glob.escape(legacy_slug(model_id, "/:")) if model_id else "*"
        found.update(self.directory.glob(f"{legacy_suite}__{legacy_model}__*.json"))
        return sorted(found)

    # ── reading ──────────────────────────────────────────────────────────────

    def _load_file(self, path: Path) -> BaselineSnapshot:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BaselineFileError(str(path), f"cannot be read ({exc.strerror})") from None
        except UnicodeDecodeError as exc:
            raise BaselineFileError(str(path), f"not UTF-8 text ({exc.reason})") from None
        return snapshot_from_json(text, str(path))

    def load_from_path(self, path: str | Path) -> BaselineSnapshot:
        """Load a snapshot directly from a JSON file path."""
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"Baseline file not found: {p}")
        return self._load_file(p)

    def load(self, snapshot_id: str) -> BaselineSnapshot:
        """Load a snapshot by its id, or by a prefix of it that matches exactly one snapshot.

        Raises:
            FileNotFoundError: If no snapshot with that id exists.
            AmbiguousSnapshotIdError: If the prefix matches several snapshots.
        """
        if not snapshot_id:
            raise FileNotFoundError("No baseline snapshot id given.")
        matches = self._find(snapshot_id)
        exact = [m for m in matches if m[1].snapshot_id == snapshot_id]
        if exact:
            return exact[0][1]
        if len(matches) > 1:
            names = ", ".join(path.name for path, _ in matches)
            raise AmbiguousSnapshotIdError(
                f"Snapshot id prefix '{snapshot_id}' matches {len(matches)} baselines ({names}); "
                "give more characters of the id."
            )
        if not matches:
            available = [f.name for f in self._list_files()]
            raise FileNotFoundError(
                f"No baseline snapshot found with id '{snapshot_id}' in {self.directory}. "
                f"Available baselines: {available}"
            )
        return matches[0][1]

    def _find(self, snapshot_id: str) -> list[tuple[Path, BaselineSnapshot]]:
        """Files holding a snapshot whose id starts with ``snapshot_id``, found by name first."""
        candidates = sorted(self.directory.glob(f"*_{glob.escape(snapshot_id[:8])}*.json"))
        matches = [
            (path, snap)
            for path in candidates
            if (snap := self._load_file(path)).snapshot_id.startswith(snapshot_id)
        ]
        if matches:
            return matches
        # Files named without the id: PromptCanary's own {suite}__{model}__{timestamp}.json, or
        # renamed by hand. Reading every file is slow but only happens when the names fail.
        for path in sorted(self.directory.glob("*.json")):
            if path in candidates:
                continue
            try:
                snap = self._load_file(path)
            except BaselineFileError:
                continue  # not a snapshot (or a broken one): it cannot be the one asked for
            if snap.snapshot_id.startswith(snapshot_id):
                matches.append((path, snap))
        return matches

    def load_latest(self, suite_name: str, model_id: str | None = None) -> BaselineSnapshot:
        """Load the most recently saved baseline for a suite (and model, if given).

        Raises:
            FileNotFoundError: If no matching baseline exists.
        """
        candidates = self._list_files(suite_name=suite_name, model_id=model_id)
        if not candidates:
            raise FileNotFoundError(
                f"No baseline found for suite={suite_name!r}"
                + (f", model={model_id!r}" if model_id else "")
                + f". Store directory: {self.directory}"
            )
        # The timestamp in the name sorts chronologically within one suite and model. Names are
        # slugs cut to 60 characters, so another suite or model may share them: check the content.
        for path in sorted(candidates, key=lambda p: p.name.rsplit("__", 1)[-1], reverse=True):
            snapshot = self._load_file(path)
            if snapshot.suite_name == suite_name and model_id in (None, snapshot.provider.model_id):
                return snapshot
        raise FileNotFoundError(
            f"No baseline found for suite={suite_name!r}"
            + (f", model={model_id!r}" if model_id else "")
            + f" (only other suites or models with a similar name). Store directory: "
            f"{self.directory}"
        )

    def list_baselines(
        self, suite_name: str | None = None, model_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Stored baselines, newest first, with light metadata.

        Keys: ``path``, ``snapshot_id``, ``suite_name``, ``model_id``, ``created_at``, ``note``.
        A file that cannot be read is listed with an ``error`` key instead of being skipped.
        """
        entries: list[dict[str, Any]] = []
        files = self._list_files(suite_name=suite_name, model_id=model_id)
        for f in sorted(files, key=lambda p: p.name.rsplit("__", 1)[-1], reverse=True):
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                if not isinstance(data.get("provider") or {}, dict):
                    raise ValueError("'provider' is not a JSON object")
            except (OSError, ValueError) as exc:
                entries.append({"path": str(f), "error": f"unreadable baseline file: {exc}"})
                continue
            provider = data.get("provider") or {}
            if (suite_name is not None and data.get("suite_name") != suite_name) or (
                model_id is not None and provider.get("model_id") != model_id
            ):
                continue  # a similar name whose slug is the same
            entries.append(
                {
                    "path": str(f),
                    "snapshot_id": data.get("snapshot_id", "?"),
                    "suite_name": data.get("suite_name", "?"),
                    "model_id": (data.get("provider") or {}).get("model_id", "?"),
                    "created_at": data.get("created_at", "?"),
                    "note": data.get("note", data.get("_note", "")),  # v1 wrote "_note"
                }
            )
        return entries

    # ── writing ──────────────────────────────────────────────────────────────

    def save(
        self,
        run_result: CanaryRunResult,
        *,
        note: str = "",
        snapshot_id: str | None = None,
    ) -> BaselineSnapshot:
        """Save a run as a baseline snapshot (atomically; secrets redacted)."""
        snapshot = BaselineSnapshot.of_run(run_result, note=note)
        if snapshot_id:
            snapshot = snapshot.model_copy(update={"snapshot_id": snapshot_id})
        self.save_snapshot(snapshot)
        return snapshot

    def save_snapshot(self, snapshot: BaselineSnapshot) -> Path:
        """Write an existing snapshot; returns its path."""
        path = self.directory / self._filename(
            suite_name=snapshot.suite_name,
            model_id=snapshot.provider.model_id,
            ts=snapshot.created_at,
            snap_id=snapshot.snapshot_id,
        )
        atomic_write_text(path, snapshot_to_json(snapshot))
        return path

    def delete(self, snapshot_id: str) -> bool:
        """Delete a baseline by snapshot id (or unique prefix). Returns True if deleted."""
        try:
            snapshot = self.load(snapshot_id)
        except FileNotFoundError:
            return False
        deleted = False
        for path, found in self._find(snapshot.snapshot_id):
            if found.snapshot_id == snapshot.snapshot_id:
                path.unlink(missing_ok=True)
                deleted = True
        return deleted
