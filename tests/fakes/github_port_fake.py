"""An in-memory :class:`~promptcanary_action.github.port.GitHubPort` for fast tests.

One repository's pull-request comments, check runs, issues, pull-request heads and artifacts, kept
as plain data a test can read back. Every call is recorded (``calls``, ``named``);
``fail["method"] = error`` makes that method raise the given :class:`GitHubError` (after recording
the call), the way the real client reports a refusal. The wire-level behaviour (pagination,
retries, OpenAPI shapes) is tested against ``tests/fakes/github_server.py`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptcanary_action.github.errors import ArtifactTooLargeError, GitHubError
from promptcanary_action.github.port import (
    AnnotationLike,
    ArtifactInfo,
    CommentMode,
    LabelEvent,
    PullInfo,
)

DEFAULT_HEAD = "a" * 40


@dataclass
class FakeComment:
    id: int
    pr_number: int
    body: str


@dataclass
class FakeCheckRun:
    id: int
    name: str
    head_sha: str
    status: str = "in_progress"
    conclusion: str | None = None
    output: dict[str, str] = field(default_factory=dict)
    annotations: list[AnnotationLike] = field(default_factory=list)


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str
    state: str = "open"
    comments: list[str] = field(default_factory=list)


@dataclass
class FakeGitHubPort:
    """Implements GitHubPort in memory; see the module docstring."""

    fail: dict[str, GitHubError] = field(default_factory=dict)
    head: str = DEFAULT_HEAD
    """What ``pull_head_sha`` answers for any pull request not in ``heads``."""
    heads: dict[int, str] = field(default_factory=dict)
    comments: list[FakeComment] = field(default_factory=list)
    check_runs: dict[int, FakeCheckRun] = field(default_factory=dict)
    issues: list[FakeIssue] = field(default_factory=list)
    artifacts: list[tuple[ArtifactInfo, bytes]] = field(default_factory=list)
    run_conclusions: dict[int, str | None] = field(default_factory=dict)
    pulls: dict[int, PullInfo] = field(default_factory=dict)
    """Pull requests by number (``pull_request``), also found by head or ``merge_commits``;
    any other number is an open, unlabelled pull request at ``head``."""
    merge_commits: dict[str, int] = field(default_factory=dict)
    """Merge commit SHA → the pull request it merged (``pulls_of_commit``)."""
    label_events: dict[int, LabelEvent] = field(default_factory=dict)
    """Issue number → the newest ``labeled`` event of the approval label."""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    # -- test helpers --------------------------------------------------------------------------
    def named(self, method: str) -> list[dict[str, Any]]:
        """The arguments of every call of ``method``, in order."""
        return [args for name, args in self.calls if name == method]

    def add_artifact(self, info: ArtifactInfo, archive: bytes, *, conclusion: str | None) -> None:
        """An artifact, and the conclusion of the workflow run that uploaded it."""
        self.artifacts.append((info, archive))
        if info.workflow_run_id is not None:
            self.run_conclusions[info.workflow_run_id] = conclusion

    def _record(self, method: str, **args: Any) -> None:
        self.calls.append((method, args))
        if method in self.fail:
            raise self.fail[method]

    # -- pull requests -------------------------------------------------------------------------
    def upsert_comment(
        self, pr_number: int, body: str, marker: str, *, mode: CommentMode = "update"
    ) -> str:
        self._record("upsert_comment", pr_number=pr_number, body=body, marker=marker, mode=mode)
        own = next(
            (c for c in self.comments if c.pr_number == pr_number and marker in c.body), None
        )
        if mode == "update" and own is not None:
            own.body = body
        else:
            own = FakeComment(len(self.comments) + 1, pr_number, body)
            self.comments.append(own)
        return f"https://github.test/pr/{pr_number}#comment-{own.id}"

    def pull_head_sha(self, pr_number: int) -> str:
        self._record("pull_head_sha", pr_number=pr_number)
        return self.heads.get(pr_number, self.head)

    def pull_request(self, pr_number: int) -> PullInfo:
        self._record("pull_request", pr_number=pr_number)
        # Like pull_head_sha: any other pull request exists, open, unlabelled, at ``head``.
        unlisted = PullInfo(pr_number, self.heads.get(pr_number, self.head), "main", (), False)
        return self.pulls.get(pr_number, unlisted)

    def pulls_of_commit(self, sha: str) -> list[PullInfo]:
        self._record("pulls_of_commit", sha=sha)
        merged = self.merge_commits.get(sha)
        return [p for p in self.pulls.values() if p.number == merged or p.head_sha == sha]

    def own_comment(self, pr_number: int, marker: str) -> str | None:
        self._record("own_comment", pr_number=pr_number, marker=marker)
        own = [c for c in self.comments if c.pr_number == pr_number and marker in c.body]
        return own[0].body if own else None

    def last_labeled(self, issue_number: int, label: str) -> LabelEvent | None:
        self._record("last_labeled", issue_number=issue_number, label=label)
        return self.label_events.get(issue_number)

    # -- check runs ----------------------------------------------------------------------------
    def create_check_run(self, name: str, head_sha: str) -> int:
        self._record("create_check_run", name=name, head_sha=head_sha)
        run_id = 77 + len(self.check_runs)
        self.check_runs[run_id] = FakeCheckRun(run_id, name, head_sha)
        return run_id

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
        self._record(
            "complete_check_run",
            check_run_id=check_run_id,
            conclusion=conclusion,
            title=title,
            summary=summary,
            text=text,
            annotations=list(annotations),
        )
        run = self.check_runs.setdefault(check_run_id, FakeCheckRun(check_run_id, "", ""))
        run.status, run.conclusion = "completed", conclusion
        run.output = {"title": title, "summary": summary, "text": text}
        run.annotations = list(annotations)
        return f"https://github.test/runs/{check_run_id}"

    # -- issues --------------------------------------------------------------------------------
    def _open_issue(self, marker: str) -> FakeIssue | None:
        return next((i for i in self.issues if i.state == "open" and marker in i.body), None)

    def upsert_drift_issue(self, marker: str, title: str, body: str) -> str:
        self._record("upsert_drift_issue", marker=marker, title=title, body=body)
        issue = self._open_issue(marker)
        body = body if marker in body else f"{body}\n\n{marker}"
        if issue is None:
            issue = FakeIssue(len(self.issues) + 1, title, body)
            self.issues.append(issue)
        issue.title, issue.body = title, body
        return f"https://github.test/issues/{issue.number}"

    def close_drift_issue(self, marker: str, comment: str) -> bool:
        self._record("close_drift_issue", marker=marker, comment=comment)
        issue = self._open_issue(marker)
        if issue is None:
            return False
        issue.comments.append(comment)
        issue.state = "closed"
        return True

    # -- artifacts and workflow runs -----------------------------------------------------------
    def list_artifacts(self, name: str) -> list[ArtifactInfo]:
        self._record("list_artifacts", name=name)
        return [info for info, _ in self.artifacts if info.name == name]

    def download_artifact(self, artifact_id: int, destination: Path, *, max_bytes: int) -> None:
        self._record("download_artifact", artifact_id=artifact_id, max_bytes=max_bytes)
        data = next(data for info, data in self.artifacts if info.id == artifact_id)
        if len(data) > max_bytes:
            raise ArtifactTooLargeError(f"artifact {artifact_id} is larger than {max_bytes} bytes")
        destination.write_bytes(data)

    def workflow_run_conclusion(self, run_id: int) -> str | None:
        self._record("workflow_run_conclusion", run_id=run_id)
        return self.run_conclusions[run_id]
