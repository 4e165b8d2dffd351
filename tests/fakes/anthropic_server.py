"""A fake of Anthropic's Messages API on 127.0.0.1 (stdlib only), for LiteLLM's real Anthropic
adapter: ``model="anthropic/<name>"``, ``api_base=server.url``, any ``api_key``.

* ``POST /v1/messages``: Anthropic's request shape (``model``, ``max_tokens``, ``messages`` with
  ``role``/``content``, a top-level ``system``) answered in its response shape (``type:
  "message"``, ``content`` blocks, ``stop_reason``, ``usage.input_tokens``/``output_tokens``).
  A request without an ``x-api-key`` header or ``anthropic-version`` gets Anthropic's 401/400
  error body; a request that carries ``seed`` (not a Messages API field) a 400.
* ``answers`` maps a substring of the last user message to the answer's text; other requests
  echo the message. ``requests`` records each request's JSON body and its ``x-api-key`` presence.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_ALLOWED = {
    "model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k", "stop_sequences",
    "stream", "metadata", "tools", "tool_choice", "thinking",
}  # fmt: skip


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


class FakeAnthropicServer:
    """Start with ``with FakeAnthropicServer() as server:``; ``server.url`` is the api_base."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append({"body": body, "has_api_key": bool(headers.get("x-api-key"))})
        if not headers.get("x-api-key"):
            return 401, _error("authentication_error", "x-api-key header is required")
        if not headers.get("anthropic-version"):
            return 400, _error("invalid_request_error", "anthropic-version header is required")
        unknown = sorted(set(body) - _ALLOWED)
        if unknown or not isinstance(body.get("max_tokens"), int) or not body.get("messages"):
            return 400, _error("invalid_request_error", f"bad request: extra fields {unknown}")
        last = _text(body["messages"][-1].get("content"))
        text = next((a for k, a in self.answers.items() if k in last), last)
        return 200, {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(last.split()) + 1, "output_tokens": len(text.split())},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                if not self.path.rstrip("/").endswith("/v1/messages"):
                    status, payload = 404, _error("not_found_error", f"no route {self.path}")
                else:
                    status, payload = server.answer(json.loads(raw or b"{}"), headers)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
