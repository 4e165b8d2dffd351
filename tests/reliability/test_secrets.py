"""Secrets: a provider key in the environment and in a model entry's parameters, and the GitHub
token, must appear nowhere a user or a later reader can see them.

A push promotes a baseline to the data branch, then a drifted pull request is compared with it.
Afterwards every file of the report folder, the outputs, the job summary, the log, every request
body the fake GitHub server received, the git history of every ref of the origin and the
checkout's git config are searched for the secrets.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.e2e.runner import FAKE_TOKEN, ActionResult
from tests.fakes.git_fixtures import GitWorkspace, run_git
from tests.reliability.conftest import MODEL, ActionHarness, read_report_files

pytestmark = pytest.mark.e2e

ENV_KEY = "sk-test-SECRET-123456"
PARAM_KEY = "sk-test-SECRET-PARAM-654321"
SECRETS = (ENV_KEY, PARAM_KEY, FAKE_TOKEN)
#: What git's http.extraheader carries for the token (see promptcanary_action/baselines/git.py).
TOKEN_BASIC = base64.b64encode(f"x-access-token:{FAKE_TOKEN}".encode()).decode("ascii")


def _suite(api_base: str) -> str:
    return f"""\
name: secrets
models:
  - model: {MODEL}
    api_base: {api_base}
    api_key: {PARAM_KEY}
prompts:
  - id: status
    text: Is the service up?
    probes:
      - type: keyword_presence
        required_keywords: [operational]
"""


def _places(result: ActionResult) -> dict[str, str]:
    places = {f"report:{path.name}": text for path, text in read_report_files(result).items()}
    places.update(
        {
            "outputs": json.dumps(result.outputs),
            "summary": result.summary,
            "stdout": result.stdout,
            "stderr": result.stderr,
        }
    )
    return places


def _assert_absent(places: dict[str, str]) -> None:
    for where, text in places.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret[:12]}… leaked into {where}"
        assert TOKEN_BASIC not in text, f"the token's basic-auth header leaked into {where}"


def test_no_secret_reaches_any_report_output_log_request_or_git_history(
    harness: ActionHarness, git_workspace: GitWorkspace
) -> None:
    harness.workspace = git_workspace.path
    harness.env = {"OPENAI_API_KEY": ENV_KEY}
    harness.write("canary.yaml", _suite(harness.llm.url))
    harness.llm.script(
        "service up", content="All systems operational.", drifted={"content": "Unknown."}
    )

    created = harness.run_push({"baseline": "branch"})
    assert created.returncode == 0, created.log
    assert created.outputs["baseline-status"] == "created", created.log
    harness.llm.drift = True
    compared = harness.run_pr({"baseline": "branch"})
    assert compared.returncode == 1, compared.log
    assert compared.outputs["baseline-status"] == "found"
    # The key in the model entry was the one sent (a Bearer header reached the server).
    assert all(r["headers"]["auth_scheme"] == "Bearer" for r in harness.llm.requests)

    places = {**_places(created), **{f"pr {k}": v for k, v in _places(compared).items()}}
    bodies = [json.dumps(r.json) for r in harness.github.requests if r.json is not None]
    assert bodies, "nothing was posted to GitHub"
    places.update({f"github request {n}": body for n, body in enumerate(bodies)})
    [comment] = harness.github.comments(7)
    places["comment"] = comment.body

    origin = git_workspace.origin_path
    env = git_workspace.env
    history = run_git("log", "-p", "--all", "--format=%H %s%n%b", cwd=origin, env=env).stdout
    assert "secrets/openai-fake/baseline.json" in history, "the baseline was not promoted"
    places["git log -p --all (origin)"] = history
    places[".git/config"] = (git_workspace.path / ".git" / "config").read_text(encoding="utf-8")
    for path in Path(git_workspace.path / ".git").glob("*.lock"):
        pytest.fail(f"stale git lock left behind: {path}")

    _assert_absent(places)

    # The parameter is recorded as present but redacted, so a reader sees it was configured.
    snapshot = json.loads(
        run_git(
            "show", "promptcanary-baselines:secrets/openai-fake/baseline.json", cwd=origin, env=env
        ).stdout
    )
    params = snapshot["provider"]["extra_params"]
    assert params["api_key"] == "***"
    assert "api_base" in params


def test_a_provider_error_echoing_the_keys_does_not_leak_them(harness: ActionHarness) -> None:
    # OpenAI echoes a masked key in its 401 message; a proxy or a hostile endpoint may echo it
    # whole. The reason is recorded and shown in the comment: it must not carry the key.
    harness.env = {"OPENAI_API_KEY": ENV_KEY}
    harness.write("canary.yaml", _suite(harness.llm.url))
    harness.llm.script(
        None,
        status=401,
        error_message=f"Incorrect API key provided: {ENV_KEY} (also tried {PARAM_KEY})",
    )

    result = harness.run_pr({"baseline": "none"})

    assert result.returncode == 3, result.log
    [comment] = harness.github.comments(7)
    places = _places(result)
    places["comment"] = comment.body
    assert any("Incorrect API key provided" in text for text in places.values())
    _assert_absent(places)
