"""The data-branch baseline store against real git: a bare origin and clones of it."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from promptcanary.core.models import (
    BaselineSnapshot,
    CanaryRunResult,
    LLMResponse,
    ProbeResult,
    ProviderConfig,
)
from promptcanary.storage.base import BaselineFileError
from promptcanary_action.baselines.base import BaselineStoreError, BaselineUnreachableError
from promptcanary_action.baselines.branch import BOT_EMAIL, BOT_NAME, BranchBackend
from tests.fakes.git_fixtures import GitWorkspace, run_git
from tests.fakes.sleeps import Sleeps

BRANCH = "promptcanary-baselines"
MODEL = "openai/gpt-4o"
PAIR = "my-suite/openai-gpt-4o"
TOKEN = "ghs_FAKEtokenVALUE0123456789abcdef"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def snapshot(suite: str = "My Suite", score: float = 0.5, model: str = MODEL) -> BaselineSnapshot:
    provider = ProviderConfig(model_id=model)
    run = CanaryRunResult(
        suite_name=suite,
        provider=provider,
        probe_results=[
            ProbeResult(probe_id="json_validity", prompt_id="p1", passed=score > 0.6, score=score)
        ],
        llm_responses=[LLMResponse(prompt_id="p1", provider_model_id=model, content="{}")],
        started_at=T0,
        finished_at=T0 + timedelta(seconds=2),
    )
    return BaselineSnapshot(suite_name=suite, provider=provider, run_result=run, created_at=T0)


def backend(
    ws: GitWorkspace | Path, env: dict[str, str] | None = None, **kw: object
) -> BranchBackend:
    path = ws.path if isinstance(ws, GitWorkspace) else ws
    git_env = dict(ws.env) if isinstance(ws, GitWorkspace) else env
    options: dict[str, object] = {"sleep": Sleeps(), "backoff": 0.001}
    options.update(kw)
    return BranchBackend.for_workspace(path, BRANCH, env=git_env, **options)  # type: ignore[arg-type]


def clone(ws: GitWorkspace, name: str) -> GitWorkspace:
    path = ws.path.parent / name
    run_git("clone", "--quiet", str(ws.origin_path), str(path), cwd=ws.path.parent, env=ws.env)
    for key, value in (("user.name", "Other Job"), ("user.email", "other@example.invalid")):
        run_git("config", key, value, cwd=path, env=ws.env)
    return GitWorkspace(path=path, origin_path=ws.origin_path, head_sha=ws.head_sha, env=ws.env)


def show(ws: GitWorkspace, path: str) -> str:
    return ws.run_in_origin("show", f"refs/heads/{BRANCH}:{path}")


def test_first_save_creates_the_orphan_branch_with_readme(git_workspace: GitWorkspace) -> None:
    snap = snapshot()

    location = backend(git_workspace).save(snap, sha="a" * 40, ref="main")

    assert location == f"{BRANCH}:{PAIR}/baseline.json"
    tip = git_workspace.remote_refs()[f"refs/heads/{BRANCH}"]
    assert git_workspace.run_in_origin("rev-list", "--count", tip) == "1"  # orphan: no parents
    stored = json.loads(show(git_workspace, f"{PAIR}/baseline.json"))
    assert stored["snapshot_id"] == snap.snapshot_id
    assert "do not merge" in show(git_workspace, "README.md")
    assert set(show(git_workspace, "").split()) >= {"README.md", "my-suite/"}
    author = git_workspace.run_in_origin("log", "-1", "--format=%an <%ae>|%cn <%ce>", tip)
    assert author == f"{BOT_NAME} <{BOT_EMAIL}>|{BOT_NAME} <{BOT_EMAIL}>"
    history = show(git_workspace, f"{PAIR}/history.jsonl").splitlines()
    assert len(history) == 1
    assert json.loads(history[0])["sha"] == "a" * 40


def test_the_data_branch_shares_no_history_with_main(git_workspace: GitWorkspace) -> None:
    backend(git_workspace).save(snapshot(), sha="a" * 40, ref="main")

    tip = git_workspace.remote_refs()[f"refs/heads/{BRANCH}"]
    proc = run_git(
        "merge-base", tip, "main", cwd=git_workspace.origin_path, env=git_workspace.env, check=False
    )
    assert proc.returncode == 1 and proc.stdout == ""


def test_load_returns_the_saved_snapshot_from_another_clone(git_workspace: GitWorkspace) -> None:
    snap = snapshot()
    backend(git_workspace).save(snap, sha="a" * 40, ref="main")

    loaded = backend(clone(git_workspace, "other")).load("My Suite", MODEL, for_ref="main")

    assert loaded == snap


def test_no_branch_or_no_file_is_no_baseline(git_workspace: GitWorkspace) -> None:
    store = backend(git_workspace)
    assert store.load("My Suite", MODEL, for_ref="main") is None

    store.save(snapshot(), sha="a" * 40, ref="main")

    assert store.load("My Suite", "anthropic/claude-3", for_ref="main") is None
    assert store.load("Other suite", MODEL, for_ref="main") is None
    assert store.history("Other suite", MODEL) == []


def test_second_save_replaces_the_baseline_and_appends_history(git_workspace: GitWorkspace) -> None:
    store = backend(git_workspace)
    store.save(snapshot(score=0.5), sha="a" * 40, ref="main")
    second = snapshot(score=0.9)

    store.save(second, sha="b" * 40, ref="main", regressions=0)

    assert backend(clone(git_workspace, "reader")).load("My Suite", MODEL, for_ref="main") == second
    history = store.history("My Suite", MODEL)
    assert [h["sha"] for h in history] == ["a" * 40, "b" * 40]
    assert [h["overall_score"] for h in history] == [0.5, 0.9]
    assert history[1]["snapshot_id"] == second.snapshot_id and history[1]["regressions"] == 0
    tip = git_workspace.remote_refs()[f"refs/heads/{BRANCH}"]
    assert git_workspace.run_in_origin("rev-list", "--count", tip) == "2"


def test_save_leaves_head_index_and_working_tree_alone(git_workspace: GitWorkspace) -> None:
    ws = git_workspace
    ws.run("config", "--unset", "user.name")  # actions/checkout sets no committer
    (ws.path / "README.md").write_text("edited, not staged\n", encoding="utf-8")
    (ws.path / "staged.txt").write_text("staged\n", encoding="utf-8")
    ws.run("add", "staged.txt")
    (ws.path / "untracked.txt").write_text("untracked\n", encoding="utf-8")
    before = (ws.run("status", "--porcelain"), ws.rev_parse(), ws.run("symbolic-ref", "HEAD"))
    staged_before = ws.run("diff", "--cached")

    backend(ws).save(snapshot(), sha="a" * 40, ref="main")
    backend(ws).load("My Suite", MODEL, for_ref="main")

    after = (ws.run("status", "--porcelain"), ws.rev_parse(), ws.run("symbolic-ref", "HEAD"))
    assert after == before
    assert ws.run("diff", "--cached") == staged_before
    assert not (ws.path / "my-suite").exists()
    assert f"refs/heads/{BRANCH}" in ws.remote_refs()


def test_eight_concurrent_writers_all_land(git_workspace: GitWorkspace) -> None:
    clones = [clone(git_workspace, f"job-{i}") for i in range(8)]
    start = threading.Barrier(len(clones))
    failures: list[BaseException] = []
    sleeps = Sleeps()

    def job(i: int, ws: GitWorkspace) -> None:
        store = backend(ws, sleep=sleeps, backoff=0.01, attempts=12)
        start.wait()
        try:
            store.save(snapshot(suite=f"suite {i}"), sha=f"{i:040d}", ref="main")
        except BaseException as exc:  # reported below, with the thread's own error
            failures.append(exc)

    threads = [threading.Thread(target=job, args=(i, ws)) for i, ws in enumerate(clones)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    assert failures == []
    reader = backend(clone(git_workspace, "reader"))
    for i in range(8):
        loaded = reader.load(f"suite {i}", MODEL, for_ref="main")
        assert loaded is not None and loaded.suite_name == f"suite {i}"
        assert [h["sha"] for h in reader.history(f"suite {i}", MODEL)] == [f"{i:040d}"]
    tip = git_workspace.remote_refs()[f"refs/heads/{BRANCH}"]
    assert git_workspace.run_in_origin("rev-list", "--count", tip) == "8"


def origin_hook(ws: GitWorkspace, script: str) -> None:
    """A pre-receive hook in origin that runs ``script`` before accepting a push (not nested).

    The store pushes from a private clone, so the race is staged on the server's side: the hook
    moves the branch first, and the push then fails as when another job won.
    """
    hook = ws.origin_path / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        'cat > /dev/null; [ -n "$PC_NESTED" ] && exit 0\n'
        "unset GIT_DIR GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES\n"
        f"export PC_NESTED=1\n{script}\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)


def test_a_push_that_loses_the_race_is_reapplied_on_the_new_tip(
    git_workspace: GitWorkspace,
) -> None:
    # Another job's commit lands between our fetch and our push (once).
    other = clone(git_workspace, "other-job")
    other.run("checkout", "--quiet", "--orphan", "theirs")
    other.run("rm", "-rf", "--quiet", ".")
    theirs = other.commit_file("their-suite/m/baseline.json", "{}\n", "their baseline")
    flag = git_workspace.path.parent / "hook-ran"
    origin_hook(
        git_workspace,
        f'if [ ! -e "{flag}" ]; then touch "{flag}"; '
        f'git -C "{other.path}" push --quiet origin {theirs}:refs/heads/{BRANCH}; fi',
    )
    sleeps = Sleeps()

    backend(git_workspace, sleep=sleeps).save(snapshot(), sha="a" * 40, ref="main")

    assert flag.exists() and len(sleeps.delays) == 1
    tip = git_workspace.remote_refs()[f"refs/heads/{BRANCH}"]
    assert git_workspace.run_in_origin("rev-parse", f"{tip}^") == theirs
    assert show(git_workspace, "their-suite/m/baseline.json") == "{}"
    assert json.loads(show(git_workspace, f"{PAIR}/baseline.json"))["suite_name"] == "My Suite"


def test_gives_up_after_the_configured_attempts(git_workspace: GitWorkspace) -> None:
    # Every push loses the race: the hook always moves the branch first.
    other = clone(git_workspace, "busy-job")
    other.run("checkout", "--quiet", "--orphan", "busy")
    other.run("rm", "-rf", "--quiet", ".")
    origin_hook(
        git_workspace,
        f'cd "{other.path}" && date +%s%N > busy.txt && git add busy.txt && '
        "git commit --quiet -m busy && "
        f"git push --quiet --force origin HEAD:refs/heads/{BRANCH}",
    )
    sleeps = Sleeps()

    with pytest.raises(BaselineStoreError, match="5 attempts"):
        backend(git_workspace, sleep=sleeps, attempts=5, backoff=1.0, jitter=lambda: 0.0).save(
            snapshot(), sha="a" * 40, ref="main"
        )

    assert sleeps.delays == [0.5, 1.0, 2.0, 4.0]  # exponential; half-jitter at its minimum


def test_outside_a_checkout_a_private_bare_clone_is_used(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    server = tmp_path / "server"
    remote = server / "octo-org" / "octo-repo.git"
    remote.mkdir(parents=True)
    run_git("init", "--quiet", "--bare", str(remote), cwd=tmp_path, env=git_env)
    plain = tmp_path / "not-a-checkout"
    plain.mkdir()

    def store() -> BranchBackend:
        return BranchBackend.for_workspace(
            plain,
            BRANCH,
            token=TOKEN,
            server_url=f"file://{server}",
            repository="octo-org/octo-repo",
            env=git_env,
        )

    writer = store()
    snap = snapshot()
    writer.save(snap, sha="a" * 40, ref="main")

    heads = run_git("ls-remote", str(remote), cwd=tmp_path, env=git_env).stdout
    assert f"refs/heads/{BRANCH}" in heads
    assert store().load("My Suite", MODEL, for_ref="main") == snap
    private = writer.git.cwd
    assert (
        private != plain
        and run_git("rev-parse", "--is-bare-repository", cwd=private, env=git_env).stdout.strip()
        == "true"
    )
    config = (private / "config").read_text(encoding="utf-8")
    assert TOKEN not in config and "x-access-token" not in config
    assert list(plain.iterdir()) == []


def test_corrupt_baseline_names_branch_and_path(git_workspace: GitWorkspace) -> None:
    backend(git_workspace).save(snapshot(), sha="a" * 40, ref="main")
    editor = clone(git_workspace, "editor")
    editor.run("checkout", "--quiet", BRANCH)
    editor.commit_file(f"{PAIR}/baseline.json", "{ not json", "break it")
    editor.run("push", "--quiet", "origin", BRANCH)

    with pytest.raises(BaselineFileError) as err:
        backend(git_workspace).load("My Suite", MODEL, for_ref="main")

    assert err.value.location == f"{BRANCH}:{PAIR}/baseline.json"
    assert f"{BRANCH}:{PAIR}/baseline.json" in str(err.value)


def test_token_never_appears_in_errors(tmp_path: Path, git_env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    # A remote path that contains the token: git repeats it in its error message.
    store = BranchBackend.for_workspace(
        plain,
        BRANCH,
        token=TOKEN,
        server_url=f"file://{tmp_path}/missing/{TOKEN}",
        repository="octo-org/octo-repo",
        env={**git_env, "GIT_TRACE": "1"},
        sleep=Sleeps(),
    )

    with pytest.raises(BaselineUnreachableError) as read_err:
        store.load("My Suite", MODEL, for_ref="main")
    with pytest.raises(BaselineStoreError) as write_err:
        store.save(snapshot(), sha="a" * 40, ref="main")

    for text in (str(read_err.value), str(write_err.value)):
        assert "missing/***" in text  # the message is kept, the secret is not
        assert TOKEN not in text


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str | None] = []

    def do_GET(self) -> None:
        # Every Authorization header, so that a second one (refused by GitHub) would show.
        type(self).seen.append(", ".join(self.headers.get_all("Authorization") or []) or None)
        body = b"Permission to octo-org/octo-repo.git denied to github-actions[bot].\n"
        self.send_response(403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_remote() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_token_travels_only_as_a_header_over_http(
    tmp_path: Path, git_env: dict[str, str], http_remote: tuple[str, type[_Recorder]]
) -> None:
    url, handler = http_remote
    plain = tmp_path / "plain"
    plain.mkdir()
    env = {**git_env, "GIT_TRACE": "1", "GIT_CURL_VERBOSE": "1", "GIT_TRACE_REDACT": "0"}
    store = BranchBackend.for_workspace(
        plain, BRANCH, token=TOKEN, server_url=url, repository="octo-org/octo-repo", env=env
    )

    with pytest.raises(BaselineUnreachableError) as err:
        store.load("My Suite", MODEL, for_ref="main")

    expected = "basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert handler.seen and handler.seen[0] is not None
    assert handler.seen[0].lower() == expected.lower()
    message = str(err.value)
    assert TOKEN not in message and expected.split()[-1] not in message
    assert "contents: read" in message
    config = (store.git.cwd / "config").read_text(encoding="utf-8")
    assert TOKEN not in config and expected.split()[-1] not in config and url in config


def test_no_checkout_and_no_repository_is_an_unreadable_baseline(
    tmp_path: Path, git_env: dict[str, str]
) -> None:
    store = BranchBackend.for_workspace(tmp_path, BRANCH, repository="", env=git_env)

    with pytest.raises(BaselineFileError, match="GITHUB_REPOSITORY") as err:
        store.load("My Suite", MODEL, for_ref="main")

    assert err.value.location == f"{BRANCH}:{PAIR}/baseline.json"


def test_a_data_branch_save_cannot_apply_to_is_a_store_error(git_workspace: GitWorkspace) -> None:
    # Someone committed a *file* where the suite's folder goes: the commit cannot be built.
    editor = clone(git_workspace, "editor")
    editor.run("checkout", "--quiet", "--orphan", BRANCH)
    editor.run("rm", "-rf", "--quiet", ".")
    editor.commit_file("my-suite", "not a folder\n", "a file in the way")
    editor.run("push", "--quiet", "origin", BRANCH)

    with pytest.raises(BaselineStoreError) as err:
        backend(git_workspace).save(snapshot(), sha="a" * 40, ref="main")

    assert BRANCH in str(err.value) and PAIR in str(err.value)


def git_dir_files(ws: GitWorkspace) -> dict[str, int]:
    git_dir = ws.path / ".git"
    return {str(p.relative_to(git_dir)): p.stat().st_size for p in git_dir.rglob("*")}


def test_the_users_git_directory_is_left_alone(git_workspace: GitWorkspace) -> None:
    # In a Docker action git runs as root in a workspace the runner's user owns: every object,
    # folder or ref we wrote there would be root's, and break the user's later git steps
    # ("insufficient permission for adding an object"). A depth-1 fetch would also turn a full
    # clone shallow, and the user's own pre-push hook (husky) would run on our push.
    ws = git_workspace
    hook = ws.path / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho 'pushes are blocked here' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    before = git_dir_files(ws)

    backend(ws).save(snapshot(), sha="a" * 40, ref="main")
    backend(ws).save(snapshot(score=0.9), sha="b" * 40, ref="main")
    loaded = backend(ws).load("My Suite", MODEL, for_ref="main")

    assert loaded is not None and loaded.run_result.overall_score == 0.9
    assert git_dir_files(ws) == before
    assert ws.run("rev-parse", "--is-shallow-repository") == "false"


@pytest.mark.parametrize("where", ["config", "included file"])
def test_the_checkouts_persisted_credentials_are_used_and_never_printed(
    git_workspace: GitWorkspace, http_remote: tuple[str, type[_Recorder]], where: str
) -> None:
    # actions/checkout persists `http.<server>/.extraheader` in .git/config (v4) or in a file
    # that .git/config includes (v6); with it, our own token must not be sent as a second one.
    url, handler = http_remote
    ws = git_workspace
    ws.run("remote", "set-url", "origin", f"{url}/octo-org/octo-repo.git")
    theirs = "basic " + base64.b64encode(b"x-access-token:ghs_CHECKOUTsToken000").decode()
    key = f"http.{url}/.extraheader"
    if where == "config":
        ws.run("config", key, f"AUTHORIZATION: {theirs}")
    else:
        included = ws.path.parent / "git-credentials.config"
        run_git("config", "--file", str(included), key, f"AUTHORIZATION: {theirs}",
                cwd=ws.path, env=ws.env)  # fmt: skip
        ws.run("config", f"includeIf.gitdir:{ws.path}/.git.path", str(included))
    store = BranchBackend.for_workspace(ws.path, BRANCH, token=TOKEN, env=dict(ws.env))

    with pytest.raises(BaselineUnreachableError) as err:
        store.load("My Suite", MODEL, for_ref="main")

    assert handler.seen and {s.lower() for s in handler.seen if s} == {theirs.lower()}
    assert theirs.split()[-1] not in str(err.value) and TOKEN not in str(err.value)
    assert "contents: read" in str(err.value)
