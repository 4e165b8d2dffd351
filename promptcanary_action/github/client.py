"""The action's GitHub REST client: the only module that imports PyGithub.

Every call goes through `GitHubClient._call`, which retries what GitHub says is worth retrying
(5xx, a dropped connection, a secondary rate limit — waiting at least `Retry-After` seconds, as
GitHub asks) and turns every other failure into one of our domain errors, whose messages say what
to change in the workflow. PyGithub's own urllib3 retries are switched off (`retry=None`) so there
is exactly one retry policy, and its sleep is injectable for tests.

The workflow token cannot call `GET /user`, so the action finds its own comment and issue by a
hidden marker in the body and by the author being a Bot, never by asking who it is.

A create that failed with a 5xx or a dropped connection may still have been carried out by
GitHub, so before retrying it `_call` looks for what it would have made (`find_earlier`) and
takes that instead: a check run by name, head SHA and the `external_id` we set on it; an issue or
comment by its hidden marker (a comment in mode `new` by a per-run write marker, since earlier
runs' comments carry the same sticky marker).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import github
import requests
from github import Auth, GithubException

from promptcanary.core.http_headers import parse_retry_after
from promptcanary_action.github.errors import (
    ArtifactTooLargeError,
    GitHubError,
    GitHubNotFoundError,
    GitHubPermissionError,
    GitHubRateLimitError,
)
from promptcanary_action.github.limits import (
    ANNOTATION_TEXT_CHARS,
    ANNOTATIONS_PER_REQUEST,
    CHECK_OUTPUT_CHARS,
    CHECK_TITLE_CHARS,
    COMMENT_CHARS,
)
from promptcanary_action.github.port import (
    AnnotationLike,
    ArtifactInfo,
    CommentMode,
    LabelEvent,
    PullInfo,
)

__all__ = ["GitHubClient"]

T = TypeVar("T")

SECONDARY_RATE_WAIT = 60.0  # GitHub: without Retry-After, wait at least a minute
API_VERSION = "2022-11-28"
ISSUE_LABEL = "promptcanary"

_UNKNOWN = object()


@dataclass(frozen=True)
class _Op:
    """One API operation as a user would name it, for error messages."""

    action: str  # "create the PR comment"
    permission: str  # "pull-requests: write"
    target: str  # "pull request #7 in octo-org/octo-repo" (what a 404 did not find)


@dataclass(frozen=True)
class _Failure:
    """A failed request, whatever the library that made it. status None: no HTTP answer."""

    status: int | None
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name), None)

    @property
    def is_secondary_rate_limit(self) -> bool:
        text = self.message.lower()
        return self.status == 429 or (
            self.status == 403
            and ("secondary rate limit" in text or self.header("retry-after") is not None)
        )

    @property
    def may_have_applied(self) -> bool:
        """A write answered so may still have been carried out (a 4xx or 429 never is)."""
        return self.status is None or self.status >= 500

    @property
    def is_primary_rate_limit(self) -> bool:
        text = self.message.lower()
        exhausted = self.header("x-ratelimit-remaining") == "0" or text.startswith(
            "api rate limit exceeded"
        )
        return self.status in (403, 429) and exhausted and "secondary" not in text


class _HttpFailure(Exception):
    """Raised by our own `requests` calls so that `_call` treats them like PyGithub's errors."""

    def __init__(self, failure: _Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class GitHubClient:
    """The :class:`~promptcanary_action.github.port.GitHubPort` over GitHub's REST API."""

    def __init__(
        self,
        token: str,
        repository: str,
        api_url: str,
        *,
        per_page: int = 100,
        retry_sleep: Callable[[float], None] = time.sleep,
        max_retries: int = 3,
        retry_backoff: float = 1.0,
        max_retry_wait: float = 300.0,
        timeout: float = 30.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        run_key: str | None = None,
    ) -> None:
        """`run_key` names this workflow run attempt (e.g. "1234/1"): the identity of what it
        writes, so a retried create finds its earlier result. None outside a workflow run: a
        random key then keeps retries single within this client."""
        self._token = token
        self._run_key = run_key if run_key is not None else secrets.token_hex(16)
        self._new_comments = 0
        self.repository = repository
        self.api_url = api_url.rstrip("/")
        self._sleep = retry_sleep
        self._max_retries = max_retries
        self._backoff = retry_backoff
        self._max_wait = max_retry_wait
        self._timeout = timeout
        self._clock = clock
        # lazy=True: objects built from a URL make no request until an unset attribute is read,
        # so the repository, a PR's issue and a check run cost no GET of their own.
        self._gh = github.Github(
            auth=Auth.Token(token),
            base_url=self.api_url,
            per_page=per_page,
            timeout=int(timeout),
            retry=None,
            lazy=True,
            # The action makes a handful of writes; secondary limits are handled by `_call`.
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self._repo_obj: Any = None
        self._token_login: str | object | None = _UNKNOWN

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient(repository={self.repository!r}, api_url={self.api_url!r})"

    @property
    def _repo(self) -> Any:
        if self._repo_obj is None:
            self._repo_obj = self._gh.get_repo(self.repository)
        return self._repo_obj

    def _is_token_user(self, login: str) -> bool:
        """True when `login` is the user behind a personal access token.

        Asked only when a marked item was written by a user, and at most once: the workflow
        token gets 403 from `GET /user`, so for it the answer is "no user" without a retry.
        """
        if self._token_login is _UNKNOWN:
            try:
                self._token_login = str(self._gh.get_user().login)
            except (GithubException, requests.RequestException):
                self._token_login = None
        return login == self._token_login

    # -- sticky PR comment ---------------------------------------------------------------------
    def upsert_comment(
        self, pr_number: int, body: str, marker: str, *, mode: CommentMode = "update"
    ) -> str:
        """Edit the action's comment carrying `marker` (or create it); returns its html_url."""
        body = _with_marker(body, marker, COMMENT_CHARS)
        target = f"pull request #{pr_number} in {self.repository}"
        issue = self._repo.get_issue(pr_number)
        if mode == "update":
            listing = _Op("list the PR comments", "pull-requests: write", target)
            own = self._call(
                listing, lambda: _first_own(issue.get_comments(), marker, self._is_token_user)
            )
            if own is not None:
                editing = _Op("update the PR comment", "pull-requests: write", target)
                self._call(editing, lambda: own.edit(body))
                return str(own.html_url)
        key = marker
        if mode == "new":  # every run adds one: earlier runs' comments carry `marker` too
            self._new_comments += 1  # two in one run are two writes
            write_id = self._write_id("comment", str(pr_number), marker, str(self._new_comments))
            key = f"<!-- promptcanary-write:{write_id} -->"
            body = f"{_with_marker(body, marker, COMMENT_CHARS - len(key) - 1)}\n{key}"
        creating = _Op("create the PR comment", "pull-requests: write", target)
        created = self._call(
            creating,
            lambda: issue.create_comment(body),
            find_earlier=lambda: _first_own(issue.get_comments(), key, self._is_token_user),
        )
        return str(created.html_url)

    # -- check runs ----------------------------------------------------------------------------
    def create_check_run(self, name: str, head_sha: str) -> int:
        op = _Op("create the check run", "checks: write", f"commit {head_sha[:12]}")
        started = self._clock()
        external_id = self._write_id("check-run", name, head_sha)

        def find() -> Any:
            runs = self._repo.get_commit(head_sha).get_check_runs(check_name=name)
            return next((r for r in runs if r.external_id == external_id), None)

        run = self._call(
            op,
            lambda: self._repo.create_check_run(
                name=name,
                head_sha=head_sha,
                status="in_progress",
                started_at=started,
                external_id=external_id,
            ),
            find_earlier=find,
        )
        return int(run.id)

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
        """Send annotations in batches (GitHub appends them), the last with the conclusion.

        Returns the check run's html_url.
        """
        op = _Op("update the check run", "checks: write", f"check run {check_run_id}")
        run = self._repo.get_check_run(check_run_id)  # lazy: no GET, just its URL
        output: dict[str, Any] = {
            "title": _cap(title, CHECK_TITLE_CHARS),
            "summary": _cap(summary, CHECK_OUTPUT_CHARS),
        }
        if text:
            output["text"] = _cap(text, CHECK_OUTPUT_CHARS)
        batches = _batches([_annotation_json(a) for a in annotations], ANNOTATIONS_PER_REQUEST)
        for batch in batches[:-1]:
            self._call(op, _bound(run.edit, output={**output, "annotations": batch}))
        last = batches[-1]
        final_output = {**output, "annotations": last} if last else output
        completed = self._clock()
        self._call(
            op,
            lambda: run.edit(
                status="completed",
                conclusion=conclusion,
                completed_at=completed,
                output=final_output,
            ),
        )
        return str(run.html_url)

    # -- drift issues --------------------------------------------------------------------------
    def upsert_drift_issue(self, marker: str, title: str, body: str) -> str:
        """Update the open issue carrying `marker`, or open one; returns its html_url."""
        body = _with_marker(body, marker, COMMENT_CHARS)
        issue = self._find_drift_issue(marker)
        target = f"the drift issue in {self.repository}"
        if issue is not None:
            editing = _Op("update the drift issue", "issues: write", target)
            self._call(editing, lambda: issue.edit(title=title, body=body))
            return str(issue.html_url)
        creating = _Op("open the drift issue", "issues: write", self.repository)
        created = self._call(
            creating,
            lambda: self._repo.create_issue(title=title, body=body, labels=[ISSUE_LABEL]),
            find_earlier=lambda: self._find_drift_issue(marker),
        )
        return str(created.html_url)

    def close_drift_issue(self, marker: str, comment: str) -> bool:
        """Comment on and close the open issue carrying `marker`; False when there is none."""
        issue = self._find_drift_issue(marker)
        if issue is None:
            return False
        op = _Op("close the drift issue", "issues: write", f"issue #{issue.number}")
        self._call(op, lambda: issue.create_comment(comment))
        self._call(op, lambda: issue.edit(state="closed", state_reason="completed"))
        return True

    def _find_drift_issue(self, marker: str) -> Any:
        # Scan every open issue rather than filter by label: a label can be removed by a person
        # or dropped by GitHub for a token without push access, the marker cannot.
        op = _Op("list the open issues", "issues: write", self.repository)

        def find() -> Any:
            issues = self._repo.get_issues(state="open")
            # The issues API lists pull requests too: a bot's PR quoting the marker is not ours.
            return _first_own(issues, marker, self._is_token_user, skip=_is_pull_request)

        return self._call(op, find)

    # -- artifacts and workflow runs -----------------------------------------------------------
    def list_artifacts(self, name: str) -> list[ArtifactInfo]:
        """Every artifact called `name` (expired ones included, flagged), newest first."""
        op = _Op(f"list the artifacts named {name!r}", "actions: read", self.repository)
        found = self._call(op, lambda: [_artifact_info(a) for a in self._repo.get_artifacts(name)])
        epoch = datetime.min.replace(tzinfo=UTC)
        return sorted(found, key=lambda a: (a.created_at or epoch, a.id), reverse=True)

    def download_artifact(self, artifact_id: int, destination: Path, *, max_bytes: int) -> None:
        """Stream the artifact's zip archive into ``destination``, never more than ``max_bytes``
        (:class:`ArtifactTooLargeError` above it: the file is then incomplete).

        GitHub answers with a 302 to blob storage, which must be fetched without our
        Authorization header; requests drops it when the redirect changes host.
        """
        op = _Op("download the artifact", "actions: read", f"artifact {artifact_id}")
        url = f"{self.api_url}/repos/{self.repository}/actions/artifacts/{artifact_id}/zip"
        what = f"artifact {artifact_id}"
        self._call(op, lambda: self._stream_to(url, destination, max_bytes, what))

    def workflow_run_conclusion(self, run_id: int) -> str | None:
        """The run's conclusion ("success", "failure", …), None while it is still running."""
        op = _Op("read the workflow run", "actions: read", f"workflow run {run_id}")
        return self._call(op, lambda: self._repo.get_workflow_run(run_id).conclusion)

    def pull_head_sha(self, pr_number: int) -> str:
        """The commit at the head of a pull request (post-comment mode checks it)."""
        target = f"pull request #{pr_number} in {self.repository}"
        op = _Op("read the pull request", "pull-requests: read", target)
        return str(self._call(op, lambda: self._repo.get_pull(pr_number).head.sha))

    # -- what approvals read --------------------------------------------------------------------
    def pull_request(self, pr_number: int) -> PullInfo:
        """The pull request as GitHub has it now (labels included)."""
        target = f"pull request #{pr_number} in {self.repository}"
        op = _Op("read the pull request's labels", "pull-requests: read", target)
        return self._call(op, lambda: _pull_info(self._repo.get_pull(pr_number)))

    def pulls_of_commit(self, sha: str) -> list[PullInfo]:
        """``GET /repos/{owner}/{repo}/commits/{sha}/pulls`` (the commit itself is not fetched)."""
        op = _Op(
            "list the pull requests of the commit", "pull-requests: read", f"commit {sha[:12]}"
        )
        return self._call(
            op, lambda: [_pull_info(p) for p in self._repo.get_commit(sha).get_pulls()]
        )

    def own_comment(self, pr_number: int, marker: str) -> str | None:
        """The body of this token's comment carrying ``marker`` (never a person's)."""
        target = f"pull request #{pr_number} in {self.repository}"
        op = _Op("list the PR comments", "pull-requests: read", target)
        issue = self._repo.get_issue(pr_number)
        own = self._call(op, lambda: _first_own(issue.get_comments(), marker, self._is_token_user))
        return None if own is None else str(own.body or "")

    def last_labeled(self, issue_number: int, label: str) -> LabelEvent | None:
        """The newest ``labeled`` event of ``label`` (events come oldest first)."""
        target = f"the events of #{issue_number} in {self.repository}"
        op = _Op("read who added the label", "issues: read", target)
        issue = self._repo.get_issue(issue_number)

        def newest() -> LabelEvent | None:
            found: LabelEvent | None = None
            for event in issue.get_events():
                name = event.label.name if event.label is not None else None
                if event.event == "labeled" and name == label and event.actor is not None:
                    found = LabelEvent(str(event.actor.login), _aware(event.created_at))
            return found

        return self._call(op, newest)

    def _stream_to(self, url: str, destination: Path, max_bytes: int, what: str) -> None:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "promptcanary-action",
        }
        with requests.get(url, headers=headers, timeout=self._timeout, stream=True) as response:
            if response.status_code >= 400:
                raise _HttpFailure(_failure_from_response(response))
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(what, max_bytes, f"{int(declared)} bytes")
            written = 0
            with destination.open("wb") as out:  # a retry starts the file again
                for chunk in response.iter_content(chunk_size=1 << 16):
                    written += len(chunk)
                    if written > max_bytes:  # no or a false Content-Length: count what comes
                        raise _too_large(what, max_bytes, f"over {max_bytes} bytes")
                    out.write(chunk)

    # -- the one retry policy and error mapping ------------------------------------------------
    def _call(
        self, op: _Op, fn: Callable[[], T], *, find_earlier: Callable[[], T | None] | None = None
    ) -> T:
        """`fn()`, retried as GitHub allows. For a create, `find_earlier` returns what an
        earlier attempt made (or None); it is asked before retrying an attempt that may have
        been carried out (a 5xx or no answer), and its own failures are retried alike."""
        attempt = 0
        failure: _Failure | None = None
        while True:
            try:
                if find_earlier is not None and failure is not None and failure.may_have_applied:
                    earlier = find_earlier()
                    if earlier is not None:
                        return earlier
                return fn()
            except GithubException as exc:
                failure = _failure_from_github(exc)
            except _HttpFailure as exc:
                failure = exc.failure
            except requests.RequestException as exc:
                failure = _Failure(None, type(exc).__name__)
            delay = self._retry_delay(failure, attempt)
            if delay is None or attempt >= self._max_retries:
                raise self._error(op, failure, gave_up=delay is not None) from None
            self._sleep(delay)
            attempt += 1

    def _retry_delay(self, failure: _Failure, attempt: int) -> float | None:
        """Seconds to wait before retrying, None when retrying cannot help."""
        retry_after = parse_retry_after(
            failure.header("retry-after"), clock=lambda: self._clock().timestamp()
        )
        if failure.is_primary_rate_limit:
            return None  # resets within the hour; waiting that long in CI helps nobody
        if failure.is_secondary_rate_limit:
            wait = retry_after if retry_after is not None else SECONDARY_RATE_WAIT * 2**attempt
        elif failure.status is None or failure.status >= 500:
            wait = max(retry_after or 0.0, self._backoff * 2**attempt)
        else:
            return None
        return wait if wait <= self._max_wait else None

    def _error(self, op: _Op, failure: _Failure, *, gave_up: bool) -> GitHubError:
        said = self._redact(failure.message)
        status = failure.status
        if failure.is_primary_rate_limit:
            reset = _epoch_seconds(failure.header("x-ratelimit-reset"))
            when = (
                datetime.fromtimestamp(reset, UTC).strftime(" until %H:%M UTC")
                if reset is not None
                else ""
            )
            return GitHubRateLimitError(
                f"GitHub's API rate limit is used up{when}; could not {op.action}.", status=status
            )
        if failure.is_secondary_rate_limit:
            asked = failure.header("retry-after")
            detail = f" (it asked to wait {asked} s)" if asked else ""
            return GitHubRateLimitError(
                f"GitHub's secondary rate limit stopped us from trying to {op.action}{detail}; "
                "run fewer jobs against the API at once or retry later.",
                status=status,
            )
        if status is None:
            return GitHubError(f"could not reach GitHub at {self.api_url} to {op.action}: {said}")
        if status == 401:
            return GitHubError(
                f"GitHub rejected the token (401 {said}) when trying to {op.action}: check the "
                "`github-token` input.",
                status=401,
            )
        if status == 403:
            return GitHubPermissionError(op.action, op.permission, detail=said)
        if status in (404, 410):
            return GitHubNotFoundError(
                f"GitHub could not find {op.target} ({status} {said}) when trying to "
                f"{op.action}; for a private repository this can also mean the token lacks "
                f"`permissions: {op.permission}`.",
                status=status,
            )
        errors = "; ".join(self._redact(e) for e in failure.errors)
        retried = f" after {self._max_retries + 1} attempts" if gave_up else ""
        return GitHubError(
            f"GitHub answered {status}{retried} when trying to {op.action}: {said}"
            + (f" ({errors})" if errors else ""),
            status=status,
        )

    def _write_id(self, *parts: str) -> str:
        """The deterministic identity of one create in this run attempt."""
        text = "\n".join((self._run_key, *parts))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


# -- pure helpers ------------------------------------------------------------------------------
def _first_own(
    items: Iterable[Any],
    marker: str,
    is_token_user: Callable[[str], bool],
    *,
    skip: Callable[[Any], bool] = lambda item: False,
) -> Any:
    """The first item whose body carries `marker`, that this token wrote and `skip` keeps.

    The workflow token and GitHub Apps write as a Bot; a personal access token writes as its
    user, which `is_token_user` recognises. A person's comment that quotes the marker is never
    taken over. Iteration stops at the first match, so pages after it are not fetched.
    """
    for item in items:
        if marker not in (item.body or "") or item.user is None:
            continue
        if (item.user.type == "Bot" or is_token_user(item.user.login)) and not skip(item):
            return item
    return None


def _pull_info(pull: Any) -> PullInfo:
    return PullInfo(
        number=int(pull.number),
        head_sha=str(pull.head.sha),
        base_ref=str(pull.base.ref),
        labels=tuple(str(label.name) for label in pull.labels),
        merged=pull.merged_at is not None,
    )


def _aware(moment: datetime) -> datetime:
    """PyGithub's times as timezone-aware UTC (older releases return naive UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _is_pull_request(issue: Any) -> bool:
    # Asked only of marked items: for a listed issue without the key PyGithub makes one GET.
    return issue.pull_request is not None


def _with_marker(body: str, marker: str, limit: int) -> str:
    """`body` cut to `limit` characters, carrying `marker` so later runs find it."""
    if marker in body and len(body) <= limit:
        return body
    if marker not in body:
        body = f"{body}\n\n{marker}"
    if len(body) <= limit:
        return body
    without = body.replace(marker, "")
    return f"{_cap(without, limit - len(marker) - 2)}\n\n{marker}"


def _too_large(what: str, max_bytes: int, size: str) -> ArtifactTooLargeError:
    return ArtifactTooLargeError(
        f"{what} is larger ({size}) than the {max_bytes / 2**20:g} MiB the action reads "
        "(input `max-artifact-mb`); raise the input, or keep fewer files in the artifact"
    )


def _cap(text: str, limit: int) -> str:
    note = "\n\n… (cut to fit GitHub's size limit)"
    if len(text) <= limit:
        return text
    if limit <= len(note):
        return text[:limit]
    return text[: limit - len(note)] + note


def _bound(fn: Callable[..., T], **kwargs: Any) -> Callable[[], T]:
    """`fn` with its arguments fixed now (a lambda in a loop would see the last ones)."""
    return lambda: fn(**kwargs)


def _batches(items: list[T], size: int) -> list[list[T]]:
    """`items` in chunks of at most `size`; always at least one (possibly empty) chunk."""
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def _annotation_json(a: AnnotationLike) -> dict[str, Any]:
    start = max(int(a.start_line), 1)
    data: dict[str, Any] = {
        "path": a.path,
        "start_line": start,
        "end_line": max(int(a.end_line), start),
        "annotation_level": a.annotation_level,
        "message": _cap(a.message or "(no message)", ANNOTATION_TEXT_CHARS),
    }
    if a.title:
        data["title"] = _cap(a.title, CHECK_TITLE_CHARS)
    if a.raw_details:
        data["raw_details"] = _cap(a.raw_details, ANNOTATION_TEXT_CHARS)
    return data


def _artifact_info(artifact: Any) -> ArtifactInfo:
    run = artifact.workflow_run
    return ArtifactInfo(
        id=int(artifact.id),
        name=str(artifact.name),
        expired=bool(artifact.expired),
        created_at=artifact.created_at,
        head_branch=run.head_branch if run is not None else None,
        workflow_run_id=int(run.id) if run is not None else None,
    )


def _epoch_seconds(value: str | None) -> float | None:
    """``X-RateLimit-Reset``: the Unix time the limit resets; None if absent or unreadable."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _failure_from_github(exc: GithubException) -> _Failure:
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or exc.message or exc.data or "")
    errors = tuple(
        str(e.get("message") or e.get("code") or e) if isinstance(e, dict) else str(e)
        for e in data.get("errors") or ()
    )
    return _Failure(exc.status, message, dict(exc.headers or {}), errors)


def _failure_from_response(response: requests.Response) -> _Failure:
    try:
        data = response.json()
    except ValueError:
        data = None
    message = data.get("message") if isinstance(data, dict) else None
    return _Failure(
        response.status_code, str(message or response.reason or ""), dict(response.headers)
    )
