"""Paths as the workflow sees them: relative to the workspace when they are inside it.

A Docker action sees the workspace mounted at ``/github/workspace``, the job's other steps at the
runner's own path, and check-run annotations need repository-relative paths: an absolute path
from inside the container is wrong for all of them.
"""

from __future__ import annotations

from pathlib import Path


def workspace_relative(path: Path, workspace: Path | None) -> str:
    """``path`` relative to ``workspace`` (``.`` for the workspace itself), else as given."""
    if workspace is not None:
        try:
            return path.resolve().relative_to(workspace.resolve()).as_posix() or "."
        except ValueError:
            pass
    return path.as_posix()
