"""End to end: one template over a 200-row CSV dataset. Every row is its own prompt, answered
concurrently and compared with its own baseline; the one row whose answer drifted is the one
regression, annotated at its line of the CSV file and linked from the comment."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import HEAD_SHA, MODEL, PR_NUMBER, ActionHarness, line_of, suite_text

pytestmark = pytest.mark.e2e

ROWS = 200
DRIFTED = 137  # the row (0-based) whose answer changes; a quoted field before it spans lines

PROMPTS = """\
  - id: city
    text: "Name the country of {{ city }} ({{ note }})."
    dataset: data/cities.csv
    row_key: case
    probes:
      - type: keyword_presence
        required_keywords: ["{{ city }}"]
"""


def _dataset() -> tuple[str, int]:
    """The CSV text and the line the drifted row starts on."""
    lines = ["case,city,note"]
    drifted_line = 0
    for n in range(ROWS):
        note = '"two-line\nnote"' if n == 3 else f"note {n}"
        if n == DRIFTED:
            drifted_line = sum(line.count("\n") + 1 for line in lines) + 1
        lines.append(f"c{n:03d},City{n:03d},{note}")
    return "\n".join(lines) + "\n", drifted_line


def test_a_two_hundred_row_dataset_compares_per_row_and_annotates_the_drifted_row(
    harness: ActionHarness,
) -> None:
    csv_text, drifted_line = _dataset()
    harness.write("data/cities.csv", csv_text)
    suite = suite_text("cities", harness.llm.url, PROMPTS).replace(
        "prompts:", "defaults: {samples: 1}\nprompts:", 1
    )
    harness.write("canary.yaml", suite)
    harness.llm.latency = 0.02  # long enough for requests to overlap
    harness.llm.default(echo=True)  # each answer repeats its row's city: every row passes
    harness.llm.script(
        f"City{DRIFTED:03d} ", content=f"City{DRIFTED:03d} is in Norway.",
        drifted={"content": "I cannot say."},
    )  # fmt: skip
    inputs = {"baseline": "path", "update-baseline": "always"}
    assert (created := harness.run_push(inputs)).returncode == 0, created.log
    assert harness.llm.request_count == ROWS
    assert harness.llm.peak_in_flight > 1  # rows are answered concurrently

    harness.llm.drift = True
    result = harness.run_pr({"baseline": "path", "fail-on": "regression"})

    assert result.returncode == 1, result.log
    assert result.outputs["regressions"] == "1"
    check = harness.check_run()
    (annotation,) = [a for a in check.annotations if a["annotation_level"] == "failure"]
    assert (annotation["path"], annotation["start_line"]) == ("data/cities.csv", drifted_line)
    assert annotation["title"].startswith(f"Regression: city.c{DRIFTED:03d} / ")
    template_probe = line_of(suite, "- type: keyword_presence")
    assert (
        f"Row data/cities.csv:{drifted_line} of the template at canary.yaml:{template_probe}."
        in (annotation["message"])
    )
    (comment,) = harness.github.comments(PR_NUMBER)
    blob = f"https://github.com/octo-org/octo-repo/blob/{HEAD_SHA}"
    assert f"]({blob}/data/cities.csv#L{drifted_line})" in comment.body
    assert MODEL in comment.body
