"""scripts/bump_base_image.py against a small local registry (the OCI distribution API's token and
manifest endpoints): the Dockerfile's one pin moves to the digest of the tag's multi-arch index."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bump_base_image.py"
TOKEN = "registry-token-123"
INDEX = "application/vnd.oci.image.index.v1+json"
SINGLE = "application/vnd.oci.image.manifest.v1+json"


class Registry(ThreadingHTTPServer):
    #: tag -> (media type, body, announced digest or None for the true one)
    manifests: dict[str, tuple[str, bytes, str | None]]
    seen: list[tuple[str, dict[str, str]]]


class Handler(BaseHTTPRequestHandler):
    server: Registry

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers.items())))
        if self.path.startswith("/token?"):
            self._send(200, "application/json", json.dumps({"token": TOKEN}).encode())
            return
        prefix = "/v2/library/python/manifests/"
        if not self.path.startswith(prefix):
            self._send(404, "text/plain", b"not found")
            return
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._send(401, "text/plain", b"unauthorized")
            return
        entry = self.server.manifests.get(self.path.removeprefix(prefix))
        if entry is None:
            self._send(404, "text/plain", b"manifest unknown")
            return
        media_type, body, announced = entry
        digest = announced or "sha256:" + hashlib.sha256(body).hexdigest()
        self._send(200, media_type, body, {"Docker-Content-Digest": digest})

    def _send(
        self, status: int, ctype: str, body: bytes, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def registry() -> Iterator[Registry]:
    server = Registry(("127.0.0.1", 0), Handler)
    server.manifests, server.seen = {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def index_body(marker: str) -> bytes:
    return json.dumps(
        {"schemaVersion": 2, "mediaType": INDEX, "manifests": [], "m": marker}
    ).encode()


def digest_of(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


OLD = "sha256:" + "1" * 64
DOCKERFILE = f"# base\nARG BASE_IMAGE=python:3.13-slim-trixie@{OLD}\nFROM ${{BASE_IMAGE}}\n"


def bump(
    registry: Registry, tmp_path: Path, *args: str, text: str = DOCKERFILE
) -> subprocess.CompletedProcess[str]:
    dockerfile = tmp_path / "Dockerfile"
    if not dockerfile.exists():
        dockerfile.write_text(text, encoding="utf-8")
    url = f"http://127.0.0.1:{registry.server_address[1]}"
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--dockerfile",
            str(dockerfile),
            "--registry",
            url,
            "--auth",
            f"{url}/token",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_pin_moves_to_the_digest_of_the_tags_index(registry: Registry, tmp_path: Path) -> None:
    body = index_body("today")
    registry.manifests["3.13-slim-trixie"] = (INDEX, body, None)

    proc = bump(registry, tmp_path)

    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "Dockerfile").read_text(encoding="utf-8")
    assert text == DOCKERFILE.replace(OLD, digest_of(body))
    token_request = next(path for path, _ in registry.seen if path.startswith("/token?"))
    assert "scope=repository%3Alibrary%2Fpython%3Apull" in token_request
    manifest_headers = next(h for p, h in registry.seen if p.startswith("/v2/"))
    assert INDEX in manifest_headers["Accept"]


def test_check_reports_an_outdated_pin_without_writing(registry: Registry, tmp_path: Path) -> None:
    registry.manifests["3.13-slim-trixie"] = (INDEX, index_body("newer"), None)

    proc = bump(registry, tmp_path, "--check")

    assert proc.returncode == 1
    assert "->" in proc.stdout
    assert (tmp_path / "Dockerfile").read_text(encoding="utf-8") == DOCKERFILE


def test_a_current_pin_is_left_alone(registry: Registry, tmp_path: Path) -> None:
    body = index_body("same")
    registry.manifests["3.13-slim-trixie"] = (INDEX, body, None)
    current = DOCKERFILE.replace(OLD, digest_of(body))

    proc = bump(registry, tmp_path, "--check", text=current)

    assert proc.returncode == 0, proc.stderr
    assert "is current" in proc.stdout


def test_another_tag_moves_tag_and_digest(registry: Registry, tmp_path: Path) -> None:
    body = index_body("3.14")
    registry.manifests["3.14-slim-trixie"] = (INDEX, body, None)

    proc = bump(registry, tmp_path, "--tag", "3.14-slim-trixie")

    assert proc.returncode == 0, proc.stderr
    assert f"ARG BASE_IMAGE=python:3.14-slim-trixie@{digest_of(body)}\n" in (
        tmp_path / "Dockerfile"
    ).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ((SINGLE, b"{}", None), "not a multi-arch index"),
        ((INDEX, b"{}", "sha256:" + "2" * 64), "the body is sha256:"),
    ],
    ids=["single-arch", "digest-mismatch"],
)
def test_a_suspicious_answer_changes_nothing(
    registry: Registry, tmp_path: Path, manifest: tuple[str, bytes, str | None], message: str
) -> None:
    registry.manifests["3.13-slim-trixie"] = manifest

    proc = bump(registry, tmp_path)

    assert proc.returncode == 2
    assert message in proc.stderr
    assert (tmp_path / "Dockerfile").read_text(encoding="utf-8") == DOCKERFILE


def test_an_unknown_tag_names_the_url_and_status(registry: Registry, tmp_path: Path) -> None:
    proc = bump(registry, tmp_path, "--tag", "9.9-nope")

    assert proc.returncode == 2
    assert "/v2/library/python/manifests/9.9-nope: HTTP 404" in proc.stderr


def test_the_repositorys_dockerfile_has_exactly_one_pin() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from bump_base_image import read_pin
    finally:
        sys.path.remove(str(SCRIPT.parent))
    pin = read_pin((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    assert (pin.name, pin.tag) == ("python", "3.13-slim-trixie")
