"""A data branch that cannot be fetched (the origin is gone, the token may not read it): the step
says what failed and what to check, exits 3 (untrustworthy: nothing was compared), never calls
the run a first one ("no baseline to compare with yet") and promotes nothing. The whole step
in-process, with real git against a bare origin on disk and a local HTTP remote answering 403."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.git_fixtures import GitWorkspace
from tests.integration.action.test_baselines_branch import _Recorder, http_remote
from tests.unit.action.test_action_inprocess import (
    GOOD,
    SUITE,
    Step,
    pull_request_event,
    push_event,
    run_step,
)

TOKEN = "ghs_inProcessFakeToken"
URL_SECRET = "ghp_inTheOriginUrl0123456789"
UNREACHABLE = "PromptCanary: baseline store unreachable"
__all__ = ["http_remote"]  # the fixture, imported to be used here


def _step_on(ws: GitWorkspace, origin: str, event: dict[str, str]) -> Step:
    (ws.path / "canary.yaml").write_text(SUITE, encoding="utf-8")
    ws.run("remote", "set-url", "origin", origin)
    return run_step({**event, "INPUT_BASELINE": "branch"}, GOOD)


def _assert_not_compared_and_named(step: Step) -> str:
    assert step.code == 3, step.log
    assert "no baseline to compare with yet" not in step.log
    assert "Delete or re-create" not in step.log
    assert step.workflow.outputs["baseline-status"] == "unreachable"
    [error] = [a for a in step.annotations("error") if a.properties.get("title") == UNREACHABLE]
    assert "the data branch cannot be fetched (git: " in error.message
    assert "The baseline could not be saved" not in step.log  # no promotion was attempted
    assert TOKEN not in step.log and URL_SECRET not in step.log
    return error.message


def test_a_data_branch_whose_origin_is_gone_names_gits_message_and_exits_3(
    git_workspace: GitWorkspace, tmp_path: Path
) -> None:
    # '%0A' in the path: unescaped in the annotation, the runner would read a line break.
    gone = tmp_path / "moved%0Aaway" / "origin.git"
    step = _step_on(git_workspace, str(gone), push_event(git_workspace.path))
    message = _assert_not_compared_and_named(step)
    assert "does not appear to be a git repository" in message
    assert "network, proxy, the `origin` URL" in message and "contents: read" in message
    assert "moved%250Aaway" in step.log and "moved%0Aaway" not in step.log


def test_a_data_branch_the_token_may_not_read_says_which_permission_and_exits_3(
    git_workspace: GitWorkspace, http_remote: tuple[str, type[_Recorder]]
) -> None:
    # The remote answers 403 "Permission to octo-org/octo-repo.git denied".
    origin = http_remote[0].replace("://", f"://x-access-token:{URL_SECRET}@") + "/o/r.git"
    step = _step_on(git_workspace, origin, pull_request_event(git_workspace.path))
    message = _assert_not_compared_and_named(step)
    assert "403" in message
    assert "the token may not read the repository" in message
    assert "`permissions: contents: read`" in message
