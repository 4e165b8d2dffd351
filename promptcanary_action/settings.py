"""The action's inputs (``INPUT_*``) and the runner's ``GITHUB_*`` variables → one ``Settings``.

Built once by :meth:`Settings.from_environ`; every other module reads the typed, validated fields
and never ``os.environ``. Each input is declared once, as a dataclass field whose metadata names
the input and the small cleaning function for its kind. Defaults must equal ``action.yml``'s
(a test checks both ways): the runner always passes ``action.yml``'s default, while local runs and
tests pass nothing, and both must behave the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any, Literal

from promptcanary.core.comparator import DEFAULT_THRESHOLD
from promptcanary.core.run.options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    RunOptionError,
    RunOptions,
    option_rule,
)
from promptcanary.core.run.shards import Shard, ShardError
from promptcanary.core.sampling.pool import DEFAULT_POOL
from promptcanary.core.stats import DEFAULT_ALPHA
from promptcanary.core.verdict.gate import DEFAULT_FAIL_ON, DEFAULT_MAX_ERROR_RATE, FAIL_ON
from promptcanary_action.baselines.history import HISTORY_KEEP

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"

BaselineKind = Literal["branch", "artifact", "path", "none"]
UpdateBaseline = Literal["auto", "always", "never"]
FailOn = Literal["regression", "failure", "never", "low", "medium", "high", "critical"]
CommentMode = Literal["update", "new", "off"]
Mode = Literal["run", "merge", "post-comment"]

BASELINE_KINDS: tuple[str, ...] = ("branch", "artifact", "path", "none")
UPDATE_BASELINE_CHOICES: tuple[str, ...] = ("auto", "always", "never")
FAIL_ON_CHOICES: tuple[str, ...] = FAIL_ON  # the engine's gate decides what each one means
COMMENT_CHOICES: tuple[str, ...] = ("update", "new", "off")
MODE_CHOICES: tuple[str, ...] = ("run", "merge", "post-comment")

# Metadata keys of an input field.
_INPUT = "input"
_CLEAN = "clean"
_IF_EMPTY = "if_empty"
# Long values (a pasted file, say) are cut in messages so the log stays readable.
_MAX_SHOWN = 60

Cleaner = Callable[[str, str], Any]
"""``(input name, non-empty stripped value) -> typed value``; raises :class:`InputError`."""


class InputError(ValueError):
    """An input has a value the action cannot use; the message names the input and what is valid.

    ``main()`` turns it into exit code 2.
    """


def _shown(value: str) -> str:
    flat = value.replace("\r", "\\r").replace("\n", "\\n")
    if len(flat) > _MAX_SHOWN:
        flat = flat[: _MAX_SHOWN - 1] + "…"
    return f"'{flat}'"


def _fail(name: str, value: str, rule: str) -> InputError:
    return InputError(f"input '{name}': {_shown(value)} {rule}")


# ------------------------------------------------------------------------------------------------
# cleaning functions, one per kind of input


def clean_text(name: str, value: str) -> str:
    return value


def clean_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, compared case-insensitively (``Never`` is ``never``)."""
    lowered = value.lower()
    if lowered not in choices:
        raise _fail(name, value, "is not one of " + ", ".join(choices))
    return lowered


def clean_bool(name: str, value: str) -> bool:
    """``true`` or ``false`` in any case, as in the YAML 1.2 core schema the runner uses."""
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise _fail(name, value, "is not one of true, false")
    return lowered == "true"


def _bounds(
    minimum: float | None,
    maximum: float | None,
    *,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
) -> str:
    parts = []
    if minimum is not None:
        parts.append(f"{'>' if exclusive_minimum else '≥'} {minimum:g}")
    if maximum is not None:
        parts.append(f"{'<' if exclusive_maximum else '≤'} {maximum:g}")
    return " and ".join(parts)


