"""Links from a report to the suite file: ``{server}/{owner/repo}/blob/{sha}/{path}#L{line}``.

The server URL is the runner's ``GITHUB_SERVER_URL`` (GitHub Enterprise Server included), the
commit the run's, so a link keeps pointing at the line that was run after the file changes.
"""

from __future__ import annotations

import posixpath
from urllib.parse import quote


def suite_line_url(
    server_url: str, repository: str, sha: str, path: str, line: int | None
) -> str | None:
    """The link to ``line`` of ``path`` at ``sha``; None when any part is unknown."""
    if not (server_url and repository and sha and path) or line is None or line < 1:
        return None
    # Each segment percent-encoded: a suite in "canaries/my suite#2.yaml" must not end the path.
    encoded = quote(path.lstrip("/"), safe="/")
    return f"{server_url.rstrip('/')}/{repository}/blob/{sha}/{encoded}#L{line}"


def dataset_rows(suite_path: str, rows: dict[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """Dataset rows named relative to the suite file, renamed relative to the repository root
    (the suite's loader keeps dataset files inside the suite's folder)."""
    folder = posixpath.dirname(suite_path)
    return {
        prompt_id: (posixpath.normpath(posixpath.join(folder, path)), line)
        for prompt_id, (path, line) in rows.items()
    }
