"""What the triggering event says: PR number, base/head SHAs and branches, default branch, fork.

:func:`load_event_payload` reads ``GITHUB_EVENT_PATH`` and never raises: a missing or unreadable
file gives an empty payload and a message worth a warning. :meth:`EventContext.from_event` is
pure and tolerant of missing keys, falling back to the ``GITHUB_*`` variables, because payloads of
``schedule`` (and of hand-made test events) carry little or nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from promptcanary_action.settings import GitHubEnv

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
# The merge queue's temporary branch: gh-readonly-queue/<base>/pr-<number>-<head sha>.
_QUEUE_BRANCH_RE = re.compile(r"^gh-readonly-queue/.+/pr-(\d+)-[0-9a-f]+$")
_PULL_REF_RE = re.compile(r"^refs/pull/(\d+)/")
_ZERO_SHA_RE = re.compile(r"^0+$")


def load_event_payload(path: Path | None) -> tuple[dict[str, Any], str | None]:
    """The event payload, and why it is empty when it could not be read (None when it was)."""
    if path is None:
        return {}, "GITHUB_EVENT_PATH is not set: the event payload is unknown"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"cannot read the event payload {path}: {exc}"
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"the event payload {path} is not valid JSON: {exc}"
    if not isinstance(payload, dict):
        return {}, f"the event payload {path} is not a JSON object"
    return payload, None


def branch_of(ref: str | None) -> str | None:
    """``refs/heads/main`` → ``main``; a bare branch name is kept; tags and PR refs → None."""
    if not ref:
        return None
    if ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/") or None
    if ref.startswith("refs/"):
        return None
    return ref


def _obj(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _str(data: Any, key: str) -> str | None:
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _int(data: Any, key: str) -> int | None:
    value = data.get(key) if isinstance(data, dict) else None
    # bool is an int in Python; a PR number never is one.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _sha(value: str | None) -> str | None:
    """None for the all-zero SHA GitHub sends for a created or deleted branch."""
    return None if value is None or _ZERO_SHA_RE.match(value) else value


@dataclass(frozen=True)
class EventContext:
    """The facts of the triggering event that decide what a run does and where it reports."""

    event_name: str
    sha: str
    """The commit the workflow checked out (``GITHUB_SHA``; a merge commit for PRs)."""
    head_sha: str
    """The commit to attach a check run to: the PR head, the pushed or queued commit."""
    pr_number: int | None = None
    base_sha: str | None = None
    base_ref: str | None = None
    """Branch name (no ``refs/heads/``) of the PR's or merge group's base."""
    head_ref: str | None = None
    default_branch: str | None = None
    """None when the payload does not say (e.g. an unreadable event file)."""
    is_fork: bool = False
    """The PR's head lives in another repository (its token is read-only, secrets are absent)."""
    is_merge_group: bool = False
    ref_name: str | None = None
    """The branch the run is on for push, schedule, dispatch and other non-PR events."""
    workflow_run_id: int | None = None
    workflow_run_event: str | None = None
    """For ``workflow_run``: the event of the run that triggered this one."""
    action: str | None = None
    """The payload's ``action`` (``opened``, ``labeled``, ``unlabeled``, ...)."""
    pr_labels: tuple[str, ...] | None = None
    """The pull request's label names when the event happened; None when the payload lacks them."""
    event_label: str | None = None
    """The label a ``labeled``/``unlabeled`` event is about."""
    sender: str | None = None
    """Who triggered the event (for a ``labeled`` event: who added the label)."""
    warnings: tuple[str, ...] = ()

    @property
    def is_pull_request(self) -> bool:
        return self.event_name in PULL_REQUEST_EVENTS

    @property
    def commit_sha(self) -> str:
        """The commit this run's results are about: ``head_sha``, else ``sha`` ("" outside CI)."""
        return self.head_sha or self.sha

    @property
    def is_default_branch(self) -> bool:
        return self.ref_name is not None and self.ref_name == self.default_branch

    @classmethod
    def from_env(cls, env: GitHubEnv) -> EventContext:
        """Read ``env.event_path`` and parse it; an unreadable file becomes a warning."""
        payload, problem = load_event_payload(env.event_path)
        context = cls.from_event(env.event_name, payload, env)
        if problem is None:
            return context
        return _with_warning(context, problem)

    @classmethod
    def from_event(cls, event_name: str, payload: dict[str, Any], env: GitHubEnv) -> EventContext:
        default_branch = _str(_obj(payload, "repository"), "default_branch")
        if event_name in PULL_REQUEST_EVENTS:
            return _pull_request(event_name, payload, env, default_branch)
        if event_name == "merge_group":
            return _merge_group(payload, env, default_branch)
        if event_name == "workflow_run":
            return _workflow_run(payload, env, default_branch)
        ref_name = branch_of(_str(payload, "ref")) or env.ref_branch
        if event_name == "schedule" and default_branch is None:
            # GitHub runs scheduled workflows only on the default branch's latest commit, and
            # the schedule payload has no `repository`: the run's branch is the default branch.
            default_branch = ref_name
        head_sha = (_sha(_str(payload, "after")) if event_name == "push" else None) or env.sha
        return EventContext(
            event_name=event_name,
            sha=env.sha,
            head_sha=head_sha,
            default_branch=default_branch,
            ref_name=ref_name,
        )


