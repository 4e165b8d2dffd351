"""Re-pin the Dockerfile's base image to the digest its tag points at today.

The Dockerfile names its base as ``ARG BASE_IMAGE=python:<tag>@sha256:<digest>``: the tag says
what it is, the digest fixes which build of it. This asks the registry (Docker Hub by default)
for the tag's current manifest *index* (the multi-arch list: the release builds linux/amd64 and
linux/arm64), checks that the body's sha256 is the digest the registry announces, and rewrites
that one line. Review the diff and the image's release notes, then commit.

    python scripts/bump_base_image.py                 # bump to the tag's current digest
    python scripts/bump_base_image.py --check         # exit 1 if the pin is not current
    python scripts/bump_base_image.py --tag 3.13-slim-trixie
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DOCKER_HUB_REGISTRY = "https://registry-1.docker.io"
DOCKER_HUB_AUTH = "https://auth.docker.io/token"
INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
_PIN_RE = re.compile(
    r"^ARG BASE_IMAGE=(?P<name>[a-z0-9._/-]+):(?P<tag>[A-Za-z0-9._-]+)"
    r"@(?P<digest>sha256:[0-9a-f]{64})$",
    re.MULTILINE,
)
_TIMEOUT = 30


class BumpError(RuntimeError):
    """The Dockerfile or the registry's answer is not what a bump expects."""


@dataclass(frozen=True)
class Pin:
    name: str
    tag: str
    digest: str


def read_pin(dockerfile: str) -> Pin:
    matches = list(_PIN_RE.finditer(dockerfile))
    if len(matches) != 1:
        raise BumpError(
            "Dockerfile: expected exactly one `ARG BASE_IMAGE=<name>:<tag>@sha256:<digest>` line,"
            f" found {len(matches)}"
        )
    match = matches[0]
    return Pin(match["name"], match["tag"], match["digest"])


def write_pin(dockerfile: str, pin: Pin) -> str:
    read_pin(dockerfile)  # exactly one line to replace
    return _PIN_RE.sub(f"ARG BASE_IMAGE={pin.name}:{pin.tag}@{pin.digest}", dockerfile)


def resolve(name: str, tag: str, *, registry: str, auth: str | None) -> str:
    """The digest of the manifest index ``name:tag`` points at, verified against its body."""
    repository = name if "/" in name else f"library/{name}"
    headers = {"Accept": ", ".join(INDEX_TYPES)}
    if auth:
        query = urllib.parse.urlencode(
            {"service": "registry.docker.io", "scope": f"repository:{repository}:pull"}
        )
        token = json.loads(_get(f"{auth}?{query}", {})[0]).get("token")
        if not isinstance(token, str) or not token:
            raise BumpError(f"{auth}: no token in the answer")
        headers["Authorization"] = f"Bearer {token}"
    body, response_headers = _get(f"{registry}/v2/{repository}/manifests/{tag}", headers)
    media_type = response_headers.get("Content-Type", "").split(";")[0].strip()
    if media_type not in INDEX_TYPES:
        raise BumpError(
            f"{name}:{tag} is a {media_type or 'manifest of unknown type'}, not a multi-arch"
            " index: the release builds linux/amd64 and linux/arm64 from it"
        )
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    announced = response_headers.get("Docker-Content-Digest")
    if announced and announced != digest:
        raise BumpError(f"{name}:{tag}: the registry announced {announced}, the body is {digest}")
    return digest


def _get(url: str, headers: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
            return response.read(), dict(response.headers.items())
    except urllib.error.HTTPError as exc:
        raise BumpError(f"GET {url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, TimeoutError) as exc:
        raise BumpError(f"GET {url}: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dockerfile", type=Path, default=Path("Dockerfile"))
    parser.add_argument("--tag", help="move the pin to another tag of the same image")
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if outdated")
    parser.add_argument("--registry", default=DOCKER_HUB_REGISTRY)
    parser.add_argument("--auth", default=DOCKER_HUB_AUTH, help="token endpoint; '' for none")
    args = parser.parse_args(argv)
    try:
        text = args.dockerfile.read_text(encoding="utf-8")
        old = read_pin(text)
        tag = args.tag or old.tag
        new = Pin(old.name, tag, resolve(old.name, tag, registry=args.registry, auth=args.auth))
    except (BumpError, OSError) as exc:
        print(f"bump_base_image: {exc}", file=sys.stderr)
        return 2
    if new == old:
        print(f"bump_base_image: {old.name}:{old.tag}@{old.digest} is current")
        return 0
    print(
        f"bump_base_image: {old.name}:{old.tag}@{old.digest}\n"
        f"  -> {new.name}:{new.tag}@{new.digest}"
    )
    if args.check:
        return 1
    args.dockerfile.write_text(write_pin(text, new), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
