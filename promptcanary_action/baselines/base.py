"""The baseline backend protocol, and the error a backend raises when it cannot store.

The backend the ``baseline`` input picks is built by
:func:`promptcanary_action.effects.make_backend`; each backend takes plain parameters.
"""

from __future__ import annotations

from typing import Any, Protocol

from promptcanary.core.models import BaselineSnapshot


class BaselineStoreError(RuntimeError):
    """A baseline could not be written (or the store cannot be reached); says what to change."""


class BaselineBackend(Protocol):
    """Where baselines are read from and promoted to.

    ``load`` returns None when there is no baseline yet and raises
    :class:`promptcanary.storage.base.BaselineFileError` (naming the location) when there is one
    that cannot be read. ``save`` returns the location written, for reports.
    """

    def load(self, suite_name: str, model_id: str, *, for_ref: str) -> BaselineSnapshot | None: ...

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str: ...

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]: ...
