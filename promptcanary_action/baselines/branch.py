"""Baselines on an orphan data branch of the repository itself (``baseline: branch``).

Layout on the branch: ``<suite-slug>/<model-slug>/baseline.json`` and ``history.jsonl``, plus a
generated ``README.md``. All git work happens in a private bare repository whose ``origin`` is
the checkout's (see :func:`open_repository`): reading fetches the branch into a private ref and
reads blobs from it; writing builds a commit with plumbing in a temporary index and pushes it.
Nothing in the user's checkout (HEAD, index, working tree, objects, refs) is touched. A push
rejected because another job pushed first is retried on the new tip (fetch, re-apply, push), so
concurrent jobs never lose a write.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptcanary.core.models import BaselineSnapshot
from promptcanary.storage.base import BaselineFileError, snapshot_from_json, snapshot_to_json
from promptcanary.storage.layout import baseline_file, history_file
from promptcanary_action.baselines.base import BaselineStoreError, BaselineUnreachableError
from promptcanary_action.baselines.git import Git, GitCommandError
from promptcanary_action.baselines.history import append_history, history_record, parse_history

DEFAULT_BRANCH = "promptcanary-baselines"
BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
README_PATH = "README.md"
PUSH_ATTEMPTS = 8
_FILE_MODE = "100644"

# Texts git prints when the remote tip moved under us (plain git, local and HTTP transports).
_CONFLICT_MARKERS = (
    "fetch first",
    "non-fast-forward",
    "cannot lock ref",
    "failed to update ref",
    "stale info",
    "reference already exists",
    "incorrect old value",
)
_PERMISSION_MARKERS = ("403", "permission", "denied", "authentication failed", "401")

README_TEXT = """\
# PromptCanary baselines

This branch is written by the promptcanary-action GitHub Action and holds the **baselines**
that canary runs are compared with. It shares no history with your code: do not merge it.

Layout:

    <suite>/<model>/baseline.json   the promoted run: responses, scores, provenance
    <suite>/<model>/history.jsonl   one line per promotion: time, commit, ref, scores, counts

