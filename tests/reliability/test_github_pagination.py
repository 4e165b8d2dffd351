"""GitHub: a busy pull request with 120 comments.

The action's sticky comment sits on the second page of the listing (100 per page); it must be
found there and edited in place, not duplicated, and a person's comment that quotes the marker
must never be taken over.
"""

from __future__ import annotations

import pytest

from promptcanary_action.render import comment_marker
from tests.reliability.conftest import PR_NUMBER, ActionHarness, keyword_prompts, suite_text

pytestmark = pytest.mark.e2e

COMMENTS = rf"/issues/{PR_NUMBER}/comments$"


def test_sticky_comment_on_a_later_page_is_found_and_updated(harness: ActionHarness) -> None:
    harness.write("canary.yaml", suite_text("busy", harness.llm.url, keyword_prompts(1)))
    harness.llm.script(None, content="canary ok")
    marker = comment_marker("default")
    gh = harness.github
    # A reviewer quoting the marker on page one: not ours (a User, not the Bot).
    gh.add_comment(PR_NUMBER, f"Why is there a {marker} in your comment?", user_login="reviewer")
    for n in range(109):
        gh.add_comment(PR_NUMBER, f"review remark {n}")
    ours = gh.add_comment(
        PR_NUMBER,
        f"stale report from an earlier push\n\n{marker}",
        user_login="github-actions[bot]",
        user_type="Bot",
    )
    for n in range(10):
        gh.add_comment(PR_NUMBER, f"later remark {n}")
    assert len(gh.comments(PR_NUMBER)) == 121  # 120 others plus ours, at position 111

    result = harness.run_pr({"baseline": "none"})

    assert result.returncode == 0, result.log
    comments = gh.comments(PR_NUMBER)
    assert len(comments) == 121, "a second sticky comment was created"
    updated = next(c for c in comments if c.id == ours.id)
    assert updated.body.startswith("**✅")
    assert "stale report" not in updated.body
    assert marker in updated.body
    assert result.outputs["comment-url"].endswith(f"#issuecomment-{ours.id}")
    decoy = comments[0]
    assert decoy.body.startswith("Why is there a")
    listings = gh.requests_to("GET", COMMENTS)
    assert any(r.query.get("page") == "2" for r in listings), [r.query for r in listings]
    assert gh.requests_to("POST", COMMENTS) == []
