"""Redaction of secrets in provider parameters before they reach a run result or a snapshot.

Redaction goes by the parameter's *name*, never by its value: ``api_key``, ``X-Api-Key``,
``aws_secret_access_key``, ``password``, ``Authorization`` and the like become ``"***"``, at any
depth of nested mappings and lists (``extra_headers: {Authorization: ...}``). Token *counts*
(``max_tokens``, ``max_completion_tokens``) are not secrets and are kept: losing them would hide a
parameter change between a baseline and a run.

URLs are the one place a secret hides inside a value (``api_base: https://user:pass@host/?api-key=…``):
their user-info and secret-looking query parameters are redacted too, the rest of the URL kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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


def redact_url(url: str) -> str:
    """``url`` without a password in its user-info or secrets in its query string."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return redact_params(value)
    if isinstance(value, list | tuple):
        return [_redact_value(item) for item in value]
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value
