"""Hostile suite files through the real entrypoint: tabs, duplicate keys, an unknown probe, wrong
types, a 10 MB file, a billion-laughs YAML bomb, and a python/object tag.

Each is exit 2 with an error that names ``file:line``; nothing from the file is executed (safe
loading only); the bomb is refused before it can expand (the step stays within a memory cap).
The loader itself is fuzzed in tests/unit/core/config/test_schema_fuzz.py and its limits are unit-tested
in tests/unit/core/config/test_schema.py; this module proves the user sees the result.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import pr_event
from tests.e2e.runner import ENTRYPOINT, ActionResult, build_env, parse_command_file
from tests.reliability.conftest import ActionHarness
from tests.suite_texts import yaml_bomb

pytestmark = pytest.mark.e2e

CONFIG_ERROR = "PromptCanary: configuration error"
#: The step's address-space cap: ample for the action, far too small for an expanded bomb.
MEMORY_CAP = 2 * 1024**3

VALID_HEAD = "name: hostile\nmodels: [openai/fake]\n"


CASES = {
    # name: (suite text, line expected in the message, words expected in the message)
    "tabs": (VALID_HEAD + "prompts:\n\t- text: hi\n", 4, ("tabs",)),
    "duplicate-key": (
        VALID_HEAD + "prompts:\n  - text: hi\n    text: again\n",
        5,
        ("duplicate", "text"),
    ),
    "unknown-probe": (
        VALID_HEAD + "prompts:\n  - text: hi\n    probes:\n      - type: json_valid\n",
        6,
        ("json_valid", "json_validity"),
    ),
    "wrong-type": (
        VALID_HEAD
        + "prompts:\n  - text: hi\n    probes:\n      - type: response_length\n"
        + "        max_chars: lots\n",
        6,  # the probe entry whose parameter is wrong
        ("max_chars",),
    ),
    "python-tag": (
        VALID_HEAD + 'prompts:\n  - text: !!python/object/apply:os.system ["touch PWNED"]\n',
        4,
        ("python/object",),
    ),
    "billion-laughs": (yaml_bomb(11), None, ("YAML bomb",)),
}


def _run_capped(harness: ActionHarness, inputs: dict[str, str]) -> ActionResult:
    """Run the entrypoint like :func:`run_action`, under an address-space limit.

    ``timeout=90`` is the hang guard: a bomb that were expanded would not finish.
    """
    env = build_env(
        harness.tmp_path / "capped",
        inputs={"timeout": "5", "max-retries": "0", **inputs},
        event_name="pull_request",
        event=pr_event(),
        workspace=harness.workspace,
        env={"OPENAI_API_KEY": "sk-test"},
        github_api_url=harness.github.url,
    )

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    proc = subprocess.run(
        [sys.executable, str(ENTRYPOINT)],
        cwd=harness.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        # Safe here: the child only sets a limit before exec (no locks, no threads involved).
        preexec_fn=cap,
        check=False,
    )
    outputs = parse_command_file(Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8"))
    result = ActionResult(
        returncode=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=outputs,
        summary=Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"),
        report_dir=harness.workspace / "promptcanary-report",
    )
    return result


def _config_error(result: ActionResult) -> str:
    errors = [c for c in result.annotations("error") if c.properties.get("title") == CONFIG_ERROR]
    assert len(errors) == 1, result.log
    return errors[0].message


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_suite_is_exit_2_with_file_and_line(harness: ActionHarness, case: str) -> None:
    text, line, words = CASES[case]
    harness.write("suites/canary.yaml", text)

    result = _run_capped(harness, {"config": "suites/canary.yaml"})

    assert result.returncode == 2, result.log
    message = _config_error(result)
    where = "suites/canary.yaml:" + (f"{line}:" if line else "")
    assert where in message, message
    for word in words:
        assert word in message, message
    assert "Traceback" not in result.log
    assert not (harness.workspace / "PWNED").exists()
    assert not (harness.workspace / "promptcanary-report").exists()
    assert harness.llm.request_count == 0


def test_ten_megabyte_suite_is_refused_without_reading_it_all(harness: ActionHarness) -> None:
    line = "  - text: " + "x" * 100 + "\n"
    text = VALID_HEAD + "prompts:\n" + line * (10 * 1024 * 1024 // len(line))
    harness.write("canary.yaml", text)
    assert (harness.workspace / "canary.yaml").stat().st_size > 10_000_000

    result = _run_capped(harness, {})

    assert result.returncode == 2, result.log
    message = _config_error(result)
    assert "canary.yaml" in message
    assert "too large" in message
