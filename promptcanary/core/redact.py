"""Redaction of secrets in provider parameters before they reach a run result or a snapshot.

Redaction goes by the parameter's *name*, never by its value: ``api_key``, ``X-Api-Key``,
``aws_secret_access_key``, ``password``, ``Authorization`` and the like become ``"***"``, at any
depth of nested mappings and lists (``extra_headers: {Authorization: ...}``). Token *counts*
(``max_tokens``, ``max_completion_tokens``) are not secrets and are kept: losing them would hide a
parameter change between a baseline and a run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "***"

# "token" but not "tokens" (a count); "passw" covers password / passwd.
_SECRET_NAME_RE = re.compile(
    r"key|token(?!s)|secret|passw|authorization|credential|cookie", re.IGNORECASE
)


def is_secret_name(name: str) -> bool:
    """True when a parameter called ``name`` may hold a credential."""
    return bool(_SECRET_NAME_RE.search(name))


def redact_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``params`` with the values of secret-looking keys replaced by ``"***"``."""
    return {
        key: REDACTED if is_secret_name(str(key)) and value is not None else _redact_value(value)
        for key, value in params.items()
    }


def _redact_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return redact_params(value)
    if isinstance(value, list | tuple):
        return [_redact_value(item) for item in value]
    return value
