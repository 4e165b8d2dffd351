"""Baselines as workflow artifacts (``baseline: artifact``): read via the API, written to disk.

Reading picks the newest non-expired artifact with the configured name from a *successful* run
on the base branch that holds this pair's baseline. Writing only puts the file in the report
folder: the workflow's ``actions/upload-artifact`` step publishes it (:data:`UPLOAD_STEP`).

Each artifact holds one promotion, so the history travels with it: ``history.jsonl`` beside the
baseline is the previous artifact's history plus this promotion, bounded to
:data:`~promptcanary_action.baselines.history.HISTORY_KEEP` lines.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptcanary.core.files import atomic_write_text
from promptcanary.core.models import BaselineSnapshot
from promptcanary.storage.base import BaselineFileError, snapshot_from_json, snapshot_to_json
from promptcanary.storage.layout import BASELINE_FILE, baseline_file, history_file
from promptcanary_action.baselines.base import BaselineStoreError
from promptcanary_action.baselines.history import (
    HISTORY_KEEP,
    append_history,
    history_record,
    parse_history,
)
from promptcanary_action.github.errors import GitHubError
from promptcanary_action.github.port import ArtifactInfo, GitHubPort

ARTIFACT_DIR = "baseline-artifact"
MAX_DOWNLOADS = 10
"""Artifacts opened at most per lookup: older ones are from runs that promoted other pairs."""

UPLOAD_STEP = """\
      # baseline: artifact — publish the promoted baseline(s) for later runs to compare with.
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: promptcanary-baseline          # the action's `baseline-artifact` input
          path: promptcanary-report/baseline-artifact/   # `report-dir`/baseline-artifact
          if-no-files-found: ignore            # nothing is written when no run was promoted
          retention-days: 90                   # a baseline older than this is gone
