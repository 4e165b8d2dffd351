"""A scripted, OpenAI-compatible chat-completions server for tests (stdlib only).

The server is real HTTP on 127.0.0.1: LiteLLM reaches it exactly as it reaches OpenAI, with
``model="openai/<anything>"``, ``api_base=server.url`` and any ``api_key``.

Endpoints
---------
* ``POST /v1/chat/completions`` (also ``/chat/completions``): OpenAI chat-completion format.
  ``"stream": true`` is answered with a 400 (the engine never streams).
* ``GET /v1/models`` (also ``/models``): a model list.
* ``POST /v1/embeddings`` (also ``/embeddings``): OpenAI embeddings format. A text's vector is
  ``server.embedding_of(text)`` (default: 8 numbers hashed from the text);
  ``server.embedding_errors`` is a queue of ``(status, headers)`` answered to the next requests
  before any vector (e.g. a 429 storm with ``Retry-After``); ``server.embedding_requests`` holds
  every request body.

Script
------
Answers are chosen by **rules** added with :meth:`FakeLLMServer.script`:

* ``match`` is a **case-sensitive substring** of the text of the *last user message* (``exact=True``
  requires equality instead; ``match=None`` matches every request). ``system`` optionally adds a
  case-sensitive substring condition on the system message(s) text.
* Priority: **the first added rule that matches wins** (add specific rules before general ones).
* Requests that match no rule get the **default** answer (:meth:`FakeLLMServer.default`), which
  echoes the last user message unless configured otherwise.
* ``server.drift = True`` makes every rule that has ``drifted={...}`` use those overrides (any
  keyword of :meth:`script` except ``match``/``system``/``exact``). ``sequence`` and
  ``choices_random`` take precedence over ``content``, so to drift such a rule give
  ``drifted={"sequence": [...]}`` (or ``choices_random``), not only ``content``.

Per-request behaviour of a rule, in this order:

1. ``fail_times=N`` with ``status``: the first N matching requests get the error, then the rule
   answers normally. ``status`` without ``fail_times``: every matching request gets the error.
   Errors carry an OpenAI-style JSON body and, with ``retry_after``, a ``Retry-After`` header.
2. ``hang=True``: no answer; the handler waits until the client disconnects or the server stops.
3. ``malformed=True``: 200 with a body that is not JSON.
4. Otherwise a 200 whose message is picked from ``sequence`` (cycled over successive matching
   requests), else ``choices_random`` (seeded weighted choice), else ``content``/``tool_calls``.
   ``sequence``/``choices_random`` items are either a content string or a dict of response
   overrides (``content``, ``tool_calls``, ``finish_reason``, ``null_content``, ``empty_choices``,
   ``usage``, ``status``, ``retry_after``, ``malformed``, ``hang``, ``latency``).

Latency = ``server.latency`` (global) + the rule's ``latency``; it is slept in the handler thread
(each request has its own thread), so it stays accurate under concurrency, and it ends early when
the server stops.

Records
-------
``server.requests`` is a list (copy) of dicts, one per chat-completion request:
``model, messages, temperature, max_tokens, seed, tools, tool_choice, response_format, stream,
n, top_p, stop, user, body`` (full JSON body), ``last_user`` and ``system`` (the texts rules
match), ``path``, ``client_port`` (same port = reused keep-alive connection), ``headers``
(``user-agent``, ``content-type``, ``x-*`` such as ``x-stainless-retry-count``; ``authorization``
only as ``has_authorization`` / ``auth_scheme``), ``received_at`` (``time.monotonic()``), ``received_wall`` (``time.time()``),
``rule`` (index of the rule used, ``None`` for the default), ``status`` (status code answered; set
when the answer is sent; ``None`` for a hang).
Counters: ``request_count``, ``in_flight``, ``peak_in_flight``. :meth:`reset` clears records and
counters (and rule counters); ``reset(script=True)`` also removes the rules, the default and drift.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import json
import random
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from tests.fakes.rate_limits import ServerRateLimit

__all__ = ["WEATHER_TOOL", "FakeLLMServer", "Rule"]

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
"""A tool in OpenAI's format, for tests that send tools through the server."""

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
EMBEDDINGS_PATHS = ("/v1/embeddings", "/embeddings")
MODELS_PATHS = ("/v1/models", "/models")

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", None),
    504: ("server_error", None),
}

# Keys a rule override (drifted / sequence item / choices_random item) may set.
_RESPONSE_KEYS = frozenset(
    {
        "content",
        "tool_calls",
        "usage",
        "latency",
        "status",
        "retry_after",
        "headers",
        "fail_times",
        "hang",
        "malformed",
        "empty_choices",
        "null_content",
        "finish_reason",
        "sequence",
        "choices_random",
        "error_message",
    }
)


