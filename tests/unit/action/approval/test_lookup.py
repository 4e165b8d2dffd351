"""find_approval(): the label, its events and the comment record read through a fake port."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from promptcanary.core.models import RegressionKey
from promptcanary_action.approval.lookup import find_approval
from promptcanary_action.approval.record import CommentRecord, ShownDrift, record_block
from promptcanary_action.context import EventContext
from promptcanary_action.github.errors import GitHubError, GitHubPermissionError
from promptcanary_action.github.port import LabelEvent, PullInfo
from tests.fakes.github_port_fake import FakeComment, FakeGitHubPort

LABEL = "promptcanary: approve"
MARKER = "<!-- promptcanary-comment:default -->"
T0 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)
KEY = RegressionKey(suite="s", model="m", prompt_id="p1", probe_key="kw")
SHOWN = CommentRecord(shown=ShownDrift(keys=(KEY,), head_sha="h1", shown_at=T0))


PERMISSIONS = {
    "pull_request": "pull-requests: read",
    "pulls_of_commit": "pull-requests: read",
    "own_comment": "pull-requests: read",
    "last_labeled": "issues: read",
}


def refusing(*methods: str) -> dict[str, GitHubError]:
    """403 answers, as the real client reports them, for ``methods``."""
    return {m: GitHubPermissionError(f"call {m}", PERMISSIONS[m]) for m in methods}


def pull(labels: tuple[str, ...] = (LABEL,), merged: bool = False) -> PullInfo:
    return PullInfo(number=7, head_sha="h1", base_ref="main", labels=labels, merged=merged)


def port(
    *,
    pulls: dict[int, PullInfo] | None = None,
    merged: dict[str, int] | None = None,
    comment: str = f"report\n{record_block(SHOWN)}\n{MARKER}",
    refuse: tuple[str, ...] = (),
) -> FakeGitHubPort:
    return FakeGitHubPort(
        pulls=pulls if pulls is not None else {7: pull()},
        merge_commits=merged or {},
        label_events={7: LabelEvent("rev", T0 + timedelta(minutes=5))},
        comments=[FakeComment(1, 7, comment)],
        fail=refusing(*refuse),
    )


def pr_ctx(**overrides: object) -> EventContext:
    fields: dict[str, object] = {
        "event_name": "pull_request",
        "sha": "m1",
        "head_sha": "h1",
        "pr_number": 7,
        "default_branch": "main",
    }
    return EventContext(**{**fields, **overrides})  # type: ignore[arg-type]


def push_ctx(ref: str = "main") -> EventContext:
    return EventContext(
        event_name="push", sha="c1", head_sha="c1", default_branch="main", ref_name=ref
    )


def find(p: FakeGitHubPort | None, ctx: EventContext, label: str = LABEL):  # type: ignore[no-untyped-def]
    return find_approval(p, ctx, label=label, marker=MARKER, now=T0 + timedelta(hours=1))


def test_a_labelled_pull_request_approves_what_its_comment_showed() -> None:
    found = find(port(), pr_ctx())
    assert found.approval is not None and found.warnings == ()
    assert (found.approval.keys, found.approval.approver, found.pr_number) == ((KEY,), "rev", 7)


def test_no_label_no_approval_and_approvals_off_reads_nothing() -> None:
    assert find(port(pulls={7: pull(labels=("other",))}), pr_ctx()).approval is None
    silent = port(refuse=("pull_request", "own_comment", "last_labeled"))
    off = find(silent, pr_ctx(), label="")
    assert off.approval is None and off.warnings == ()
    assert find(None, pr_ctx()).approval is None


def test_the_api_labels_win_over_a_stale_payload() -> None:
    # The payload (a re-run job's) still lists the label; GitHub says it is gone.
    stale = pr_ctx(pr_labels=(LABEL,))
    assert find(port(pulls={7: pull(labels=())}), stale).approval is None


def test_unreadable_labels_fall_back_to_the_payload_with_a_warning_naming_the_permission() -> None:
    found = find(port(refuse=("pull_request",)), pr_ctx(pr_labels=(LABEL,)))
    assert found.approval is not None
    assert len(found.warnings) == 1 and "pull-requests: read" in found.warnings[0]
    unknown = find(port(refuse=("pull_request",)), pr_ctx())
    assert unknown.approval is None and "pull-requests: read" in unknown.warnings[0]


def test_unreadable_events_use_the_labeled_events_sender() -> None:
    ctx = pr_ctx(action="labeled", event_label=LABEL, sender="lead")
    found = find(port(refuse=("last_labeled",)), ctx)
    assert found.approval is not None and found.approval.approver == "lead"
    assert "issues: read" in found.warnings[0]
    # Another label's event says nothing about who added ours.
    other = find(port(refuse=("last_labeled",)), pr_ctx(action="labeled", event_label="x"))
    assert other.approval is None
    assert any("who added it is unknown" in w for w in other.warnings)


def test_without_a_record_in_the_comment_the_label_approves_nothing_and_says_why() -> None:
    found = find(port(comment=f"no record here {MARKER}"), pr_ctx())
    assert found.approval is None
    assert any("before PromptCanary showed any drift" in w for w in found.warnings)


def test_a_merge_push_finds_its_pull_request_and_its_approval() -> None:
    p = port(pulls={7: pull(merged=True)}, merged={"c1": 7})
    found = find(p, push_ctx())
    assert found.pr_number == 7 and found.approval is not None
    assert found.approval.keys == (KEY,)


def test_a_direct_push_or_a_side_branch_looks_for_no_approval() -> None:
    direct = find(port(), push_ctx())
    assert (direct.approval, direct.pr_number, direct.warnings) == (None, None, ())
    side = find(port(pulls={7: pull(merged=True)}, merged={"c1": 7}), push_ctx(ref="dev"))
    assert side.approval is None and side.pr_number is None


def test_a_push_whose_pull_requests_cannot_be_read_warns_and_promotes_as_before() -> None:
    found = find(port(refuse=("pulls_of_commit",)), push_ctx())
    assert found.approval is None and "pull-requests: read" in found.warnings[0]


def test_any_github_failure_is_a_warning_not_a_crash() -> None:
    broken = port()
    broken.fail["own_comment"] = GitHubError("GitHub answered 502 listing comments", status=502)
    found = find(broken, pr_ctx())
    assert found.approval is None and "502" in found.warnings[0]
