"""GitHub's size limits, in one place: what the renderer, the annotations and the client cut to.

GitHub rejects a comment or issue body over 65,536 characters (422), cuts a check run's
``summary``/``text`` at 65,535, takes at most 50 annotations per request, and caps one step's job
summary at 1 MiB.
"""

from __future__ import annotations

COMMENT_CHARS = 65_536
"""A pull-request comment, an issue body, an issue comment."""
ISSUE_TITLE_CHARS = 256
CHECK_OUTPUT_CHARS = 65_535
"""A check run's ``output.summary`` and ``output.text``."""
CHECK_TITLE_CHARS = 255
"""A check run's ``output.title`` and an annotation's ``title``."""
ANNOTATION_TEXT_CHARS = 64 * 1024 - 1
"""An annotation's ``message`` and ``raw_details``: 64 KB (bytes; callers that can meet
multi-byte text cut to a byte budget)."""
ANNOTATIONS_PER_REQUEST = 50
SUMMARY_BYTES = 1_000_000
"""GitHub caps one step's summary at 1 MiB; leave room for other steps' writes."""