@dataclass
class Rule:
    """One scripted answer. Build it with :meth:`FakeLLMServer.script`."""

    match: str | None = None
    system: str | None = None
    exact: bool = False
    content: Any = None  # str, or callable(record) -> str, or None
    tool_calls: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None
    latency: float = 0.0
    status: int | None = None
    retry_after: float | str | None = None
    headers: dict[str, str] | None = None
    fail_times: int | None = None
    hang: bool = False
    malformed: bool = False
    empty_choices: bool = False
    null_content: bool = False
    finish_reason: str | None = None
    sequence: list[Any] | None = None
    choices_random: tuple[int, Sequence[tuple[float, Any]]] | None = None
    error_message: str | None = None
    drifted: dict[str, Any] | None = None
    echo: bool = False
    # runtime state (guarded by the server lock)
    hits: int = field(default=0, repr=False)
    _rngs: dict[int, random.Random] = field(default_factory=dict, repr=False)

    def matches(self, last_user: str, system_text: str) -> bool:
        if self.match is not None:
            if self.exact:
                if last_user != self.match:
                    return False
            elif self.match not in last_user:
                return False
        return self.system is None or self.system in system_text

    def reset_state(self) -> None:
        self.hits = 0
        self._rngs.clear()


def _make_rule(match: str | None, **kwargs: Any) -> Rule:
    if kwargs.get("fail_times") is not None and kwargs.get("status") is None:
        raise ValueError("fail_times needs a status (e.g. status=429)")
    if kwargs.get("choices_random") is not None:
        seed, options = kwargs["choices_random"]
        options = list(options)
        if not options or any(w < 0 for w, _ in options) or sum(w for w, _ in options) <= 0:
            raise ValueError(
                "choices_random needs (seed, [(weight, answer), ...]) with weights > 0"
            )
        kwargs["choices_random"] = (seed, options)
    if kwargs.get("sequence") is not None:
        kwargs["sequence"] = list(kwargs["sequence"])
        if not kwargs["sequence"]:
            raise ValueError("sequence must not be empty")
    for key in ("drifted",):
        if kwargs.get(key) is not None:
            unknown = set(kwargs[key]) - _RESPONSE_KEYS
            if unknown:
                raise ValueError(f"unknown keys in {key}: {sorted(unknown)}")
    unknown = set(kwargs) - _RESPONSE_KEYS - {"system", "exact", "drifted"}
    if unknown:
        raise TypeError(f"unknown rule keywords: {sorted(unknown)}")
    return Rule(match=match, **kwargs)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024
    fake: FakeLLMServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    disable_nagle_algorithm = True
    sys_version = ""
    server: _Server

    # -- plumbing ---------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self._send_raw(status, body, "application/json", headers)

    def _send_raw(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        # Headers and body in one write: two small writes on a keep-alive connection hit the
        # Nagle / delayed-ACK stall (~40 ms per request).
        self._headers_buffer.append(b"\r\n")
        self._headers_buffer.append(body)
        self.flush_headers()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, _error_body(status, message), headers)

    # -- routes -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in MODELS_PATHS:
            self.server.fake._count_models_request()
            self._send_json(200, self.server.fake._models_payload())
        else:
            self._error(404, f"Unknown path {self.path}")

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in CHAT_PATHS and path not in EMBEDDINGS_PATHS:
            self._error(404, f"Unknown path {self.path}")
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._error(400, "Request body is not valid JSON")
            return
        if not isinstance(body, dict):
            self._error(400, "Request body must be a JSON object")
            return
        if path in EMBEDDINGS_PATHS:
            self.server.fake._handle_embeddings(self, body)
            return
        self.server.fake._handle_chat(self, path, body)

    def do_PUT(self) -> None:
        self._read_body()
        self._error(405, "Method not allowed")

    do_DELETE = do_PATCH = do_PUT

    # -- hang support -------------------------------------------------------------------------
    def wait_for_disconnect(self, stop: threading.Event) -> None:
        """Block until the peer closes the connection or ``stop`` is set."""
        sock = self.connection
        while not stop.is_set():
            try:
                readable, _, _ = select.select([sock], [], [], 0.05)
            except (OSError, ValueError):
                return
            if readable:
                try:
                    data = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    return
                if not data:
                    return
                # Pipelined data while hanging: keep hanging (we never answer).
                stop.wait(0.05)


def _error_body(status: int, message: str) -> dict[str, Any]:
    err_type, code = _ERROR_TYPES.get(status, ("api_error", None))
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