A baseline is replaced when a run on the default branch is promoted (`update-baseline`).
To start over for one suite and model, delete its folder in a commit on this branch; to start
over entirely, delete the branch. The next promoted run re-creates what is missing.
"""


class BranchBackend:
    """The data-branch store. Build it with :meth:`for_workspace` (or give it an opener).

    Args:
        open_repo: Returns the :class:`Git` of a repository whose ``origin`` is the remote;
            called once, on first use.
        branch: The data branch.
        sleep: Waits between push attempts (injectable for tests).
        attempts: Push attempts before giving up.
        backoff: First retry delay in seconds; doubles per attempt, capped at ``max_backoff``.
        jitter: Returns a float in [0, 1); spreads the retries of concurrent jobs.
        clock: The time written to history lines.
    """

    def __init__(
        self,
        open_repo: Callable[[], Git],
        branch: str = DEFAULT_BRANCH,
        *,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = PUSH_ATTEMPTS,
        backoff: float = 0.5,
        max_backoff: float = 15.0,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.branch = branch
        self._open_repo = open_repo
        self._git: Git | None = None
        self._sleep = sleep
        self._attempts = max(1, attempts)
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._jitter = jitter
        self._clock = clock
        self.private_ref = f"refs/promptcanary/{branch}"

    @classmethod
    def for_workspace(
        cls,
        base_dir: Path,
        branch: str = DEFAULT_BRANCH,
        *,
        token: str = "",
        server_url: str = "https://github.com",
        repository: str = "",
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> BranchBackend:
        """The store of ``base_dir``'s enclosing checkout, or of a private clone when not in one."""

        def open_repo() -> Git:
            return open_repository(
                base_dir, token=token, server_url=server_url, repository=repository, env=env
            )

        return cls(open_repo, branch, **options)

    @property
    def git(self) -> Git:
        if self._git is None:
            self._git = self._open_repo()
        return self._git

    # -- reading -------------------------------------------------------------------------------
    def load(self, suite_name: str, model_id: str, *, for_ref: str = "") -> BaselineSnapshot | None:
        # One baseline per pair: only the default branch promotes, so `for_ref` chooses nothing.
        path = baseline_file(suite_name, model_id)
        location = f"{self.branch}:{path}"
        tip = self._fetch_for_reading(location)
        data = self._read_blob(tip, path) if tip else None
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BaselineFileError(location, "not UTF-8 text") from None
        return snapshot_from_json(text, location)

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]:
        path = history_file(suite_name, model_id)
        tip = self._fetch_for_reading(f"{self.branch}:{path}")
        data = self._read_blob(tip, path) if tip else None
        return parse_history(data.decode("utf-8", errors="replace")) if data else []

    def _fetch_for_reading(self, location: str) -> str | None:
        try:
            return self._fetch()
        except BaselineStoreError as exc:  # no repository to read from
            raise BaselineFileError(location, str(exc)) from None
        except GitCommandError as exc:
            raise BaselineUnreachableError(location, _unfetchable(exc.stderr)) from None

    def _fetch(self) -> str | None:
        """Fetch the data branch into the private ref; its tip, or None when it does not exist."""
        git = self.git
        proc = git.run(
            "fetch", "--quiet", "--no-tags", "--depth=1", "origin",
            f"+refs/heads/{self.branch}:{self.private_ref}",
            check=False,
        )  # fmt: skip
        if proc.returncode == 0:
            return git.out("rev-parse", "--verify", f"{self.private_ref}^{{commit}}")
        stderr = git.scrub(proc.stderr.decode("utf-8", errors="replace"))
        if "couldn't find remote ref" in stderr.lower():
            # The branch may have been deleted since an earlier run: forget what we had.
            git.run("update-ref", "-d", self.private_ref, check=False)
            return None
        raise GitCommandError(("fetch", "origin", self.branch), proc.returncode, stderr)

    def _read_blob(self, commit: str, path: str) -> bytes | None:
        listing = self.git.out("ls-tree", commit, "--", path)
        if not listing:
            return None
        mode_type_sha = listing.split("\t", 1)[0].split()
        if len(mode_type_sha) != 3 or mode_type_sha[1] != "blob":
            raise BaselineFileError(f"{self.branch}:{path}", "is not a file")
        return self.git.run("cat-file", "blob", mode_type_sha[2]).stdout

    # -- writing -------------------------------------------------------------------------------
    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str:
        model_id = snapshot.provider.model_id
        path = baseline_file(snapshot.suite_name, model_id)
        hist_path = history_file(snapshot.suite_name, model_id)
        document = snapshot_to_json(snapshot).encode("utf-8")
        record = history_record(
            snapshot, sha=sha, ref=ref, now=self._clock(), regressions=regressions
        )
        message = f"Baseline {path.rsplit('/', 1)[0]}" + (f" from {sha[:12]}" if sha else "")
        message += f" ({ref})" if ref else ""
        last = ""
        for attempt in range(1, self._attempts + 1):
            try:
                parent = self._fetch()
            except GitCommandError as exc:
                raise BaselineStoreError(
                    f"cannot fetch the baseline branch '{self.branch}': {exc.stderr.strip()}"
                    + _permission_hint(exc.stderr, "contents: write")
                ) from None
            try:
                # Re-read the history on every attempt: another job may have appended to it.
                old_history = self._read_blob(parent, hist_path) if parent else None
                files = {
                    path: document,
                    hist_path: append_history(
                        (old_history or b"").decode("utf-8", errors="replace"), record
                    ).encode("utf-8"),
                    README_PATH: README_TEXT.encode("utf-8"),
                }
                commit = self._commit(parent, files, message)
                pushed, last = self._push(commit)
                if pushed:
                    self.git.run("update-ref", self.private_ref, commit)
                    return f"{self.branch}:{path}"
            except (GitCommandError, BaselineFileError) as exc:
                # E.g. a file committed where the pair's folder goes: the run is still reported.
                why = exc.stderr.strip() if isinstance(exc, GitCommandError) else str(exc)
                raise BaselineStoreError(f"cannot write {self.branch}:{path}: {why}") from None
            if attempt < self._attempts:
                self._sleep(self._delay(attempt))
        raise BaselineStoreError(
            f"cannot push the baseline branch '{self.branch}': other jobs kept moving it "
            f"({self._attempts} attempts; last answer: {last.strip()})"
        )

    def _commit(self, parent: str | None, files: Mapping[str, bytes], message: str) -> str:
        git = self.git
        with tempfile.TemporaryDirectory(prefix="promptcanary-index-") as tmp:
            # A private index: the user's own index (and working tree) stay as they are.
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if parent:
                git.run("read-tree", parent, extra_env=index)
            else:
                git.run("read-tree", "--empty", extra_env=index)
            for path, content in files.items():
                blob = git.out("hash-object", "-w", "--stdin", input_bytes=content)
                git.run(
                    "update-index", "--add", "--cacheinfo", f"{_FILE_MODE},{blob},{path}",
                    extra_env=index,
                )  # fmt: skip
            tree = git.out("write-tree", extra_env=index)
        identity = {
            "GIT_AUTHOR_NAME": BOT_NAME,
            "GIT_AUTHOR_EMAIL": BOT_EMAIL,
            "GIT_COMMITTER_NAME": BOT_NAME,
            "GIT_COMMITTER_EMAIL": BOT_EMAIL,
        }
        parents = ["-p", parent] if parent else []
        return git.out("commit-tree", tree, *parents, "-m", message, extra_env=identity)

    def _push(self, commit: str) -> tuple[bool, str]:
        """Push without force; (True, "") or (False, why) when the tip moved. Raises otherwise."""
        git = self.git
        proc = git.run(
            "push", "--porcelain", "origin", f"{commit}:refs/heads/{self.branch}", check=False
        )
        if proc.returncode == 0:
            return True, ""
        answer = git.scrub((proc.stdout + proc.stderr).decode("utf-8", errors="replace"))
        if any(marker in answer.lower() for marker in _CONFLICT_MARKERS):
            return False, answer
        raise BaselineStoreError(
            f"cannot push the baseline branch '{self.branch}': {answer.strip()}"
            + _permission_hint(answer, "contents: write")
        )

    def _delay(self, attempt: int) -> float:
        ceiling = min(self._max_backoff, self._backoff * 2 ** (attempt - 1))
        return ceiling / 2 + self._jitter() * ceiling / 2


