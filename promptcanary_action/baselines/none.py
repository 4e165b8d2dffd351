"""``baseline: none``: nothing is read and nothing is kept (every run is reported on its own)."""

from __future__ import annotations

from typing import Any

from promptcanary.core.models import BaselineSnapshot


class NoneBackend:
    def load(self, suite_name: str, model_id: str, *, for_ref: str = "") -> BaselineSnapshot | None:
        return None

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str:
        return ""

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]:
        return []
