"""The baseline backend protocol, and the error a backend raises when it cannot store.

The backend the ``baseline`` input picks is built by
:func:`promptcanary_action.effects.make_backend`; each backend takes plain parameters.
"""

from __future__ import annotations

from typing import Any, Protocol

from promptcanary.core.models import BaselineSnapshot


class BaselineStoreError(RuntimeError):
    """A baseline could not be written (or the store cannot be reached); says what to change."""


class BaselineUnreachableError(BaselineStoreError):
    """The store itself cannot be reached (no network, no permission): whether a baseline
    exists is unknown, so the run is neither compared nor a first run. ``location`` names what
    was to be read, ``problem`` what failed (the tool's message, secrets scrubbed) and the
    remedy."""

    def __init__(self, location: str, problem: str) -> None:
        self.location = location
        self.problem = problem
        super().__init__(
            f"{location}: {problem}. Nothing was compared with it; the baseline itself is not "
            "at fault, so re-run once the store can be read"
        )


class BaselineBackend(Protocol):
    """Where baselines are read from and promoted to.

    ``load`` returns None when there is no baseline yet and raises
    :class:`promptcanary.storage.base.BaselineFileError` (naming the location) when there is one
    that cannot be read, :class:`BaselineUnreachableError` when the store cannot be reached.
    ``save`` returns the location written, for reports.
    """

    def load(self, suite_name: str, model_id: str, *, for_ref: str) -> BaselineSnapshot | None: ...

    def save(
        self, snapshot: BaselineSnapshot, *, sha: str, ref: str, regressions: int | None = None
    ) -> str: ...

    def history(self, suite_name: str, model_id: str) -> list[dict[str, Any]]: ...
