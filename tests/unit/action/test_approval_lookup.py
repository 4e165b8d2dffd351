"""find_approval(): the label, its events and the comment record read through a fake port."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from promptcanary.core.models import RegressionKey
from promptcanary_action.approval import CommentRecord, ShownDrift, record_block
from promptcanary_action.approval_lookup import LabelEvent, PullInfo, find_approval
from promptcanary_action.context import EventContext
from promptcanary_action.github_errors import GitHubError, GitHubPermissionError

LABEL = "promptcanary: approve"
MARKER = "<!-- promptcanary-comment:default -->"
T0 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)
KEY = RegressionKey(suite="s", model="m", prompt_id="p1", probe_key="kw")
SHOWN = CommentRecord(shown=ShownDrift(keys=(KEY,), head_sha="h1", shown_at=T0))


@dataclass
class Port:
    """An in-memory ApprovalPort; ``refuse`` names methods that answer 403."""

    pulls: dict[int, PullInfo] = field(default_factory=dict)
    merged: dict[str, int] = field(default_factory=dict)
    events: dict[int, LabelEvent] = field(default_factory=dict)
    comments: dict[int, str] = field(default_factory=dict)
    refuse: set[str] = field(default_factory=set)

    def _check(self, name: str, permission: str) -> None:
        if name in self.refuse:
            raise GitHubPermissionError(f"call {name}", permission)

    def pull_request(self, pr_number: int) -> PullInfo:
        self._check("pull_request", "pull-requests: read")
        return self.pulls[pr_number]

    def pulls_of_commit(self, sha: str) -> list[PullInfo]:
        self._check("pulls_of_commit", "pull-requests: read")
        return [self.pulls[n] for s, n in self.merged.items() if s == sha]

    def last_labeled(self, issue_number: int, label: str) -> LabelEvent | None:
        self._check("last_labeled", "issues: read")
        return self.events.get(issue_number)

    def own_comment(self, pr_number: int, marker: str) -> str | None:
        self._check("own_comment", "pull-requests: read")
        return self.comments.get(pr_number)


def pull(labels: tuple[str, ...] = (LABEL,), merged: bool = False) -> PullInfo:
    return PullInfo(number=7, head_sha="h1", base_ref="main", labels=labels, merged=merged)


def port(**overrides: object) -> Port:
    fields: dict[str, object] = {
        "pulls": {7: pull()},
        "events": {7: LabelEvent("rev", T0 + timedelta(minutes=5))},
        "comments": {7: f"report\n{record_block(SHOWN)}\n{MARKER}"},
    }
    return Port(**{**fields, **overrides})  # type: ignore[arg-type]


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


def find(p: Port | None, ctx: EventContext, label: str = LABEL):  # type: ignore[no-untyped-def]
    return find_approval(p, ctx, label=label, marker=MARKER, now=T0 + timedelta(hours=1))


def test_a_labelled_pull_request_approves_what_its_comment_showed() -> None:
    found = find(port(), pr_ctx())
    assert found.approval is not None and found.warnings == ()
    assert (found.approval.keys, found.approval.approver, found.pr_number) == ((KEY,), "rev", 7)


def test_no_label_no_approval_and_approvals_off_reads_nothing() -> None:
    assert find(port(pulls={7: pull(labels=("other",))}), pr_ctx()).approval is None
    refusing = port(refuse={"pull_request", "own_comment", "last_labeled"})
    off = find(refusing, pr_ctx(), label="")
    assert off.approval is None and off.warnings == ()
    assert find(None, pr_ctx()).approval is None


def test_the_api_labels_win_over_a_stale_payload() -> None:
    # The payload (a re-run job's) still lists the label; GitHub says it is gone.
    stale = pr_ctx(pr_labels=(LABEL,))
    assert find(port(pulls={7: pull(labels=())}), stale).approval is None


def test_unreadable_labels_fall_back_to_the_payload_with_a_warning_naming_the_permission() -> None:
    found = find(port(refuse={"pull_request"}), pr_ctx(pr_labels=(LABEL,)))
    assert found.approval is not None
    assert len(found.warnings) == 1 and "pull-requests: read" in found.warnings[0]
    unknown = find(port(refuse={"pull_request"}), pr_ctx())
    assert unknown.approval is None and "pull-requests: read" in unknown.warnings[0]


def test_unreadable_events_use_the_labeled_events_sender() -> None:
    ctx = pr_ctx(action="labeled", event_label=LABEL, sender="lead")
    found = find(port(refuse={"last_labeled"}), ctx)
    assert found.approval is not None and found.approval.approver == "lead"
    assert "issues: read" in found.warnings[0]
    # Another label's event says nothing about who added ours.
    other = find(port(refuse={"last_labeled"}), pr_ctx(action="labeled", event_label="x"))
    assert other.approval is None
    assert any("who added it is unknown" in w for w in other.warnings)


def test_without_a_record_in_the_comment_the_label_approves_nothing_and_says_why() -> None:
    found = find(port(comments={7: f"a person's text {MARKER}"}), pr_ctx())
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
    found = find(port(refuse={"pulls_of_commit"}), push_ctx())
    assert found.approval is None and "pull-requests: read" in found.warnings[0]


def test_any_github_failure_is_a_warning_not_a_crash() -> None:
    class Broken(Port):
        def own_comment(self, pr_number: int, marker: str) -> str | None:
            raise GitHubError("GitHub answered 502 while listing the comments", status=502)

    found = find(Broken(**port().__dict__), pr_ctx())
    assert found.approval is None and "502" in found.warnings[0]
