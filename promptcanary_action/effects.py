"""The step's real I/O objects, and :class:`Effects`, the one parameter that carries them.

``main()`` builds the real ones here (:func:`real_effects`): the workflow files, the GitHub
client (built on first use), the baseline store the ``baseline`` input picks, the model
providers, the clock, LiteLLM's import in the background and the signal handlers. Tests pass
fakes in an :class:`Effects` of their own.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, cast

from promptcanary.core.run.provider import BaseLLMProvider
from promptcanary.providers.factory import make_provider, services_for
from promptcanary.providers.litellm import prewarm
from promptcanary_action.baselines.artifact import ArtifactBackend
from promptcanary_action.baselines.base import BaselineBackend
from promptcanary_action.baselines.branch import BranchBackend
from promptcanary_action.baselines.none import NoneBackend
from promptcanary_action.baselines.path import PathBackend
from promptcanary_action.cancel import Cancellation
from promptcanary_action.errors import UsageError
from promptcanary_action.github.port import GitHubPort
from promptcanary_action.pipeline import ProviderFactory, ServiceFactory
from promptcanary_action.settings import Settings
from promptcanary_action.workflow import Workflow


def real_provider(model: str, params: dict[str, Any], base_dir: Path) -> BaseLLMProvider:
    return make_provider(model, params, base_dir=base_dir)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Effects:
    """Every I/O object the step uses: ``main()`` builds the real ones, tests pass fakes."""

    workflow: Workflow
    """Workflow commands, step outputs and the job summary."""
    github: Callable[[Settings], GitHubPort | None]
    """The GitHub port for these settings; None without a token or repository."""
    backend: Callable[[Settings, GitHubPort | None, Path], BaselineBackend]
    """The baseline store for ``(settings, github, working directory)``."""
    provider: ProviderFactory = real_provider
    services: ServiceFactory = services_for
    """The answer services of a suite (``semantic_drift:``'s embedding model)."""
    now: Callable[[], datetime] = utc_now
    prewarm: Callable[[], object] | None = None
    """Starts LiteLLM's slow import in the background, when a model needs it."""
    cancellation: Cancellation = field(default_factory=Cancellation)
    """Set by SIGINT/SIGTERM (``main()`` installs the handlers): the step stops and reports."""


def real_effects(environ: Mapping[str, str], stdout: TextIO) -> tuple[Effects, LiteLLMWarmUp]:
    """The real objects for one step of this process, and the warm-up ``main()`` waits for.

    Installs the SIGINT/SIGTERM handlers: call it from the main thread, once.
    """
    github_out = environ.get("GITHUB_OUTPUT")
    summary_out = environ.get("GITHUB_STEP_SUMMARY")
    workflow = Workflow(
        stdout,
        Path(github_out) if github_out else None,
        Path(summary_out) if summary_out else None,
    )
    warm_up = LiteLLMWarmUp(prewarm)
    cancellation = Cancellation()
    cancellation.install()
    effects = Effects(
        workflow=workflow,
        github=github_client,
        backend=make_backend,
        prewarm=warm_up,
        cancellation=cancellation,
    )
    return effects, warm_up


def make_backend(settings: Settings, github: GitHubPort | None, base_dir: Path) -> BaselineBackend:
    """The backend for ``settings.baseline``; nothing touches git or the network until used.

    ``github`` is None without a token or repository; only ``artifact`` needs it.
    """
    kind = settings.baseline
    if kind == "none":
        return NoneBackend()
    if kind == "path":
        return PathBackend(base_dir / settings.baseline_path)
    if kind == "artifact":
        if github is None:
            raise UsageError(
                "input 'baseline': artifact reads baselines through the GitHub API: set "
                "`github-token` (the default `${{ github.token }}` works, with "
                "`permissions: actions: read`)"
            )
        return ArtifactBackend(
            github,
            settings.baseline_artifact,
            report_dir=base_dir / settings.report_dir,
            max_bytes=settings.max_artifact_mb * 2**20,
        )
    return BranchBackend.for_workspace(
        base_dir,
        settings.baseline_branch,
        token=settings.github_token,
        server_url=settings.github.server_url,
        repository=settings.github.repository,
    )


def github_client(settings: Settings) -> GitHubPort | None:
    """The real client, or None without a token or repository (nothing is posted then)."""
    if not settings.github_token or not settings.github.repository:
        return None
    token, github = settings.github_token, settings.github

    def build() -> GitHubPort:
        # Imported here: PyGithub and requests load only when the step talks to GitHub.
        from promptcanary_action.github.client import GitHubClient

        return GitHubClient(token, github.repository, github.api_url, run_key=github.run_key)

    return cast(GitHubPort, _BuiltOnFirstUse(build))


class _BuiltOnFirstUse:
    """Stands for the GitHub port and builds it when first used: a step that posts nothing
    before its first model request (no check run) does not import PyGithub (~0.2 s) first."""

    def __init__(self, build: Callable[[], GitHubPort]) -> None:
        self._build = build
        self._port: GitHubPort | None = None

    def __getattr__(self, name: str) -> Any:
        if self._port is None:
            self._port = self._build()
        return getattr(self._port, name)


class LiteLLMWarmUp:
    """``Effects.prewarm``: each call starts LiteLLM's import in the background
    (:func:`import_without_collecting`); :meth:`join` waits for every import started."""

    def __init__(self, start_import: Callable[[], threading.Thread]) -> None:
        self._start_import = start_import
        self._threads: list[threading.Thread] = []

    def __call__(self) -> None:
        self._threads.append(import_without_collecting(self._start_import))

    def join(self) -> None:
        # The warming thread is a daemon: stopped mid-import at interpreter exit, it keeps that
        # module's import lock, and LiteLLM's finalizers (which import) then hang the process.
        for thread in self._threads:
            thread.join()


def import_without_collecting(start_import: Callable[[], threading.Thread]) -> threading.Thread:
    """Start LiteLLM's import with the cyclic garbage collector paused, and freeze what it made.

    The import creates ~400,000 objects that live as long as the step; every full collection
    during the import scans all made so far (~0.2 s of a ~1.8 s import in the image, measured
    with bench/startup.py). Once it is done they are frozen (``gc.freeze``), so the run's own
    collections skip them too. Returns a thread that ends when the collector is back on.
    """
    gc.disable()
    importing = start_import()

    def settle() -> None:
        importing.join()
        gc.freeze()
        gc.enable()

    settled = threading.Thread(target=settle, name="litellm-imported", daemon=True)
    settled.start()
    return settled
