"""Secrets are redacted from provider parameters by name, at any depth."""

from __future__ import annotations

import pytest

from promptcanary.core.redact import REDACTED, is_secret_name, redact_params


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "API_KEY",
        "x-api-key",
        "aws_secret_access_key",
        "password",
        "Authorization",
        "access_token",
        "vertex_credentials",
        "azure_ad_token",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["api_base", "max_tokens", "max_completion_tokens", "temperature", "response_format"]
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_redact_params_nested_and_does_not_mutate() -> None:
    params = {
        "api_key": "sk-1",
        "api_base": "http://x",
        "extra_headers": {"Authorization": "Bearer t", "X-Org": "o"},
        "fallbacks": [{"model": "m", "api_key": "sk-2"}],
        "token": None,
    }
    redacted = redact_params(params)
    assert redacted == {
        "api_key": REDACTED,
        "api_base": "http://x",
        "extra_headers": {"Authorization": REDACTED, "X-Org": "o"},
        "fallbacks": [{"model": "m", "api_key": REDACTED}],
        "token": None,
    }
    assert params["api_key"] == "sk-1"
    assert params["extra_headers"]["Authorization"] == "Bearer t"


def test_credentials_inside_an_api_base_url_are_redacted_and_the_rest_kept() -> None:
    params = {
        "api_base": "https://svc:hunter2@llm.example.com:8443/v1?api-key=abc123&region=eu",
        "fallbacks": ["https://k:v@other.example/v1"],
        "plain": "https://llm.example.com/v1",
    }

    out = redact_params(params)

    assert "hunter2" not in str(out) and "abc123" not in str(out) and ":v@" not in str(out)
    assert out["api_base"] == "https://***@llm.example.com:8443/v1?api-key=***&region=eu"
    assert out["fallbacks"] == ["https://***@other.example/v1"]
    assert out["plain"] == "https://llm.example.com/v1"
