"""The baseline backend protocol and the factory that picks one from the ``baseline`` input."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from promptcanary.core.models import BaselineSnapshot
from promptcanary_action.errors import UsageError
from promptcanary_action.github_port import GitHubPort
from promptcanary_action.settings import Settings


class BaselineStoreError(RuntimeError):
    """A baseline could not be written (or the store cannot be reached); says what to change."""


class BaselineBackend(Protocol):
    """Where baselines are read from and promoted to.

    ``load`` returns None when there is no baseline yet and raises
    :class:`promptcanary.storage.base.BaselineFileError` (naming the location) when there is one
    that cannot be read. ``save`` returns the location written, for reports.
    """

    def load(self, suite_name: str, model_id: str, *, for_ref: str) -> BaselineSnapshot | None: ...

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str: ...

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]: ...


def make_backend(settings: Settings, github: GitHubPort | None, base_dir: Path) -> BaselineBackend:
    """The backend for ``settings.baseline``; nothing touches git or the network until used.

    ``github`` is None without a token or repository; only ``artifact`` needs it.
    """
    # Imported here: the implementations import BaselineStoreError from this module.
    from promptcanary_action.baselines.artifact import ArtifactBackend
    from promptcanary_action.baselines.branch import BranchBackend
    from promptcanary_action.baselines.none import NoneBackend
    from promptcanary_action.baselines.path import PathBackend

    kind = settings.baseline
    if kind == "none":
        return NoneBackend()
    if kind == "path":
        return PathBackend(base_dir / settings.baseline_path)
    if kind == "artifact":
        if github is None:
            raise UsageError(
                "input 'baseline': artifact reads baselines through the GitHub API: set "
                "`github-token` (the default `${{ github.token }}` works, with "
                "`permissions: actions: read`)"
            )
        return ArtifactBackend(
            github,
            settings.baseline_artifact,
            report_dir=base_dir / settings.report_dir,
            max_bytes=settings.max_artifact_mb * 2**20,
        )
    return BranchBackend.for_workspace(
        base_dir,
        settings.baseline_branch,
        token=settings.github_token,
        server_url=settings.github.server_url,
        repository=settings.github.repository,
    )
