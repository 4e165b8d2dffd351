"""pytest plugin: the `github_server` fixture (a started FakeGitHubServer).

The finalizer fails the test when the fake sent any response that does not match GitHub's
OpenAPI description: such a response is a bug in the fake, not in the code under test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHubServer


@pytest.fixture
def github_server() -> Iterator[FakeGitHubServer]:
    server = FakeGitHubServer().start()
    try:
        yield server
    finally:
        server.stop()
    if server.response_errors:
        pytest.fail(
            "fake GitHub sent responses that do not match the OpenAPI description:\n"
            + "\n".join(server.response_errors),
            pytrace=False,
        )
