"""The action's image, run like the GitHub runner runs it (``make container-test``).

``make container-test`` builds the image with podman and sets ``PROMPTCANARY_IMAGE``; without it
(a plain ``make test``) these tests are skipped, because building the image needs podman, root
and a package mirror. The ``container`` fixture is the e2e harness with ``entrypoint.py`` run in
the image instead of a local subprocess, against the same fake LLM and GitHub servers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.container.runner import container_runner
from tests.e2e.conftest import FAST_INPUTS, ActionHarness, github_pr, workspace
from tests.fakes.git_fixtures import GitWorkspace
from tests.fakes.github_server import FakeGitHubServer
from tests.fakes.llm_server import FakeLLMServer

__all__ = ["github_pr", "workspace"]  # e2e fixtures used here

IMAGE_VARIABLE = "PROMPTCANARY_IMAGE"
#: The first request's timeout also covers waiting for LiteLLM's import, which in a fresh
#: container (nothing of its ~2,000 modules in the page cache) on a loaded 2-core machine took
#: over 10 s, the e2e tests' value; the action's default is 60.
CONTAINER_INPUTS = {**FAST_INPUTS, "timeout": "60"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(IMAGE_VARIABLE):
        return
    skip = pytest.mark.skip(reason=f"{IMAGE_VARIABLE} is not set: run `make container-test`")
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def image() -> str:
    return os.environ[IMAGE_VARIABLE]


@pytest.fixture
def container(
    image: str,
    tmp_path: Path,
    git_workspace: GitWorkspace,
    llm_server: FakeLLMServer,
    github_pr: FakeGitHubServer,
) -> ActionHarness:
    """The e2e harness running the action in the image, in a git checkout whose origin (a bare
    repository on disk) is mounted too, with the fake servers."""
    return ActionHarness(
        tmp_path,
        git_workspace.path,
        llm_server,
        github_pr,
        defaults=CONTAINER_INPUTS,
        runner=container_runner(image, [git_workspace.origin_path]),
    )
