"""`make demo`: the whole flow offline, on recorded responses (no network, no API key).

1. Pushes to the default branch run examples/canary.yaml on examples/recordings/baseline.jsonl:
   there is no baseline yet, so the first run becomes it (kept in .demo/baselines); the later
   pushes promote their runs too, which gives the score trend a history.
2. A pull request runs the suite on examples/recordings/drifted.jsonl (the "model update") and is
   compared with that baseline.
3. The drift report is printed here, and promptcanary-report/ receives exactly what the action
   writes, comment.md (the pull-request comment it would post) included.

Both steps go through the action's own decisions and pipeline (``decide``, ``run_pair`` and
``build_outcome``), so what this prints is what the action would report.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing it

from promptcanary.core.config.schema import load_suite  # noqa: E402
from promptcanary.core.render.terminal import format_drift  # noqa: E402
from promptcanary.core.spec import ModelSpec  # noqa: E402
from promptcanary.providers.factory import make_provider  # noqa: E402
from promptcanary_action.activity import Activity, decide  # noqa: E402
from promptcanary_action.baselines.path import PathBackend  # noqa: E402
from promptcanary_action.context import EventContext  # noqa: E402
from promptcanary_action.outcome import PairOutcome, build_outcome  # noqa: E402
from promptcanary_action.pipeline import Backend, LoadedSuite, PairJudging, run_pair  # noqa: E402
from promptcanary_action.render import comment_marker, render_comment, render_summary  # noqa: E402
from promptcanary_action.report_dir import write_reports  # noqa: E402
from promptcanary_action.settings import Settings  # noqa: E402

SUITE = ROOT / "examples" / "canary.yaml"

PUSH_TO_MAIN = EventContext(
    event_name="push", sha="", head_sha="", ref_name="main", default_branch="main"
)
PULL_REQUEST = EventContext(
    event_name="pull_request",
    sha="",
    head_sha="",
    pr_number=1,
    base_ref="main",
    default_branch="main",
)


def _activity(event: EventContext, settings: Settings) -> Activity:
    """What the action does on ``event``, by its own rules (``decide``)."""
    activity = decide(event, settings)
    assert isinstance(activity, Activity)  # mode: run
    return activity


MODEL = "openai/gpt-4o-mini"
"""The model both recordings were taken from: before and after a (simulated) provider update.

Baselines are keyed by the model that answered, so the replay of ``drifted.jsonl`` is compared
with the baseline that the replay of ``baseline.jsonl`` created.
"""


PUSHES = ("3f2a9c1e", "8b71d0a4", "c45e2f97")
"""Commits of the simulated pushes to main (they label the trend chart's points)."""


def _run(
    loaded: LoadedSuite,
    recording: str,
    activity: Activity,
    *,
    settings: Settings,
    backend: Backend,
    sha: str = "",
) -> PairOutcome:
    """One step of the action, the model's answers replayed from ``recording``."""
    with contextlib.redirect_stderr(io.StringIO()):  # no progress lines in the demo's output
        return asyncio.run(
            run_pair(
                loaded,
                ModelSpec(f"replay:recordings/{recording}"),
                PairJudging(settings, activity, sha, backend, lambda: datetime.now(UTC)),
                ref=activity.baseline_ref,
                provider_factory=lambda model, params, base_dir: make_provider(
                    model, params, base_dir=base_dir
                ),
            )
        )


def main(argv: list[str] | None = None) -> int:
    """``demo.py [OUT]``: baselines go to OUT/.demo, reports to OUT/promptcanary-report."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]).resolve() if args else ROOT
    baselines, report_dir = out / ".demo" / "baselines", out / "promptcanary-report"
    # The action's defaults (fail-on: regression, thresholds 0.05, …), without progress output.
    settings = Settings.from_environ({})
    # A fresh demo: the first run must create the baseline; no report files of an earlier demo.
    shutil.rmtree(baselines, ignore_errors=True)
    shutil.rmtree(report_dir, ignore_errors=True)
    backend = PathBackend(baselines)  # the action's `baseline: path`
    loaded = LoadedSuite(load_suite(SUITE), SUITE, SUITE.relative_to(ROOT).as_posix())
    on_push, on_pr = _activity(PUSH_TO_MAIN, settings), _activity(PULL_REQUEST, settings)

    for number, sha in enumerate(PUSHES):
        push = _run(loaded, "baseline.jsonl", on_push, settings=settings, backend=backend, sha=sha)
        score = push.run.overall_score
        shown = "–" if score is None else f"{score:.3f}"
        print(
            f"1.{number + 1} push {sha[:7]} to main: {push.suite_name} on {MODEL} "
            f"(baseline.jsonl) scored {shown}; baseline "
            f"{push.baseline_status.value} ({Path(push.baseline_location or '').relative_to(out)})"
        )

    pair = _run(loaded, "drifted.jsonl", on_pr, settings=settings, backend=backend)
    print(f"2. pull request: the suite on {MODEL} again (drifted.jsonl), compared:\n")
    assert pair.drift is not None  # the baseline was just created
    print(format_drift(pair.drift, pair.notes))

    outcome = build_outcome(
        [pair],
        settings,
        warnings=[],
        event_name="pull_request",
        report_files=[report_dir.name],
    )
    comment = render_comment(outcome, comment_marker("default"))
    files = write_reports(outcome, report_dir, comment, render_summary(outcome))
    print(
        f"\n{outcome.verdict}\n"
        f"The pull-request comment the action would post: {files.comment.relative_to(out)}\n"
        f"All report files (run.json, drift.json, summary.md, …): {report_dir.relative_to(out)}/"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