def clean_int(
    name: str, value: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    bounds = _bounds(minimum, maximum)
    rule = "must be an integer" + (f" {bounds}" if bounds else "")
    try:
        number = int(value)
    except ValueError:
        raise _fail(name, value, rule) from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise _fail(name, value, rule)
    return number


def _auto_or_int(value: str) -> int | str:
    return "auto" if value.lower() == "auto" else int(value)


def run_option(parse: Callable[[str], Any]) -> Cleaner:
    """The cleaner of an input that is a run option: it only parses the value (``parse``); the
    bounds, and the rule a bad value is told, are :class:`RunOptions`' (checked once all
    inputs are read), the same for the CLI's flags."""

    def clean(name: str, value: str) -> Any:
        try:
            return parse(value)
        except ValueError:
            raise _fail(name, value, option_rule(name.replace("-", "_"))) from None

    return clean


def clean_float(
    name: str,
    value: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
) -> float:
    bounds = _bounds(
        minimum,
        maximum,
        exclusive_minimum=exclusive_minimum,
        exclusive_maximum=exclusive_maximum,
    )
    rule = "must be a number" + (f" {bounds}" if bounds else "")
    try:
        number = float(value)
    except ValueError:
        raise _fail(name, value, rule) from None
    # float() accepts "nan" and "inf"; neither is a usable threshold or timeout.
    if not math.isfinite(number):
        raise _fail(name, value, rule)
    if minimum is not None and (number <= minimum if exclusive_minimum else number < minimum):
        raise _fail(name, value, rule)
    if maximum is not None and (number >= maximum if exclusive_maximum else number > maximum):
        raise _fail(name, value, rule)
    return number


def clean_shard(name: str, value: str) -> Shard:
    """``i/n`` with ``1 <= i <= n``: which leg of a matrix job this step is."""
    try:
        return Shard.parse(value)
    except ShardError as exc:
        raise InputError(f"input '{name}': {exc}") from None


def clean_lines(name: str, value: str) -> list[str]:
    """One entry a line; blank lines dropped (paths may contain commas)."""
    return [line.strip() for line in value.splitlines() if line.strip()]


def clean_list(name: str, value: str) -> list[str]:
    """Entries separated by commas or newlines; blanks dropped."""
    return [item.strip() for item in re.split(r"[,\r\n]", value) if item.strip()]


_COMMENT_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


def clean_identifier(name: str, value: str) -> str:
    """A short name that is safe inside the comment's hidden HTML marker (no ``-->``)."""
    if not _COMMENT_ID_RE.fullmatch(value):
        raise _fail(name, value, "must be 1 to 64 letters, digits, '.', '_' or '-'")
    return value


def clean_label(name: str, value: str) -> str:
    """A GitHub label name: at most 50 characters, on one line."""
    if len(value) > 50 or "\n" in value or "\r" in value:
        raise _fail(name, value, "must be a label name: one line of at most 50 characters")
    return value


# The rules of `git check-ref-format --branch` that matter for a name passed to git commands
# (a leading '-' would be read as an option).
_BAD_BRANCH_RE = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^[-/.]|/\.|[/.]$|\.lock$|^@$")


def clean_branch(name: str, value: str) -> str:
    if _BAD_BRANCH_RE.search(value):
        raise _fail(
            name,
            value,
            "is not a valid git branch name (no spaces, '..', '~^:?*[\\', '@{', leading '-' or"
            " '.', trailing '/', '.' or '.lock')",
        )
    return value


# ------------------------------------------------------------------------------------------------
# the runner's environment


@dataclass(frozen=True)
class GitHubEnv:
    """The ``GITHUB_*`` variables the runner gives the container (empty outside a runner)."""

    event_name: str = ""
    event_path: Path | None = None
    repository: str = ""
    """``owner/name``."""
    sha: str = ""
    ref: str = ""
    """Full ref, e.g. ``refs/heads/main`` or ``refs/pull/7/merge``."""
    head_ref: str = ""
    """Only for pull-request events: the head branch."""
    base_ref: str = ""
    """Only for pull-request events: the base branch."""
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    workspace: Path | None = None
    run_id: str = ""
    run_attempt: str = ""

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> GitHubEnv:
        def text(key: str, default: str = "") -> str:
            return env.get(key, "").strip() or default

        def path(key: str) -> Path | None:
            value = text(key)
            return Path(value) if value else None

        return cls(
            event_name=text("GITHUB_EVENT_NAME"),
            event_path=path("GITHUB_EVENT_PATH"),
            repository=text("GITHUB_REPOSITORY"),
            sha=text("GITHUB_SHA"),
            ref=text("GITHUB_REF"),
            head_ref=text("GITHUB_HEAD_REF"),
            base_ref=text("GITHUB_BASE_REF"),
            # A trailing slash would double up when paths are appended.
            api_url=text("GITHUB_API_URL", DEFAULT_API_URL).rstrip("/"),
            server_url=text("GITHUB_SERVER_URL", DEFAULT_SERVER_URL).rstrip("/"),
            workspace=path("GITHUB_WORKSPACE"),
            run_id=text("GITHUB_RUN_ID"),
            run_attempt=text("GITHUB_RUN_ATTEMPT"),
        )

    @property
    def ref_branch(self) -> str | None:
        """The branch of ``ref`` (``refs/heads/x`` → ``x``); None for tags and PR merge refs."""
        if self.ref.startswith("refs/heads/"):
            return self.ref.removeprefix("refs/heads/") or None
        return None

    @property
    def run_key(self) -> str | None:
        """This run attempt ("1234/2"), the identity of what it writes; None outside a run."""
        return f"{self.run_id}/{self.run_attempt or '1'}" if self.run_id else None

    @property
    def run_url(self) -> str | None:
        """The link to this workflow run, when the runner said which run it is."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


# ------------------------------------------------------------------------------------------------
# the inputs


def _input(name: str, clean: Cleaner, **if_empty: Any) -> dict[str, Any]:
    """The metadata that makes a Settings field the action input ``name``.

    ``if_empty=value``: an input given explicitly empty means ``value`` (the runner passes every
    input, its default when the workflow does not set it), not the default.
    """
    return {_INPUT: name, _CLEAN: clean, **({_IF_EMPTY: if_empty["if_empty"]} if if_empty else {})}


def _choice(choices: tuple[str, ...]) -> Cleaner:
    return partial(clean_choice, choices=choices)


# Scores, shares and thresholds live in [0, 1]; a significance level strictly inside it.
_UNIT = partial(clean_float, minimum=0.0, maximum=1.0)
_OPEN_UNIT = partial(
    clean_float, minimum=0.0, maximum=1.0, exclusive_minimum=True, exclusive_maximum=True
)
# A usage gate: the increase in percent over the baseline that fails the step (0: any increase).
_PERCENT = partial(clean_float, minimum=0.0)


@dataclass(frozen=True)
class Settings:
    """Every input of ``action.yml``, typed and validated, plus the runner's environment."""

    config: list[str] = field(
        default_factory=lambda: ["canary.yaml"], metadata=_input("config", clean_lines)
    )
    models: list[str] = field(default_factory=list, metadata=_input("models", clean_list))
    # Never logged: excluded from repr (and so from str) and from every error message.
    github_token: str = field(default="", metadata=_input("github-token", clean_text), repr=False)
    baseline: BaselineKind = field(
        default="branch", metadata=_input("baseline", _choice(BASELINE_KINDS))
    )
    baseline_branch: str = field(
        default="promptcanary-baselines", metadata=_input("baseline-branch", clean_branch)
    )
    baseline_path: str = field(
        default=".promptcanary/baselines", metadata=_input("baseline-path", clean_text)
    )
    baseline_artifact: str = field(
        default="promptcanary-baseline", metadata=_input("baseline-artifact", clean_text)
    )
    max_artifact_mb: int = field(
        default=50, metadata=_input("max-artifact-mb", partial(clean_int, minimum=1))
    )
    """Largest baseline artifact (zip, and each file in it) read, in MiB; larger is an error."""
    baseline_max_age_days: int = field(
        default=30, metadata=_input("baseline-max-age-days", partial(clean_int, minimum=0))
    )
    """A baseline older than this is reported as stale; 0 turns the warning off."""
    update_baseline: UpdateBaseline = field(
        default="auto", metadata=_input("update-baseline", _choice(UPDATE_BASELINE_CHOICES))
    )
    fail_on: FailOn = field(
        default=DEFAULT_FAIL_ON, metadata=_input("fail-on", _choice(FAIL_ON_CHOICES))
    )
    regression_threshold: float = field(
        default=DEFAULT_THRESHOLD, metadata=_input("regression-threshold", _UNIT)
    )
    improvement_threshold: float = field(
        default=DEFAULT_THRESHOLD, metadata=_input("improvement-threshold", _UNIT)
    )
    samples: int | str | None = field(
        default=None, metadata=_input("samples", run_option(_auto_or_int))
    )
    """``None``: the suite's ``defaults: samples``, else ``auto``; a number overrides the suite."""
    # The run options' bounds are RunOptions' (the CLI's too): their cleaners only parse.
    min_samples: int | None = field(default=None, metadata=_input("min-samples", run_option(int)))
    max_samples: int | None = field(default=None, metadata=_input("max-samples", run_option(int)))
    baseline_samples: int | None = field(
        default=None, metadata=_input("baseline-samples", run_option(int))
    )
    baseline_pool: int = field(
        default=DEFAULT_POOL, metadata=_input("baseline-pool", run_option(int))
    )
    alpha: float = field(
        default=DEFAULT_ALPHA,
        metadata=_input("alpha", _OPEN_UNIT),
    )
    concurrency: int = field(
        default=DEFAULT_CONCURRENCY, metadata=_input("concurrency", run_option(int))
    )
    timeout: float = field(default=DEFAULT_TIMEOUT, metadata=_input("timeout", run_option(float)))
    max_retries: int = field(
        default=DEFAULT_MAX_RETRIES, metadata=_input("max-retries", run_option(int))
    )
    max_judge_requests: int | None = field(
        default=None, metadata=_input("max-judge-requests", partial(clean_int, minimum=1))
    )
    """Judge requests a pair may send (over the suite's ``judge: max_requests``); None: no cap."""
    max_error_rate: float = field(
        default=DEFAULT_MAX_ERROR_RATE, metadata=_input("max-error-rate", _UNIT)
    )
    max_latency_increase: float | None = field(
        default=None, metadata=_input("max-latency-increase", _PERCENT)
    )
    """Percent increase of p95 latency over the baseline that fails the step; None: off."""
    max_token_increase: float | None = field(
        default=None, metadata=_input("max-token-increase", _PERCENT)
    )
    """Percent increase of completion tokens per answer that fails the step; None: off."""
    max_cost_increase: float | None = field(
        default=None, metadata=_input("max-cost-increase", _PERCENT)
    )
    """Percent increase of cost per answer that fails the step; None: off."""
    fail_on_model_change: bool = field(
        default=False, metadata=_input("fail-on-model-change", clean_bool)
    )
    """Fail the step when a model was served by an id or fingerprint its baseline never saw."""
    trend_points: int = field(
        default=20,
        metadata=_input("trend-points", partial(clean_int, minimum=1, maximum=HISTORY_KEEP)),
    )
    """Promoted baselines the trend chart draws before the current run."""
    temperature: float | None = field(
        default=None, metadata=_input("temperature", run_option(float))
    )
    max_tokens: int | None = field(default=None, metadata=_input("max-tokens", run_option(int)))
    seed: int | None = field(default=None, metadata=_input("seed", run_option(int)))
    comment: CommentMode = field(
        default="update", metadata=_input("comment", _choice(COMMENT_CHOICES))
    )
    comment_id: str = field(default="default", metadata=_input("comment-id", clean_identifier))
    check_run: bool = field(default=True, metadata=_input("check-run", clean_bool))
    check_name: str = field(default="PromptCanary", metadata=_input("check-name", clean_text))
    issue_on_drift: bool = field(default=False, metadata=_input("issue-on-drift", clean_bool))
    approve_label: str | None = field(
        default="promptcanary: approve",
        metadata=_input("approve-label", clean_label, if_empty=None),
    )
    """The label that approves a pull request's drift; None (input set empty): no approvals."""
    probe_modules: list[str] = field(
        default_factory=list, metadata=_input("probe-modules", clean_lines)
    )
    working_directory: str = field(default=".", metadata=_input("working-directory", clean_text))
    report_dir: str = field(
        default="promptcanary-report", metadata=_input("report-dir", clean_text)
    )
    shard: Shard | None = field(default=None, metadata=_input("shard", clean_shard))
    """Set: this step is one leg of a matrix job (no comment, check run or promotion)."""
    mode: Mode = field(default="run", metadata=_input("mode", _choice(MODE_CHOICES)))

    github: GitHubEnv = field(default_factory=GitHubEnv)

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> Settings:
        """Read ``INPUT_<NAME>`` (hyphens kept, or as underscores) and ``GITHUB_*`` from ``env``.

        An empty or absent input takes its default; unknown ``INPUT_*`` variables are ignored.
        Raises :class:`InputError` for the first invalid value.
        """
        values: dict[str, Any] = {}
        for spec in fields(cls):
            name = spec.metadata.get(_INPUT)
            if name is None:
                continue
            raw = _read_input(env, name)
            if raw:
                values[spec.name] = spec.metadata[_CLEAN](name, raw)
            elif _IF_EMPTY in spec.metadata and _given(env, name):
                values[spec.name] = spec.metadata[_IF_EMPTY]
        settings = cls(github=GitHubEnv.from_environ(env), **values)
        try:
            settings.run_options()
        except RunOptionError as exc:
            raise _run_option_error(exc, env) from None
        return settings

    def run_options(self, **more: Any) -> RunOptions:
        """The inputs that shape a run as :class:`RunOptions`, the one rule of their bounds
        (``RunOptionError`` names the field); ``more`` adds the step's own (``git_sha``, …)."""
        shared = {f.name for f in fields(RunOptions)} & {f.name for f in fields(self)}
        return RunOptions(**{name: getattr(self, name) for name in shared}, **more)

    @classmethod
    def input_fields(cls) -> dict[str, str]:
        """``{input name: field name}`` for every input (``"fail-on": "fail_on"``)."""
        return {spec.metadata[_INPUT]: spec.name for spec in fields(cls) if _INPUT in spec.metadata}


def _run_option_error(exc: RunOptionError, env: Mapping[str, str]) -> InputError:
    """A run option's error as the input's: its name, the value as the workflow gave it."""

    def name(field_name: str) -> str:
        return field_name.replace("_", "-")

    if exc.above is not None:
        other, limit = exc.above
        return InputError(
            f"input '{name(exc.field)}': {exc.value} is above input '{name(other)}' ({limit}); "
            f"samples: auto needs {name(exc.field)} ≤ {name(other)}"
        )
    return _fail(name(exc.field), _read_input(env, name(exc.field)), exc.rule)


def input_env_names(name: str) -> tuple[str, str]:
    """The variables an input may arrive in: the runner's spelling first, then underscores."""
    upper = name.upper()
    return f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"


def _given(env: Mapping[str, str], name: str) -> bool:
    return any(key in env for key in input_env_names(name))


def _read_input(env: Mapping[str, str], name: str) -> str:
    for key in input_env_names(name):
        value = env.get(key, "").strip()
        if value:
            return value
    return ""
