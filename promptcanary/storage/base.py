"""What every baseline store shares: snapshot (de)serialisation and errors."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from promptcanary.core.models import SCHEMA_VERSION, BaselineSnapshot
from promptcanary.core.redact import redact_params


class BaselineFileError(ValueError):
    """A baseline document that cannot be read: names the file and how to recover."""

    def __init__(self, location: str, problem: str) -> None:
        self.location = location
        self.problem = problem
        super().__init__(
            f"{location}: {problem}. Delete or re-create this baseline "
            "(run the suite on the default branch, or `promptcanary run --save-baseline`)."
        )


LEGACY_SCHEMA_VERSION = "0.1"
"""``schema_version`` in snapshots written by the PromptCanary package (0.2.x)."""


def snapshot_to_json(snapshot: BaselineSnapshot) -> str:
    """The snapshot as a JSON document with secrets in provider parameters redacted."""
    data: dict[str, Any] = snapshot.model_dump(mode="json")
    if data.get("approval") is None:
        data.pop("approval", None)  # unapproved snapshots keep the document they always had
    data["provider"]["extra_params"] = redact_params(data["provider"].get("extra_params", {}))
    run_provider = data["run_result"]["provider"]
    run_provider["extra_params"] = redact_params(run_provider.get("extra_params", {}))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def snapshot_from_json(text: str, location: str) -> BaselineSnapshot:
    """Parse a snapshot document; older schema versions are migrated, newer ones refused."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineFileError(
            location, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise BaselineFileError(location, "not a baseline snapshot (expected a JSON object)")
    version = data.get("schema_version", 1)
    if version == LEGACY_SCHEMA_VERSION:
        version = 1  # PromptCanary 0.2.2 wrote the string "0.1": the same format as version 1
    if not isinstance(version, int) or version < 1:
        raise BaselineFileError(location, f"unknown schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise BaselineFileError(
            location,
            f"schema_version {version} is newer than this version of promptcanary supports "
            f"({SCHEMA_VERSION}); upgrade the action or re-create the baseline",
        )
    # Version 1 (PromptCanary's own format, "0.1" in its files) lacks probe keys, samples and
    # provenance: the model's defaults fill them, which is exactly the migration (keys default to
    # probe ids). It keeps the note under "_note".
    if version == 1 and "note" not in data and "_note" in data:
        data["note"] = data.pop("_note")
    data["schema_version"] = SCHEMA_VERSION
    try:
        return BaselineSnapshot.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BaselineFileError(
            location, f"not a valid baseline snapshot: {where}: {first['msg']}"
        ) from None