def open_repository(
    base_dir: Path,
    *,
    token: str,
    server_url: str,
    repository: str,
    env: Mapping[str, str] | None = None,
) -> Git:
    """A private bare repository whose ``origin`` is the checkout's own (or the server's).

    The user's checkout only tells where the remote is and how to reach it: nothing is fetched
    into it. In a Docker action git runs as root in a workspace the runner's user owns, so any
    object, folder or ref written there would break the user's later git steps; a depth-1 fetch
    would also make a full clone shallow, and the checkout's own hooks would run on our push.

    The checkout's local ``http.*`` settings (``actions/checkout`` persists its credentials as
    an ``extraheader``, in ``.git/config`` or a file it includes) travel with each command, never
    to disk; our token is sent only when the checkout has no credentials of its own (a second
    Authorization header is refused).
    """
    probe = Git(base_dir, env=env, token=token)
    inside = probe.run("rev-parse", "--show-toplevel", check=False)
    if inside.returncode == 0:
        top = Path(inside.stdout.decode("utf-8", errors="replace").strip())
        repo = Git(top, env=env, token=token)
        origin = repo.run("remote", "get-url", "origin", check=False)
        if origin.returncode == 0:
            url = _absolute_url(origin.stdout.decode("utf-8", errors="replace").strip(), top)
            listed = repo.run(
                "config", "--local", "--includes", "--get-regexp", r"^http\.", check=False
            )
            http = [
                (key, value)
                for line in listed.stdout.decode("utf-8", errors="replace").splitlines()
                for key, _, value in [line.partition(" ")]
            ]
            has_header = any(key.endswith(".extraheader") for key, _ in http)
            return _bare_clone(url, token="" if has_header else token, env=env, config=http)
    if not repository:
        raise BaselineStoreError(
            f"baseline: branch needs a git checkout ({base_dir} is not one, or has no `origin`) "
            "or GITHUB_REPOSITORY to clone from"
        )
    return _bare_clone(f"{server_url.rstrip('/')}/{repository}.git", token=token, env=env)


def _absolute_url(url: str, top: Path) -> str:
    """``url``, with a relative local path made absolute (the private clone lives elsewhere)."""
    scp_like = ":" in url.split("/", 1)[0]  # host:path, or a URL scheme
    if scp_like or Path(url).is_absolute():
        return url
    return str((top / url).resolve())


def _bare_clone(
    url: str,
    *,
    token: str,
    env: Mapping[str, str] | None,
    config: Sequence[tuple[str, str]] = (),
) -> Git:
    """An empty bare repository with ``origin`` = ``url``; fetches bring only the data branch.

    The URL on disk carries no credentials: the token travels in the per-command environment.
    """
    tmp = Path(tempfile.mkdtemp(prefix="promptcanary-baselines-"))
    git = Git(tmp, env=env, token=token, config=config)
    git.run("init", "--quiet", "--bare", str(tmp))
    git.run("remote", "add", "origin", url)
    weakref.finalize(git, shutil.rmtree, tmp, True)
    return git


def _unfetchable(stderr: str) -> str:
    """What failed when the data branch could not be fetched, and the remedy for that cause."""
    said = " ".join(stderr.split()) or "no message"
    if any(marker in stderr.lower() for marker in _PERMISSION_MARKERS):
        remedy = (
            "the token may not read the repository: give the workflow `permissions: contents: "
            "read` (`contents: write` to promote), and keep `persist-credentials` or set the "
            "`github-token` input"
        )
    else:
        remedy = (
            "check that the runner reaches the repository's git server (network, proxy, the "
            "`origin` URL) and that the token may read it (`permissions: contents: read`)"
        )
    return f"the data branch cannot be fetched (git: {said}); {remedy}"


def _permission_hint(text: str, permission: str) -> str:
    if any(marker in text.lower() for marker in _PERMISSION_MARKERS):
        return (
            f". The workflow token needs `permissions: {permission}` "
            "(and `persist-credentials` or the `github-token` input)"
        )
    return ""