def _with_warning(context: EventContext, warning: str) -> EventContext:
    return replace(context, warnings=(*context.warnings, warning))


def _pull_request(
    event_name: str, payload: dict[str, Any], env: GitHubEnv, default_branch: str | None
) -> EventContext:
    pr = _obj(payload, "pull_request")
    base, head = _obj(pr, "base"), _obj(pr, "head")
    warnings: list[str] = []
    if not pr:
        warnings.append(f"the {event_name} payload has no pull_request object")
    number = _int(pr, "number") or _int(payload, "number")
    if number is None:
        match = _PULL_REF_RE.match(env.ref)
        number = int(match[1]) if match else None
    base_repo = _str(_obj(base, "repo"), "full_name") or env.repository or None
    head_repo = _str(_obj(head, "repo"), "full_name")
    # A deleted fork leaves `head.repo` null: still a fork as far as permissions go.
    is_fork = bool(pr) and (head_repo is None or head_repo != base_repo)
    return EventContext(
        event_name=event_name,
        sha=env.sha,
        head_sha=_str(head, "sha") or env.sha,
        pr_number=number,
        base_sha=_str(base, "sha"),
        base_ref=_str(base, "ref") or env.base_ref or None,
        head_ref=_str(head, "ref") or env.head_ref or None,
        default_branch=default_branch,
        is_fork=is_fork,
        action=_str(payload, "action"),
        pr_labels=_label_names(pr),
        event_label=_str(_obj(payload, "label"), "name"),
        sender=_str(_obj(payload, "sender"), "login"),
        warnings=tuple(warnings),
    )


def _label_names(pr: dict[str, Any]) -> tuple[str, ...] | None:
    labels = pr.get("labels")
    if not isinstance(labels, list):
        return None
    return tuple(n for n in (_str(label, "name") for label in labels) if n is not None)


def _merge_group(
    payload: dict[str, Any], env: GitHubEnv, default_branch: str | None
) -> EventContext:
    group = _obj(payload, "merge_group")
    head_ref = branch_of(_str(group, "head_ref"))
    match = _QUEUE_BRANCH_RE.match(head_ref or "")
    return EventContext(
        event_name="merge_group",
        sha=env.sha,
        head_sha=_str(group, "head_sha") or env.sha,
        # The queue branch names the PR at the head of the group: the one to comment on.
        pr_number=int(match[1]) if match else None,
        base_sha=_str(group, "base_sha"),
        base_ref=branch_of(_str(group, "base_ref")),
        head_ref=head_ref,
        default_branch=default_branch,
        is_merge_group=True,
        warnings=() if group else ("the merge_group payload has no merge_group object",),
    )


def _workflow_run(
    payload: dict[str, Any], env: GitHubEnv, default_branch: str | None
) -> EventContext:
    run = _obj(payload, "workflow_run")
    pulls = run.get("pull_requests")
    # GitHub leaves `pull_requests` empty when the PR comes from a fork: the number must then
    # come from the file the triggering run left behind (mode: post-comment).
    first = pulls[0] if isinstance(pulls, list) and pulls and isinstance(pulls[0], dict) else {}
    head_repo = _str(_obj(run, "head_repository"), "full_name")
    base_repo = _str(_obj(run, "repository"), "full_name") or env.repository or None
    return EventContext(
        event_name="workflow_run",
        sha=env.sha,
        head_sha=_str(run, "head_sha") or env.sha,
        pr_number=_int(first, "number"),
        base_sha=_str(_obj(first, "base"), "sha"),
        base_ref=_str(_obj(first, "base"), "ref"),
        head_ref=_str(run, "head_branch"),
        default_branch=default_branch,
        is_fork=head_repo is not None and head_repo != base_repo,
        ref_name=env.ref_branch,
        workflow_run_id=_int(run, "id"),
        workflow_run_event=_str(run, "event"),
    )
