"""Dataset files of templated prompts: CSV or JSON Lines rows, each with the line it starts on.

A dataset is read whole, once, and checked against the documented caps before any prompt is
built: a suite cannot turn into a run of a million requests by accident. ``limit`` keeps the
first rows; ``sample`` then keeps a fixed number of them chosen by a hash of each row's identity,
so the same rows are chosen on every run and adding a row to the file changes the choice by at
most that row.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptcanary.core.files import numbered_values

MAX_DATASET_BYTES = 20 * 1024 * 1024
"""The largest dataset file read (20 MiB)."""

MAX_DATASET_ROWS = 10_000
"""The most rows one templated prompt may turn into (after ``limit`` and ``sample``)."""

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


class DatasetError(ValueError):
    """A dataset that cannot be used; ``line`` is the line of the file at fault, if one is."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Row:
    """One row of variables and the line of the file (or suite) it starts on."""

    values: dict[str, Any]
    line: int | None


def dataset_path(suite_dir: Path, written: str) -> Path:
    """The dataset file ``written`` in a suite, which must stay inside the suite's folder."""
    relative = Path(written)
    if relative.is_absolute():
        raise DatasetError(f"dataset path {written!r} is absolute: give it relative to the suite")
    path = (suite_dir / relative).resolve()
    if not path.is_relative_to(suite_dir.resolve()):
        raise DatasetError(
            f"dataset path {written!r} leaves the suite's folder: keep datasets in it or below"
        )
    if path.suffix.lower() not in FORMATS:
        raise DatasetError(
            f"dataset {written!r} is neither CSV nor JSON Lines: name it *.csv or *.jsonl"
        )
    return path


def read_rows(path: Path) -> list[Row]:
    """Every row of a CSV (header first) or JSON Lines (one object a line) file."""
    try:
        size = path.stat().st_size
        if size > MAX_DATASET_BYTES:
            raise DatasetError(
                f"the dataset is {size:,} bytes, over the cap of {MAX_DATASET_BYTES:,}: "
                "split it, or keep the rows that matter"
            )
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DatasetError("the dataset file does not exist") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"the dataset is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DatasetError(f"the dataset cannot be read: {exc.strerror or exc}") from None
    return _csv_rows(text) if FORMATS[path.suffix.lower()] == "csv" else _jsonl_rows(text)


def _csv_rows(text: str) -> list[Row]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise DatasetError("the CSV file is empty: its first line names the columns", 1)
        _check_header(header)
        rows: list[Row] = []
        start = reader.line_num + 1
        for fields in reader:
            if fields:  # a blank line holds no row
                if len(fields) != len(header):
                    raise DatasetError(
                        f"line {start} has {len(fields)} fields, the header has {len(header)}",
                        start,
                    )
                rows.append(Row(dict(zip(header, fields, strict=True)), start))
            start = reader.line_num + 1
    except csv.Error as exc:
        line = reader.line_num
        raise DatasetError(f"malformed CSV on line {line}: {exc}", line) from None
    return rows


def _check_header(header: list[str]) -> None:
    seen: set[str] = set()
    for n, name in enumerate(header, 1):
        if not name.strip():
            raise DatasetError(f"column {n} of the header has no name", 1)
        if name in seen:
            raise DatasetError(f"column {name!r} appears twice in the header", 1)
        seen.add(name)


def _jsonl_rows(text: str) -> list[Row]:
    rows: list[Row] = []
    for number, value, why in numbered_values(text):
        if why:
            raise DatasetError(f"line {number} is {why}", number)
        if not isinstance(value, dict):
            raise DatasetError(
                f"line {number} is not a JSON object: each line is one row, e.g. "
                '{"city": "Paris"}',
                number,
            )
        rows.append(Row(value, number))
    return rows


def select(
    rows: list[Row], identity: Callable[[Row], str], *, limit: int | None, sample: int | None
) -> list[Row]:
    """The rows kept: the first ``limit``, then ``sample`` of them chosen by identity hash
    (in file order); more than :data:`MAX_DATASET_ROWS` is an error."""
    kept = rows[:limit] if limit is not None else rows
    if sample is not None and sample < len(kept):
        ranked = sorted(kept, key=lambda r: hashlib.sha256(identity(r).encode()).digest())
        chosen = {id(r) for r in ranked[:sample]}
        kept = [r for r in kept if id(r) in chosen]
    if len(kept) > MAX_DATASET_ROWS:
        raise DatasetError(
            f"{len(kept):,} rows is over the cap of {MAX_DATASET_ROWS:,} prompts from one "
            "template: set `limit:` or `sample:` in the dataset entry"
        )
    return kept