def _text_of(content: Any) -> str:
    """Text of an OpenAI message ``content`` (string or list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def _hashed_embedding(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 127.5) / 127.5 for b in digest[:8]]


def _rough_tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


class FakeLLMServer:
    """Scripted OpenAI-compatible server on 127.0.0.1. See the module docstring."""

    def __init__(self, *, latency: float = 0.0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.latency = float(latency)
        self.drift = False
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._rules: list[Rule] = []
        self._default = Rule(echo=True)
        self._records: list[dict[str, Any]] = []
        self._in_flight = 0
        self._peak_in_flight = 0
        self._models_requests = 0
        self._ids = itertools.count(1)
        self._connections: set[socket.socket] = set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.models: list[str] = ["fake-model"]
        self.rate_limit: ServerRateLimit | None = None
        """Per-key requests and tokens per minute (see :mod:`tests.fakes.rate_limits`)."""
        self.served_model: str | None = None
        """The ``model`` answers name; the request's model when ``None``."""
        self.fingerprint: str | None = "fp_fake"
        self.embedding_of: Callable[[str], Any] = _hashed_embedding
        self.embedding_errors: list[tuple[int, dict[str, str]]] = []
        self.embedding_requests: list[dict[str, Any]] = []

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> Self:
        if self._httpd is not None:
            raise RuntimeError("FakeLLMServer already started")
        self._stop.clear()
        httpd = _Server((self._host, self._port), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"FakeLLMServer:{httpd.server_address[1]}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; wakes hanging/sleeping handlers and closes open keep-alive connections."""
        httpd = self._httpd
        if httpd is None:
            return
        self._stop.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL to give LiteLLM as ``api_base``, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script ---------------------------------------------------------------------------------
    def script(
        self,
        match: str | None,
        *,
        system: str | None = None,
        exact: bool = False,
        content: str | Callable[[dict[str, Any]], str] | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        usage: dict[str, int] | None = None,
        latency: float = 0.0,
        status: int | None = None,
        retry_after: float | str | None = None,
        headers: dict[str, str] | None = None,
        fail_times: int | None = None,
        hang: bool = False,
        malformed: bool = False,
        empty_choices: bool = False,
        null_content: bool = False,
        finish_reason: str | None = None,
        sequence: Sequence[Any] | None = None,
        choices_random: tuple[int, Sequence[tuple[float, Any]]] | None = None,
        error_message: str | None = None,
        drifted: dict[str, Any] | None = None,
    ) -> Rule:
        """Add a rule (first added matching rule wins) and return it.

        ``tool_calls`` items: ``{"name": str, "arguments": dict | str, "id": str (optional)}``;
        a ``str`` ``arguments`` is sent verbatim (use it for malformed JSON arguments).
        ``finish_reason`` defaults to ``"tool_calls"`` when there are tool calls, else ``"stop"``.
        ``usage`` overrides the rough token counts (keys ``prompt_tokens``, ``completion_tokens``,
        ``total_tokens``; a missing total is computed).
        """
        args = {k: v for k, v in locals().items() if k != "self"}
        rule = _make_rule(**args)
        with self._lock:
            self._rules.append(rule)
        return rule

    def default(self, *, echo: bool = False, **kwargs: Any) -> Rule:
        """Set the answer for requests no rule matches (same keywords as :meth:`script`).

        ``echo=True`` (the initial default) answers the last user message text verbatim.
        """
        rule = _make_rule(None, **kwargs)
        rule.echo = echo
        with self._lock:
            self._default = rule
        return rule

    @property
    def rules(self) -> list[Rule]:
        with self._lock:
            return list(self._rules)

    # -- records ----------------------------------------------------------------------------------
    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._records]

    @property
    def last_request(self) -> dict[str, Any]:
        with self._lock:
            if not self._records:
                raise LookupError("no request recorded")
            return dict(self._records[-1])

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._records)

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def peak_in_flight(self) -> int:
        with self._lock:
            return self._peak_in_flight

    @property
    def models_request_count(self) -> int:
        with self._lock:
            return self._models_requests

    def requests_matching(self, text: str) -> list[dict[str, Any]]:
        """Recorded requests whose last user message contains ``text``."""
        return [r for r in self.requests if text in r["last_user"]]

    def reset(self, *, script: bool = False) -> None:
        """Clear records, counters and rule counters; ``script=True`` also clears the rules,
        restores the echo default and sets ``drift`` and ``latency`` back to off."""
        with self._lock:
            self._records.clear()
            self._peak_in_flight = self._in_flight
            self._models_requests = 0
            for rule in [*self._rules, self._default]:
                rule.reset_state()
            if script:
                self._rules.clear()
                self._default = Rule(echo=True)
                self.drift = False
                self.latency = 0.0
                self.rate_limit = None
                self.served_model = None
                self.fingerprint = "fp_fake"

    # -- internals ----------------------------------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _count_models_request(self) -> None:
        with self._lock:
            self._models_requests += 1

    def _models_payload(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {
                    "id": m,
                    "object": "model",
                    "created": 0,
                    "owned_by": "promptcanary-tests",
                }
                for m in self.models
            ],
        }

    def _record(self, handler: _Handler, path: str, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        last_user = ""
        system_parts = []
        for msg in messages if isinstance(messages, list) else []:
            if not isinstance(msg, dict):
                continue
            if msg.get("role") == "user":
                last_user = _text_of(msg.get("content"))
            elif msg.get("role") in ("system", "developer"):
                system_parts.append(_text_of(msg.get("content")))
        auth = handler.headers.get("Authorization")
        headers = {
            k.lower(): v
            for k, v in handler.headers.items()
            if k.lower() != "authorization"
            and (k.lower().startswith("x-") or k.lower() in ("user-agent", "content-type"))
        }
        headers["has_authorization"] = auth is not None
        headers["auth_scheme"] = auth.split(" ", 1)[0] if auth else None
        return {
            "path": path,
            "client_port": handler.client_address[1],
            "model": body.get("model"),
            "messages": copy.deepcopy(messages),
            "last_user": last_user,
            "system": "\n".join(system_parts),
            "temperature": body.get("temperature"),
            "max_tokens": body.get("max_tokens", body.get("max_completion_tokens")),
            "seed": body.get("seed"),
            "tools": body.get("tools"),
            "tool_choice": body.get("tool_choice"),
            "response_format": body.get("response_format"),
            "stream": body.get("stream"),
            "n": body.get("n"),
            "top_p": body.get("top_p"),
            "stop": body.get("stop"),
            "user": body.get("user"),
            "body": body,
            "headers": headers,
            "received_at": time.monotonic(),
            "received_wall": time.time(),
            "rule": None,
            "status": None,
        }

    def _select(self, record: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
        """Pick the rule and compute this request's effective answer (under the lock)."""
        rule_index: int | None = None
        rule = self._default
        for i, candidate in enumerate(self._rules):
            if candidate.matches(record["last_user"], record["system"]):
                rule_index, rule = i, candidate
                break
        spec = {key: getattr(rule, key) for key in _RESPONSE_KEYS}
        spec["echo"] = rule.echo
        if self.drift and rule.drifted:
            spec.update(rule.drifted)
            if "content" in rule.drifted or "tool_calls" in rule.drifted:
                spec["echo"] = False
        hit = rule.hits
        rule.hits += 1

        fail_times = spec["fail_times"]
        if spec["status"] is not None and (fail_times is None or hit < fail_times):
            spec["_error"] = True
            return rule_index, spec
        if fail_times is not None:
            # Past the failures: answer normally.
            spec["status"] = None
            spec["retry_after"] = None
        pick = None
        if spec["sequence"]:
            seq = spec["sequence"]
            served = hit - (fail_times or 0)
            pick = seq[served % len(seq)]
        elif spec["choices_random"] is not None:
            seed, options = spec["choices_random"]
            # One generator per (rule, choices_random): a drifted alternative has its own.
            rng = rule._rngs.setdefault(id(spec["choices_random"]), random.Random(seed))
            weights = [w for w, _ in options]
            pick = rng.choices([a for _, a in options], weights=weights, k=1)[0]
        if pick is not None:
            spec["echo"] = False
            if isinstance(pick, dict):
                unknown = set(pick) - _RESPONSE_KEYS
                if unknown:
                    raise ValueError(f"unknown keys in sequence/choices item: {sorted(unknown)}")
                if "content" not in pick and "tool_calls" in pick:
                    spec["content"] = None
                spec.update(pick)
            else:
                spec["content"] = pick
                spec["tool_calls"] = None
            spec["_error"] = spec.get("status") is not None
        else:
            spec["_error"] = False
        return rule_index, spec

    def _handle_embeddings(self, handler: _Handler, body: dict[str, Any]) -> None:
        with self._lock:
            self.embedding_requests.append(body)
            error = self.embedding_errors.pop(0) if self.embedding_errors else None
        if error is not None:
            status, headers = error
            handler._error(status, f"scripted error {status}", headers)
            return
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts:
            handler._error(400, "input must be a string or a non-empty list of strings")
            return
        data = [
            {"object": "embedding", "index": i, "embedding": self.embedding_of(str(t))}
            for i, t in enumerate(texts)
        ]
        tokens = sum(_rough_tokens(str(t)) for t in texts)
        handler._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake-embed"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _handle_chat(self, handler: _Handler, path: str, body: dict[str, Any]) -> None:
        record = self._record(handler, path, body)
        with self._lock:
            self._records.append(record)
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
        answer = None
        try:
            with self._lock:
                rule_index, spec = self._select(record)
                record["rule"] = rule_index
            answer = self._answer(handler, record, body, spec)
        finally:
            # Leave "in flight" before the answer is written, so that a client that has its
            # response never observes its own request as still in flight.
            with self._lock:
                self._in_flight -= 1
                if answer is not None:
                    record["status"] = answer[0]
        if answer is None:
            handler.close_connection = True
            return
        status, payload, content_type, headers = answer
        handler._send_raw(status, payload, content_type, headers)

    def _answer(
        self,
        handler: _Handler,
        record: dict[str, Any],
        body: dict[str, Any],
        spec: dict[str, Any],
    ) -> tuple[int, bytes, str, dict[str, str]] | None:
        """Wait as scripted and return (status, body, content type, headers); None = no answer."""
        if body.get("stream"):
            message = "stream=true is not supported by the fake LLM server"
            return 400, json.dumps(_error_body(400, message)).encode(), "application/json", {}
        extra_headers = dict(spec.get("headers") or {})
        payload = None
        if self.rate_limit is not None and not spec["_error"]:
            payload = self._completion_payload(record, body, spec)
            key = handler.headers.get("Authorization") or ""
            ok, limit_headers = self.rate_limit.admit(key, payload["usage"]["total_tokens"])
            extra_headers.update(limit_headers)
            if not ok:  # refused at once, as providers do
                error = json.dumps(_error_body(429, "Rate limit reached")).encode()
                return 429, error, "application/json", extra_headers
        delay = self.latency + float(spec.get("latency") or 0.0)
        if delay > 0 and self._stop.wait(delay):
            return None
        if spec["_error"]:
            status = int(spec["status"])
            if spec.get("retry_after") is not None:
                extra_headers["Retry-After"] = str(spec["retry_after"])
            message = spec.get("error_message") or f"Fake error {status} from FakeLLMServer"
            error = json.dumps(_error_body(status, message)).encode()
            return status, error, "application/json", extra_headers
        if spec.get("hang"):
            handler.wait_for_disconnect(self._stop)
            return None
        if spec.get("malformed"):
            broken = b'{"id": "chatcmpl-broken", "choices": [ this is not json'
            return 200, broken, "application/json", extra_headers
        payload = payload or self._completion_payload(record, body, spec)
        return 200, json.dumps(payload).encode(), "application/json", extra_headers

    def _completion_payload(
        self, record: dict[str, Any], body: dict[str, Any], spec: dict[str, Any]
    ) -> dict[str, Any]:
        with self._lock:
            number = next(self._ids)
        content = spec.get("content")
        if callable(content):
            content = content(record)
        if content is None and spec.get("echo"):
            content = record["last_user"]
        tool_calls = None
        if spec.get("tool_calls"):
            tool_calls = []
            for j, call in enumerate(spec["tool_calls"]):
                args = call.get("arguments", {})
                tool_calls.append(
                    {
                        "id": call.get("id") or f"call_fake_{number}_{j}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                )
        if spec.get("null_content") or (tool_calls and content is None):
            content = None
        elif content is None:
            content = ""
        finish_reason = spec.get("finish_reason") or ("tool_calls" if tool_calls else "stop")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "refusal": None,
        }
        if tool_calls:
            message["tool_calls"] = tool_calls
        n = body.get("n") or 1
        choices = (
            []
            if spec.get("empty_choices")
            else [
                {
                    "index": i,
                    "message": copy.deepcopy(message),
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
                for i in range(int(n))
            ]
        )
        prompt_text = "".join(
            _text_of(m.get("content")) for m in record["messages"] if isinstance(m, dict)
        )
        completion_text = (content or "") + "".join(
            tc["function"]["name"] + tc["function"]["arguments"] for tc in tool_calls or []
        )
        usage = {
            "prompt_tokens": _rough_tokens(prompt_text),
            "completion_tokens": _rough_tokens(completion_text) * int(n),
        }
        usage.update(spec.get("usage") or {})
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        if "total_tokens" not in (spec.get("usage") or {}):
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model or body.get("model") or "fake-model",
            "system_fingerprint": self.fingerprint,
            "choices": choices,
            "usage": usage,
        }
