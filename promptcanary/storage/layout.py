"""Where one (suite, model) pair's files sit inside any of the action's baseline stores.

Every backend of the action (data branch, artifact, ``baseline: path``) uses the same layout,
``<suite-slug>/<model-slug>/baseline.json`` plus ``history.jsonl`` next to it, so a baseline can
be moved between stores by copying a folder. The CLI reads it too: ``baseline: path`` writes into
``.promptcanary/baselines``, the CLI's own folder, so ``promptcanary run`` decides against what the
action committed there.
"""

from __future__ import annotations

from promptcanary.core.models import name_slug

BASELINE_FILE = "baseline.json"
HISTORY_FILE = "history.jsonl"
SLUG_LENGTH = 60


def pair_dir(suite_name: str, model_id: str) -> str:
    """``my-suite/openai-gpt-4o``: the folder of one suite on one model (POSIX separators).

    Names longer than the slug limit get a hash of the whole name, so that two Bedrock ARNs
    alike in their first characters do not share (and overwrite) one baseline.
    """
    return f"{name_slug(suite_name, SLUG_LENGTH)}/{name_slug(model_id, SLUG_LENGTH)}"


def baseline_file(suite_name: str, model_id: str) -> str:
    return f"{pair_dir(suite_name, model_id)}/{BASELINE_FILE}"


def history_file(suite_name: str, model_id: str) -> str:
    return f"{pair_dir(suite_name, model_id)}/{HISTORY_FILE}"
