"""The whole-step tests fork ``entrypoint.py`` from a warm interpreter (tests/e2e/launch.py): a
forked step must be indistinguishable from a fresh ``python entrypoint.py`` in everything the
action can observe, and give the same results."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from tests.e2e import launch
from tests.e2e.conftest import PR_NUMBER, ActionHarness, suite_text
from tests.e2e.runner import ActionResult, run_action

pytestmark = pytest.mark.e2e

#: Prints what a process can see of how it was started, then exits with the code it is given.
PROBE_SCRIPT = """\
import json, os, sys
print(json.dumps({
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "argv": sys.argv,
    "stdin": sys.stdin.read(),
    "path0": sys.path[0],
    "encoding": sys.stdout.encoding,
    "pid_is_new": os.getpid() != int(os.environ["PARENT_PID"]),
}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ["EXIT_CODE"]))
"""

#: Blocks until a signal ends it (or a minute passes: never a hang).
SLEEPER = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n"


def _start(tmp_path: Path, script: str, env: dict[str, str], *, fresh: bool) -> launch.Step:
    tag = "fresh" if fresh else "forked"
    path = tmp_path / f"{tag}.py"
    path.write_text(script, encoding="utf-8")
    cwd = tmp_path / f"cwd-{tag}"
    cwd.mkdir()
    return launch.start(
        env, cwd, tmp_path / f"{tag}.out", tmp_path / f"{tag}.err", fresh=fresh, script=path
    )


def _seen(tmp_path: Path, fresh: bool) -> tuple[int, dict[str, object], str]:
    env = {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "PARENT_PID": str(os.getpid()),
        "EXIT_CODE": "3",
        "ONLY_HERE": "yes",
    }
    step = _start(tmp_path, PROBE_SCRIPT, env, fresh=fresh)
    code = step.wait(60)
    tag = "fresh" if fresh else "forked"
    seen = json.loads((tmp_path / f"{tag}.out").read_text(encoding="utf-8"))
    return code, seen, (tmp_path / f"{tag}.err").read_text(encoding="utf-8")


def test_a_forked_step_sees_what_a_fresh_process_sees(tmp_path: Path) -> None:
    assert "ONLY_HERE" not in os.environ  # so seeing it proves the step got exactly our env
    fresh = _seen(tmp_path, fresh=True)
    forked = _seen(tmp_path, fresh=False)

    for code, seen, stderr in (fresh, forked):
        assert code == 3
        assert seen["stdin"] == ""
        assert seen["pid_is_new"] is True
        assert stderr == "to stderr\n"
        env = seen["env"]
        assert isinstance(env, dict)
        # A fresh interpreter may add LC_CTYPE; nothing of the test process leaks in.
        assert {k: v for k, v in env.items() if k != "LC_CTYPE"} == {
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
            "PARENT_PID": str(os.getpid()),
            "EXIT_CODE": "3",
            "ONLY_HERE": "yes",
        }
    fresh_seen, forked_seen = fresh[1], forked[1]
    assert Path(str(forked_seen["cwd"])).name == "cwd-forked"
    assert Path(str(fresh_seen["cwd"])).name == "cwd-fresh"
    assert Path(str(forked_seen["argv"][0])).name == "forked.py"  # type: ignore[index]
    assert forked_seen["path0"] == str(tmp_path)
    assert forked_seen["encoding"] == fresh_seen["encoding"]


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "forked"])
def test_a_signal_reaches_the_step_and_is_its_exit_status(tmp_path: Path, fresh: bool) -> None:
    step = _start(tmp_path, SLEEPER, {"PATH": os.environ["PATH"]}, fresh=fresh)
    out = tmp_path / ("fresh.out" if fresh else "forked.out")
    deadline = time.monotonic() + 60
    while "ready" not in out.read_text(encoding="utf-8") and time.monotonic() < deadline:
        time.sleep(0.02)
    step.send_signal(signal.SIGTERM)
    assert step.wait(60) == -signal.SIGTERM


# Wall-clock figures, the record's timestamp and the check run's id differ between two runs;
# nothing else may.
_TIMING = re.compile(r"[\d,.\\]+ m?s(?: \([^)]*\))?")
_RECORD = re.compile(r"<!-- promptcanary-approval:v1:[A-Za-z0-9_=-]* -->")


def _mask(text: str) -> str:
    masked = _TIMING.sub("<t>", _RECORD.sub("<record>", text))
    return re.sub(r"/runs/\d+", "/runs/<id>", masked)


def _comparable(result: ActionResult, harness: ActionHarness) -> dict[str, object]:
    comments = harness.github.comments(PR_NUMBER)
    return {
        "returncode": result.returncode,
        "outputs": {k: _mask(v) for k, v in result.outputs.items() if "latency" not in k},
        "annotations": [(c.name, c.properties, c.message) for c in result.annotations()],
        "comment": _mask(comments[-1].body),
        "drift": json.loads((result.report_dir / "drift.json").read_text(encoding="utf-8"))
        if (result.report_dir / "drift.json").is_file()
        else None,
    }


def test_a_pull_request_step_gives_the_same_results_fresh_and_forked(
    harness: ActionHarness,
) -> None:
    prompts = """\
  - id: refund
    text: What is the refund window?
    probes:
      - type: keyword_presence
        required_keywords: [30 days]
"""
    harness.write("canary.yaml", suite_text("support", harness.llm.url, prompts))
    harness.llm.script(
        "refund window",
        content="Within 30 days.",
        drifted={"content": "It depends."},
    )
    baseline = harness.run_push({"baseline": "path", "update-baseline": "always"})
    assert baseline.returncode == 0, baseline.log
    harness.llm.drift = True

    results = {}
    for fresh in (True, False):
        harness.runner = functools.partial(run_action, fresh=fresh)
        result = harness.run_pr({"baseline": "path"})
        results[fresh] = _comparable(result, harness)

    assert results[True]["returncode"] == 1
    assert results[True]["annotations"], "the drifted prompt is annotated"
    for key in results[True]:
        assert results[True][key] == results[False][key], key