"""


class ArtifactBackend:
    """Args: github (the port it reads artifacts through), name (``baseline-artifact``),
    report_dir, max_bytes (the largest archive, and file in it, read; archives are streamed to
    a temporary folder), clock (the time written to history lines)."""

    def __init__(
        self,
        github: GitHubPort,
        name: str,
        *,
        report_dir: Path,
        max_bytes: int,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._github = github
        self.name = name
        self.report_dir = report_dir
        self.max_bytes = max_bytes
        self._clock = clock
        self._conclusions: dict[int, str | None] = {}
        self._archives: dict[int, Path] = {}
        self._downloads: Path | None = None
        self._histories: dict[tuple[str, str], str] = {}
        """(suite, model) → the history text found beside the loaded baseline."""

    def load(self, suite_name: str, model_id: str, *, for_ref: str) -> BaselineSnapshot | None:
        try:
            return self._load(suite_name, model_id, for_ref)
        except GitHubError as exc:
            # As an unfetchable data branch: the run is reported, the step exits 2 naming the
            # permission (a missing `actions: read` must not pass for "no baseline yet").
            raise BaselineFileError(f"artifact '{self.name}'", str(exc).rstrip(".")) from None

    def _load(self, suite_name: str, model_id: str, for_ref: str) -> BaselineSnapshot | None:
        opened = 0
        for artifact in self._candidates(for_ref):
            if opened == MAX_DOWNLOADS:
                break
            if artifact.workflow_run_id is None or not self._succeeded(artifact.workflow_run_id):
                continue
            opened += 1
            found = self._read(artifact, suite_name, model_id)
            if found is not None:
                return found
        return None

    def _candidates(self, branch: str) -> list[ArtifactInfo]:
        """Non-expired artifacts of ``branch`` with our name, newest first."""
        epoch = datetime.min.replace(tzinfo=UTC)
        usable = [
            a
            for a in self._github.list_artifacts(self.name)
            if a.name == self.name and not a.expired and a.head_branch == branch
        ]
        return sorted(usable, key=lambda a: (a.created_at or epoch, a.id), reverse=True)

    def _succeeded(self, run_id: int) -> bool:
        # A failed run's artifact may hold a baseline of a run that should not have been kept.
        if run_id not in self._conclusions:
            self._conclusions[run_id] = self._github.workflow_run_conclusion(run_id)
        return self._conclusions[run_id] == "success"

    def _read(
        self, artifact: ArtifactInfo, suite_name: str, model_id: str
    ) -> BaselineSnapshot | None:
        where = f"artifact '{self.name}' #{artifact.id}"
        try:
            archive = zipfile.ZipFile(self._download(artifact.id))
        except zipfile.BadZipFile:
            raise BaselineFileError(where, "not a zip archive") from None
        except OSError as exc:  # e.g. a full disk under the temporary folder
            raise BaselineFileError(where, f"cannot be stored to be read ({exc})") from None
        with archive:
            member = _member_for(archive, suite_name, model_id)
            if member is None:
                return None
            location = f"{where}:{member}"
            size = archive.getinfo(member).file_size  # zipfile never inflates past it
            if size > self.max_bytes:
                raise BaselineFileError(
                    location,
                    f"is {size} bytes uncompressed, more than the {self.max_bytes / 2**20:g} MiB "
                    "the action reads (input `max-artifact-mb`)",
                )
            try:
                text = archive.read(member).decode("utf-8")
            except (zipfile.BadZipFile, UnicodeDecodeError, OSError) as exc:
                raise BaselineFileError(location, f"cannot be read ({exc})") from None
            history = _history_beside(archive, member, suite_name, model_id, self.max_bytes)
        snapshot = snapshot_from_json(text, location)
        if member.endswith(baseline_file(suite_name, model_id)) or _is_pair(
            snapshot, suite_name, model_id
        ):
            self._histories[(suite_name, model_id)] = history
            return snapshot
        return None

    def _download(self, artifact_id: int) -> Path:
        if self._downloads is None:
            # Removed when the backend is collected or at exit; holds at most MAX_DOWNLOADS zips.
            self._downloads = Path(tempfile.mkdtemp(prefix="promptcanary-artifacts-"))
            weakref.finalize(self, shutil.rmtree, self._downloads, ignore_errors=True)
        if artifact_id not in self._archives:
            path = self._downloads / f"{artifact_id}.zip"
            self._github.download_artifact(artifact_id, path, max_bytes=self.max_bytes)
            self._archives[artifact_id] = path
        return self._archives[artifact_id]

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str:
        suite_name, model_id = snapshot.suite_name, snapshot.provider.model_id
        root = self.report_dir / ARTIFACT_DIR
        path = root.joinpath(*baseline_file(suite_name, model_id).split("/"))
        record = history_record(
            snapshot, sha=sha, ref=ref, now=self._clock(), regressions=regressions
        )
        previous = self._histories.get((suite_name, model_id), "")
        history = append_history(previous, record, keep=HISTORY_KEEP)
        try:
            atomic_write_text(path, snapshot_to_json(snapshot))
            atomic_write_text(
                root.joinpath(*history_file(suite_name, model_id).split("/")), history
            )
        except OSError as exc:  # a full disk: the run is still reported, unpromoted
            raise BaselineStoreError(
                f"cannot write {exc.filename or path}: {exc.strerror or exc}"
            ) from None
        self._histories[(suite_name, model_id)] = history
        return str(path)

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]:
        """The history that came with the baseline :meth:`load` found (empty before a load)."""
        return parse_history(self._histories.get((suite_name, model_id), ""))


def _member_for(archive: zipfile.ZipFile, suite_name: str, model_id: str) -> str | None:
    """The pair's file in the layout, else the archive's only baseline file (checked later)."""
    wanted = baseline_file(suite_name, model_id)
    names = [n for n in archive.namelist() if not n.endswith("/")]
    for name in names:
        if name == wanted or name.endswith(f"/{wanted}"):
            return name
    singles = [n for n in names if n.rsplit("/", 1)[-1] == BASELINE_FILE or n.endswith(".json")]
    return singles[0] if len(singles) == 1 and len(names) == 1 else None


def _history_beside(
    archive: zipfile.ZipFile, member: str, suite_name: str, model_id: str, max_bytes: int
) -> str:
    """The history next to ``member`` in the archive; "" when there is none, it is larger than
    ``max_bytes`` or unreadable (history is informational: it never fails a run)."""
    wanted = member[: -len(BASELINE_FILE)] + history_file(suite_name, model_id).rsplit("/", 1)[1]
    if not member.endswith(BASELINE_FILE) or wanted not in archive.namelist():
        return ""
    if archive.getinfo(wanted).file_size > max_bytes:
        return ""
    try:
        return archive.read(wanted).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, OSError):
        return ""


def _is_pair(snapshot: BaselineSnapshot, suite_name: str, model_id: str) -> bool:
    # The snapshot names its pair in full: folder slugs may collide, these may not.
    return snapshot.suite_name == suite_name and snapshot.provider.model_id == model_id
