"""End to end with `baseline: artifact`: a push writes the baseline for upload-artifact, a PR reads
the newest matching artifact through the GitHub API (302 to blob storage), none means missing."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from tests.e2e.conftest import ActionHarness
from tests.e2e.test_action_pr import write_support_suite

pytestmark = pytest.mark.e2e

INPUTS = {"baseline": "artifact", "baseline-artifact": "canary-baseline"}


def _zip_folder(folder: Path) -> bytes:
    """What actions/upload-artifact stores for `path: <folder>/`: the files under it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
    return buffer.getvalue()


def test_artifact_baseline_missing_then_created_then_found(harness: ActionHarness) -> None:
    write_support_suite(harness)

    # No artifact yet: the PR reports the run alone, never a failure by itself.
    missing = harness.run_pr(INPUTS)
    assert missing.returncode == 0, missing.log
    assert missing.outputs["baseline-status"] == "missing"

    # A push to main: the run becomes the baseline, written where the upload step picks it up.
    pushed = harness.run_push(INPUTS)
    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["baseline-status"] == "created"
    folder = pushed.report_dir / "baseline-artifact"
    [stored] = list(folder.rglob("baseline.json"))
    assert stored.relative_to(folder).as_posix() == "support/openai-fake/baseline.json"

    # What the upload step would publish, plus decoys the action must not pick.
    body = _zip_folder(folder)
    harness.github.add_artifact("canary-baseline", body, "main", run_id=501)
    harness.github.add_artifact("canary-baseline", b"not a zip", "feature", run_id=502)
    harness.github.add_artifact("canary-baseline", b"not a zip", "main", run_id=503, expired=True)
    harness.github.add_artifact(
        "canary-baseline", b"not a zip", "main", run_id=504, conclusion="failure"
    )
    harness.llm.drift = True

    compared = harness.run_pr(INPUTS)

    assert compared.returncode == 1, compared.log
    assert compared.outputs["baseline-status"] == "found"
    assert compared.outputs["regressions"] == "2"
    downloads = harness.github.requests_to("GET", r"/actions/artifacts/\d+/zip$")
    assert len(downloads) == 1  # only the good artifact was opened
    assert all(
        "authorization" not in {k.lower() for k in r.headers} for r in harness.github.blob_requests
    )


def test_artifact_listing_refused_is_a_named_error_and_the_check_run_is_completed(
    harness: ActionHarness,
) -> None:
    write_support_suite(harness)
    # A workflow without `permissions: actions: read`: GitHub refuses to list the artifacts.
    harness.github.fail(
        "GET", r"/actions/artifacts$", 403, message="Resource not accessible by integration"
    )

    result = harness.run_pr(INPUTS)

    assert result.returncode == 2, result.log
    assert "Traceback" not in result.log
    [error] = [c for c in result.annotations("error") if "actions: read" in c.message]
    assert "canary-baseline" in error.message
    # The results are still written and the check run does not stay "in progress".
    assert (result.report_dir / "comment.md").is_file()
    check = harness.check_run()
    assert (check.status, check.conclusion) == ("completed", "failure")
