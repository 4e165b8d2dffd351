"""Pytest fixtures for the fake OpenAI-compatible server (registered in tests/conftest.py).

* ``llm_server``: a fresh :class:`FakeLLMServer` per test (starting one takes milliseconds).
* ``llm_server_session``: one server for the whole session; it is ``reset(script=True)`` before
  every test that uses it through ``shared_llm_server``.
* ``llm_env``: ``llm_server`` plus the environment LiteLLM reads (``OPENAI_API_KEY``,
  ``OPENAI_API_BASE``, ``LITELLM_LOCAL_MODEL_COST_MAP``), set with ``monkeypatch``; returns the
  server, so ``litellm.completion(model="openai/fake-model", messages=...)`` reaches it.

Calling LiteLLM against it (what the engine does)::

    litellm.completion(model="openai/fake-model", api_base=llm_server.url, api_key="sk-test",
                       messages=[...], max_retries=0, num_retries=0, timeout=...)

``max_retries=0`` (or ``num_retries=0``) is needed for exactly one HTTP request per call: the
OpenAI SDK under LiteLLM otherwise retries 429/5xx/timeouts twice.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeLLMServer

FAKE_API_KEY = "sk-test-fake"
FAKE_MODEL = "openai/fake-model"


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started fake LLM server, stopped after the test."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="session")
def llm_server_session() -> Iterator[FakeLLMServer]:
    """One fake LLM server for the whole session (use ``shared_llm_server`` in tests)."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def shared_llm_server(llm_server_session: FakeLLMServer) -> FakeLLMServer:
    """The session server, with its script, records and counters cleared for this test."""
    llm_server_session.reset(script=True)
    return llm_server_session


@pytest.fixture
def llm_env(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    """``llm_server`` with OPENAI_API_KEY / OPENAI_API_BASE pointing LiteLLM at it."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("OPENAI_API_BASE", llm_server.url)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.url)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return llm_server
