"""Counts in words: "1 prompt", "3 prompts". The one helper every printed count goes through
(terminal, markdown templates, the CLI, the action's log), so no message says "1 prompts" or
"regression(s)". Pure; imports nothing of ours."""

from __future__ import annotations


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` and the word for it: ``plural(1, "run")`` is "1 run", ``plural(2, "run")`` "2
    runs"; irregular words give their plural (``plural(2, "try", "tries")``)."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"
