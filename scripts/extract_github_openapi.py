#!/usr/bin/env python3
"""Extract the subset of GitHub's OpenAPI description that the fake GitHub server serves.

Source: the npm package ``@octokit/openapi`` (pinned below), file
``generated/api.github.com.json``. Output: ``tests/fakes/github_openapi.json`` with only the
operations in ``OPERATIONS`` and every ``#/components/...`` object they reference, transitively,
so each ``$ref`` still resolves. Documentation-only keys (examples, long descriptions, vendor
extensions) are dropped to keep the file small; everything validation needs stays. One
normalisation: ``null`` is added to the ``enum`` of ``nullable`` schemas (see allow_null_in_enums).

Usage (needs ``npm`` on PATH and the npm registry, or a tarball you already have)::

    python scripts/extract_github_openapi.py
    python scripts/extract_github_openapi.py --tarball octokit-openapi-23.0.2.tgz
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
MEMBER = "package/generated/api.github.com.json"
OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "fakes" / "github_openapi.json"

OPERATIONS: list[tuple[str, str]] = [
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/events"),
    ("get", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}"),
    ("get", "/rate_limit"),
    ("get", "/user"),
]

# Keys that only document; dropped everywhere except as property names inside "properties".
DOC_KEYS = {"examples", "example", "externalDocs", "x-github", "x-octokit", "summary"}


def fetch_spec(tarball: Path | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        if tarball is None:
            out = subprocess.run(
                ["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", tmp, "--json"],
                check=True,
                capture_output=True,
                text=True,
            )
            tarball = Path(tmp) / json.loads(out.stdout)[0]["filename"]
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(MEMBER)
            if member is None:
                raise SystemExit(f"{MEMBER} not found in {tarball}")
            return json.load(member)


def strip_docs(node, *, in_properties=False, is_response=False):
    """Drop documentation keys; keep `description` only where OpenAPI requires it (responses)."""
    if isinstance(node, list):
        return [strip_docs(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if not in_properties:
            if key in DOC_KEYS:
                continue
            if key == "description" and not is_response:
                continue
        out[key] = strip_docs(
            value,
            in_properties=(key == "properties" and not in_properties),
            is_response=False,
        )
        if key == "responses" and not in_properties and isinstance(value, dict):
            out[key] = {code: strip_docs(resp, is_response=True) for code, resp in value.items()}
    return out


def allow_null_in_enums(node) -> int:
    """Add null to the enum of every `nullable: true` schema that lacks it; returns how many.

    GitHub sends null for such fields (e.g. an open issue's `state_reason`), but under OpenAPI
    3.0.3's reading of `nullable` a value must also pass `enum`, so strict validators reject it.
    """
    count = 0
    if isinstance(node, dict):
        enum = node.get("enum")
        if node.get("nullable") is True and isinstance(enum, list) and None not in enum:
            enum.append(None)
            count += 1
        for value in node.values():
            count += allow_null_in_enums(value)
    elif isinstance(node, list):
        for value in node:
            count += allow_null_in_enums(value)
    return count


def collect_refs(node, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            collect_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            collect_refs(value, found)


def resolve_pointer(spec: dict, ref: str):
    if not ref.startswith("#/"):
        raise SystemExit(f"external $ref not supported: {ref}")
    node = spec
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def extract(spec: dict) -> dict:
    paths: dict[str, dict] = {}
    for method, path in OPERATIONS:
        item = spec["paths"][path]
        target = paths.setdefault(path, {})
        if "parameters" in item:
            target["parameters"] = strip_docs(item["parameters"])
        target[method] = strip_docs(item[method])

    components: dict[str, dict] = {}
    pending: set[str] = set()
    collect_refs(paths, pending)
    done: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in done:
            continue
        done.add(ref)
        _, _, section, name = ref.split("/", 3)
        is_response = section == "responses"
        obj = strip_docs(resolve_pointer(spec, ref), is_response=is_response)
        components.setdefault(section, {})[name] = obj
        new: set[str] = set()
        collect_refs(obj, new)
        pending |= new - done

    subset = {
        "openapi": spec["openapi"],
        "info": {
            "title": "GitHub REST API subset used by promptcanary-action tests",
            "version": spec["info"]["version"],
            "x-source": f"{PACKAGE}@{VERSION} {MEMBER.removeprefix('package/')}",
            "x-generated-by": "scripts/extract_github_openapi.py",
        },
        "servers": [{"url": "https://api.github.com"}],
        "paths": paths,
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    patched = allow_null_in_enums(subset)
    subset["info"]["x-normalized"] = f"null added to {patched} enums of nullable schemas"
    return subset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, help="use this npm tarball instead of npm pack")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    subset = extract(fetch_spec(args.tarball))
    args.output.write_text(json.dumps(subset, indent=1, ensure_ascii=False) + "\n")
    n_ops = sum(1 for p in subset["paths"].values() for k in p if k != "parameters")
    n_comp = sum(len(v) for v in subset["components"].values())
    print(f"wrote {args.output} ({n_ops} operations, {n_comp} components)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
