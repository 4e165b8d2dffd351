"""The answer services a suite gets when its caller names none (``CanarySuite.run``).

The engine never imports its adapters, yet a suite run through the Python API should embed and
judge with the models it names, as the CLI and the action do. So the engine holds a slot, and the
package (``promptcanary/__init__``) installs the factory that builds those services through
LiteLLM, imported only when a suite asks for them. Tests and embedders may install their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptcanary.core.models import BaselineSnapshot
    from promptcanary.core.run.answer_phase import AnswerService
    from promptcanary.core.spec import SuiteSpec

ServicesFactory = Callable[["SuiteSpec", "BaselineSnapshot | None"], "list[AnswerService]"]
"""(suite, the newest baseline snapshot or ``None``) → the answer services the suite names."""

_installed: list[ServicesFactory] = []


def install(factory: ServicesFactory) -> None:
    """Make ``factory`` the default (replacing the one installed before)."""
    _installed[:] = [factory]


def services_for(suite: SuiteSpec, baseline: BaselineSnapshot | None) -> list[AnswerService]:
    """The installed factory's services for ``suite``; none when nothing is installed."""
    return _installed[0](suite, baseline) if _installed else []
