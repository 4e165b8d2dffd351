"""One prompt entry of a suite → the prompts it stands for.

A plain entry (``text:`` or ``messages:``) is one prompt. A template (the same, with ``vars:``
rows inline or a ``dataset:`` file) is one prompt per row: its texts, conversation turns,
expected keywords and probe parameters rendered with the row's variables. A row's prompt id is
the template's id and the row's identity (its ``row_key`` column, else a hash of the row), so
reordering rows or adding one leaves every other id as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptcanary.core.config.datasets import (
    DatasetError,
    Row,
    dataset_path,
    read_rows,
    select,
)
from promptcanary.core.config.source import Loc, SourceMap, SuiteConfigError
from promptcanary.core.config.templating import TemplateProblem, render, variables
from promptcanary.core.models import slugify
from promptcanary.core.spec import stable_hash

TEMPLATED_FIELDS = ("text", "system_prompt", "messages", "expected_keywords")
"""The prompt fields rendered for each row (probe parameters are rendered too)."""

UNRENDERED_PROBE_KEYS = ("type", "apply_to")


@dataclass(frozen=True)
class Shape:
    """How a templated entry gets its rows: inline ``vars`` or a ``dataset`` file."""

    rows: list[dict[str, Any]] | None = None
    dataset: str | None = None
    limit: int | None = None
    sample: int | None = None
    row_key: str | None = None


@dataclass(frozen=True)
class PromptDraft:
    """One prompt to build: CanaryPrompt's fields, its probe entries, where it came from."""

    fields: dict[str, Any]
    probes: list[dict[str, Any]]
    entry: Loc
    """The prompt entry in the suite (its probe entries are under it)."""
    loc: Loc
    """Where the prompt is in the suite: the entry, or its inline row."""
    row_file: str | None = None
    """The dataset file of the row, as the suite names it; ``None`` for a suite line."""
    row_line: int | None = None


def expand(
    fields: dict[str, Any],
    probes: list[dict[str, Any]],
    shape: Shape | None,
    loc: Loc,
    context: SourceMap,
) -> list[PromptDraft]:
    """The drafts of one entry (``fields`` are CanaryPrompt's keyword arguments as written)."""
    if shape is None:
        return [PromptDraft(fields, probes, loc, loc)]
    template = _Template(fields, probes, shape, loc, context)
    return [template.draft(row, row_loc) for row, row_loc in template.rows()]


class _Template:
    def __init__(
        self,
        fields: dict[str, Any],
        probes: list[dict[str, Any]],
        shape: Shape,
        loc: Loc,
        context: SourceMap,
    ) -> None:
        self.fields, self.probes, self.shape = fields, probes, shape
        self.loc, self.context = loc, context
        self.id = fields.get("id") or _template_id(fields)
        self.display = dataset_display(context.source, shape.dataset) if shape.dataset else None
        try:
            used = variables([fields.get(k) for k in TEMPLATED_FIELDS])
            used |= variables([_renderable(p) for p in probes])
        except TemplateProblem as exc:
            raise context.error(str(exc), loc) from None
        self.used = sorted(used)

    def rows(self) -> list[tuple[Row, Loc]]:
        shape, context = self.shape, self.context
        if shape.rows is not None:
            return [
                (Row(values, context.line((*self.loc, "vars", j))), (*self.loc, "vars", j))
                for j, values in enumerate(shape.rows)
            ]
        assert shape.dataset is not None
        try:
            path = dataset_path(_suite_dir(context.source), shape.dataset)
            rows = read_rows(path)
            kept = select(rows, self.row_id, limit=shape.limit, sample=shape.sample)
        except DatasetError as exc:
            raise self._error(str(exc), exc.line) from None
        return [(row, self.loc) for row in kept]

    def row_id(self, row: Row) -> str:
        key = self.shape.row_key
        if key is None:
            return f"{self.id}.{stable_hash(row.values, 8)}"
        value = row.values.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise self._error(
                f"the row has no value in its row_key column {key!r}: give every row one",
                row.line,
            )
        return f"{self.id}.{slugify(str(value), 40)}"

    def draft(self, row: Row, row_loc: Loc) -> PromptDraft:
        values = row.values
        missing = [name for name in self.used if name not in values]
        if missing:
            raise self._missing(missing[0], row)
        try:
            fields = {
                **self.fields,
                **{k: render(self.fields[k], values) for k in TEMPLATED_FIELDS
                   if self.fields.get(k) is not None},
            }  # fmt: skip
            probes = [{**p, **render(_renderable(p), values, typed=True)} for p in self.probes]
        except TemplateProblem as exc:
            if exc.variable:
                raise self._missing(exc.variable, row) from None
            raise self._error(str(exc), row.line) from None
        fields["id"] = self.row_id(row)
        fields["tags"] = _merge_tags(self.fields.get("tags") or [], values.get("tags"))
        place = f"{self.shape.dataset}#L{row.line}" if self.shape.dataset else None
        fields["metadata"] = {
            **(self.fields.get("metadata") or {}),
            "vars": dict(values),
            **({"dataset_row": place} if place else {}),
        }
        return PromptDraft(fields, probes, self.loc, row_loc, self.shape.dataset, row.line)

    def _missing(self, name: str, row: Row) -> SuiteConfigError:
        columns = ", ".join(map(repr, row.values)) or "none"
        return self._error(
            f"the row has no variable {name!r}, which the template {self.id!r} uses "
            f"(the row has {columns})",
            row.line,
        )

    def _error(self, message: str, line: int | None) -> SuiteConfigError:
        """An error at a row's line: of the dataset file, or of the suite for an inline row."""
        if self.display is None:
            return SuiteConfigError(
                message, file=self.context.source, line=line or self.context.line(self.loc)
            )
        at = f" (the template is at {self.context.source}:{self.context.line(self.loc)})"
        return SuiteConfigError(message + at, file=self.display, line=line)


def _renderable(probe: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in probe.items() if k not in UNRENDERED_PROBE_KEYS}


def _template_id(fields: Mapping[str, Any]) -> str:
    """A template's default id: a slug of its text (or last user turn) and a hash of it."""
    messages = fields.get("messages") or []
    user = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    text = fields.get("text") or (user[-1] if user and isinstance(user[-1], str) else "")
    digest = stable_hash([fields.get("system_prompt"), fields.get("text"), messages], 8)
    return f"{slugify(text, 32)}-{digest}"


def _merge_tags(tags: list[str], row_tags: Any) -> list[str]:
    """The template's tags, then a row's ``tags`` (a list, or comma-separated in CSV)."""
    if isinstance(row_tags, str):
        extra = [t.strip() for t in row_tags.split(",")]
    elif isinstance(row_tags, list):
        extra = [str(t).strip() for t in row_tags]
    else:
        extra = []
    return list(dict.fromkeys([*tags, *(t for t in extra if t)]))


def _suite_dir(source: str) -> Path:
    """The folder dataset paths are relative to: the suite file's, or the working directory
    for a suite given as text or data."""
    return Path.cwd() if source.startswith("<") else Path(source).parent


def dataset_display(source: str, written: str) -> str:
    """A dataset's path as a user finds it: next to the suite file it is written in."""
    return written if source.startswith("<") else (Path(source).parent / written).as_posix()
