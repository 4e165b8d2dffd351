"""Everything the action asks of GitHub, as one typed port.

:class:`GitHubPort` is implemented once for real by
:class:`promptcanary_action.github.client.GitHubClient` (the only PyGithub user) and once in
memory for tests (``tests/fakes/github_port_fake.py``). Publishing, post-comment mode and the
artifact baseline store take a ``GitHubPort``; ``main()`` builds the real one
(:func:`promptcanary_action.effects.github_client`).

Methods are grouped by REST resource and named for what the action means, not for the endpoint.
Every method either returns GitHub's answer or raises a
:class:`promptcanary_action.github.errors.GitHubError` whose message says what to change. Writes
that must stay single when retried find their earlier result first: comments and issues by a
hidden marker in the body, a check run by name, head SHA and the external id it was created
with. New needs (pull-request labels, the pull requests of a commit, issue events) are new
methods here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

CommentMode = Literal["update", "new"]


class AnnotationLike(Protocol):
    """What a check-run annotation needs (`promptcanary_action.annotations.Annotation` fits)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def annotation_level(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def message(self) -> str: ...
    @property
    def raw_details(self) -> str | None: ...


@dataclass(frozen=True)
class ArtifactInfo:
    id: int
    name: str
    expired: bool
    created_at: datetime | None
    head_branch: str | None
    workflow_run_id: int | None


@dataclass(frozen=True)
class PullInfo:
    """A pull request as approvals need it."""

    number: int
    head_sha: str
    base_ref: str
    labels: tuple[str, ...]
    merged: bool


@dataclass(frozen=True)
class LabelEvent:
    """The newest ``labeled`` event of one label on an issue or pull request."""

    actor: str
    created_at: datetime


class GitHubPort(Protocol):
    """The action's view of one repository on GitHub."""

    # -- pull requests -------------------------------------------------------------------------
    def upsert_comment(
        self, pr_number: int, body: str, marker: str, *, mode: CommentMode = "update"
    ) -> str:
        """Edit the action's comment carrying ``marker`` (``update``) or add one; its URL."""
        ...

    def pull_head_sha(self, pr_number: int) -> str:
        """The commit at the head of the pull request."""
        ...

    def pull_request(self, pr_number: int) -> PullInfo:
        """The pull request's head, base, labels (as GitHub has them now) and merged state."""
        ...

    def pulls_of_commit(self, sha: str) -> list[PullInfo]:
        """The pull requests that merged ``sha``, or whose head it is."""
        ...

    def own_comment(self, pr_number: int, marker: str) -> str | None:
        """The body of the action's own comment carrying ``marker``; None when there is none."""
        ...

    # -- issues' events --------------------------------------------------------------------------
    def last_labeled(self, issue_number: int, label: str) -> LabelEvent | None:
        """Who added ``label`` last, and when; None when no event says so."""
        ...

    # -- check runs ----------------------------------------------------------------------------
    def create_check_run(self, name: str, head_sha: str) -> int:
        """Start an ``in_progress`` check run on ``head_sha``; its id."""
        ...

    def complete_check_run(
        self,
        check_run_id: int,
        *,
        conclusion: str,
        title: str,
        summary: str,
        text: str = "",
        annotations: Sequence[AnnotationLike] = (),
    ) -> str:
        """Complete the check run with its output and every annotation; its URL."""
        ...

    # -- issues --------------------------------------------------------------------------------
    def upsert_drift_issue(self, marker: str, title: str, body: str) -> str:
        """Update the open issue carrying ``marker``, or open one; its URL."""
        ...

    def close_drift_issue(self, marker: str, comment: str) -> bool:
        """Comment on and close the open issue carrying ``marker``; False when there is none."""
        ...

    # -- artifacts and workflow runs -----------------------------------------------------------
    def list_artifacts(self, name: str) -> list[ArtifactInfo]:
        """Every artifact called ``name`` (expired ones included, flagged), newest first."""
        ...

    def download_artifact(self, artifact_id: int, destination: Path, *, max_bytes: int) -> None:
        """Stream the artifact's zip archive into ``destination``, at most ``max_bytes``;
        :class:`~promptcanary_action.github.errors.ArtifactTooLargeError` above it."""
        ...

    def workflow_run_conclusion(self, run_id: int) -> str | None:
        """The run's conclusion (``success``, ``failure``, …); None while it still runs."""
        ...
