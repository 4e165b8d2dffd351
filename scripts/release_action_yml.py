"""Point action.yml at the prebuilt image of a release (run by the release workflow).

On `main`, ``action.yml`` says ``image: Dockerfile``: GitHub builds the image from the checked-out
code, so ``uses: ./`` and the self-test run the code under review. A release commit instead names
the image the release workflow pushed, so a user's job pulls it and builds nothing::

    runs:
      using: docker
      image: docker://ghcr.io/<owner>/promptcanary-action:<version>

Only that one line changes; inputs, outputs, comments and layout stay byte for byte. The script
refuses an action.yml whose ``runs:`` is not the Docker build it expects, and checks that the
result still parses to the same inputs and outputs.

    python scripts/release_action_yml.py --image ghcr.io/octo-org/promptcanary-action \\
        --version 1.2.3
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
# A lower-case registry/owner/name reference without tag or digest (GHCR requires lower case).
_IMAGE_RE = re.compile(r"^[a-z0-9.-]+(?::\d+)?(?:/[a-z0-9._-]+)+$")
_IMAGE_LINE_RE = re.compile(r"^(?P<indent>[ ]+)image:[ ]*(?P<value>\S+)[ ]*$", re.MULTILINE)


class ReleaseRewriteError(ValueError):
    """action.yml or the arguments are not what a release rewrite expects."""


def image_reference(image: str, version: str) -> str:
    """``docker://<image>:<version>`` after checking both (``v1.2.3`` is accepted as ``1.2.3``)."""
    version = version.removeprefix("v")
    if not _VERSION_RE.match(version):
        raise ReleaseRewriteError(f"--version {version!r}: expected MAJOR.MINOR.PATCH[-PRE]")
    if not _IMAGE_RE.match(image):
        raise ReleaseRewriteError(
            f"--image {image!r}: expected a lower-case reference without tag, such as"
            " ghcr.io/octo-org/promptcanary-action"
        )
    return f"docker://{image}:{version}"


def rewrite(text: str, reference: str) -> str:
    """``text`` (an action.yml) with ``runs.image`` set to ``reference``; nothing else changes."""
    before = _load(text)
    runs = before.get("runs")
    if not isinstance(runs, dict) or runs.get("using") != "docker":
        raise ReleaseRewriteError("action.yml: `runs.using` is not `docker`")
    if runs.get("image") != "Dockerfile":
        raise ReleaseRewriteError(
            f"action.yml: `runs.image` is {runs.get('image')!r}, expected `Dockerfile`"
            " (the release rewrite starts from main's action.yml)"
        )
    runs_at = re.search(r"^runs:[ ]*$", text, re.MULTILINE)
    if runs_at is None:
        raise ReleaseRewriteError("action.yml: no top-level `runs:` line")
    line = _IMAGE_LINE_RE.search(text, runs_at.end())
    if line is None or line["value"] != "Dockerfile":
        raise ReleaseRewriteError("action.yml: no `image: Dockerfile` line under `runs:`")
    result = f"{text[: line.start()]}{line['indent']}image: {reference}{text[line.end() :]}"
    after = _load(result)
    expected = {**before, "runs": {**runs, "image": reference}}
    if after != expected:  # pragma: no cover - the line edit above cannot change anything else
        raise ReleaseRewriteError("action.yml: the rewrite changed more than runs.image")
    return result


def _load(text: str) -> dict[str, Any]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReleaseRewriteError(f"action.yml is not valid YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise ReleaseRewriteError("action.yml: the top level is not a mapping")
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--image", required=True, help="e.g. ghcr.io/octo-org/promptcanary-action")
    parser.add_argument("--version", required=True, help="the release version, e.g. 1.2.3")
    parser.add_argument("--file", type=Path, default=Path("action.yml"))
    args = parser.parse_args(argv)
    try:
        reference = image_reference(args.image, args.version)
        args.file.write_text(
            rewrite(args.file.read_text(encoding="utf-8"), reference), encoding="utf-8"
        )
    except (ReleaseRewriteError, OSError) as exc:
        print(f"release_action_yml: {exc}", file=sys.stderr)
        return 1
    print(f"release_action_yml: {args.file}: runs.image = {reference}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
