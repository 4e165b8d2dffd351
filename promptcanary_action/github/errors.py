"""GitHub's failures as the action understands them: domain errors whose messages say the fix.

No PyGithub here: code that only handles GitHub failures (publishing, baselines) imports this
module, and PyGithub is loaded only when a client is built
(:mod:`promptcanary_action.github.client`).
"""

from __future__ import annotations

FORK_HINT = (
    " On a pull request from a fork the token is read-only whatever the workflow asks for: the "
    "comment is saved in the `comment-file` output; upload it as an artifact and post it from a "
    "workflow triggered by `workflow_run` that runs this action with `mode: post-comment`."
)
_HINTS = {
    "pull-requests: write": FORK_HINT,
    "checks: write": (
        " On a pull request from a fork the token is read-only: the report is in the job summary."
    ),
}


class GitHubError(Exception):
    """A GitHub API call failed; the message says what was tried and what GitHub answered."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ArtifactTooLargeError(GitHubError):
    """An artifact is larger than the action reads (input ``max-artifact-mb``)."""


class GitHubPermissionError(GitHubError):
    """403: the token lacks a permission; the message names the `permissions:` entry needed."""

    def __init__(self, operation: str, permission: str, *, detail: str = "") -> None:
        message = (
            f"GitHub refused to {operation} (403): the workflow needs `permissions: {permission}`."
        )
        if detail:
            message += f" GitHub said: {detail}."
        message += _HINTS.get(permission, "")
        super().__init__(message, status=403)
        self.operation = operation
        self.permission = permission


class GitHubNotFoundError(GitHubError):
    """404 (or 410 for an expired artifact): the message says what was not found."""


class GitHubRateLimitError(GitHubError):
    """The API rate limit is exhausted, or GitHub asked us to wait longer than we are willing to."""
