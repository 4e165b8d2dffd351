"""Safe YAML loading that remembers where every value came from.

A suite file is composed with a pure-Python ``yaml.SafeLoader`` subclass (never a full loader)
after a size check and with a nesting limit; composition keeps every node's line and column. The
node graph is then walked into plain Python values while the position of every mapping key and
value is recorded in a :class:`SourceMap`. The walk rejects duplicate keys (PyYAML silently keeps
the last one), unknown tags and alias bombs ("billion laughs": aliases re-used until the expansion
explodes). Every problem is a :class:`SuiteConfigError` with file, line, column and a hint.

:mod:`promptcanary.core.config.schema` validates the values and builds the suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Loc",
    "SourceMap",
    "SuiteConfigError",
    "SuiteFileNotFoundError",
    "parse_yaml",
    "read_suite_file",
]

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Suite files larger than this are refused before parsing."""
MAX_ALIAS_EXPANSION = 10_000
"""Nodes that may be visited again through aliases; real suites re-use a few small anchors."""
MAX_DEPTH = 64
"""Nesting depth of collections; a suite needs about six levels, tool schemas a few more."""

Loc = tuple[str | int, ...]
"""Where a value sits in the document: keys and list indices from the top."""

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_BINARY_TAG = "tag:yaml.org,2002:binary"


# ── errors ───────────────────────────────────────────────────────────────────


class SuiteConfigError(ValueError):
    """A suite file (or dict) that cannot be loaded; ``str()`` is ``file:line:column: message``."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file or "<suite>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class SuiteFileNotFoundError(SuiteConfigError, FileNotFoundError):
    """The suite file does not exist (a ``FileNotFoundError`` too, as the spec documents)."""


class _DeepNesting(Exception):
    """Raised inside the composer; turned into a SuiteConfigError with the file name."""

    def __init__(self, mark: yaml.Mark) -> None:
        super().__init__("nesting too deep")
        self.mark = mark


# ── positions and error context ──────────────────────────────────────────────


@dataclass
class SourceMap:
    """The source name plus the (line, column), 1-based, of every key and value by location."""

    source: str
    values: dict[Loc, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Loc, tuple[int, int]] = field(default_factory=dict)

    def position(self, loc: Loc, *, key: bool = False) -> tuple[int | None, int | None]:
        """The position of ``loc``'s key (or value), else of the nearest enclosing value."""
        if key and loc in self.keys:
            return self.keys[loc]
        while True:
            if loc in self.values:
                return self.values[loc]
            if not loc:
                return None, None
            loc = loc[:-1]

    def line(self, loc: Loc) -> int | None:
        return self.position(loc)[0]

    def error(
        self, message: str, loc: Loc = (), *, key: bool = False, hint: str | None = None
    ) -> SuiteConfigError:
        line, column = self.position(loc, key=key)
        return SuiteConfigError(message, file=self.source, line=line, column=column, hint=hint)


def _mark_error(source: str, message: str, mark: yaml.Mark | None) -> SuiteConfigError:
    if mark is None:
        return SuiteConfigError(message, file=source)
    return SuiteConfigError(message, file=source, line=mark.line + 1, column=mark.column + 1)


# ── step 1: compose ──────────────────────────────────────────────────────────


class _SuiteLoader(yaml.SafeLoader):
    """SafeLoader (pure Python, so the nesting guard below runs) that limits nesting depth."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _DeepNesting(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def read_suite_file(path: Path, source: str) -> str:
    """The text of a suite file: size-checked before reading, UTF-8 (a BOM is dropped)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _too_big(source, f"{size:,} bytes")
        with path.open("rb") as handle:
            # Bounded read: stat() can lie (a FIFO, a file growing under us).
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SuiteFileNotFoundError(
            f"Canary config not found: {source}", file=source, hint="check the path"
        ) from None
    except IsADirectoryError:
        raise SuiteConfigError("is a directory, not a suite file", file=source) from None
    except OSError as exc:
        raise SuiteConfigError(
            f"cannot read the suite file: {exc.strerror or exc}", file=source
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise _too_big(source, f"more than {MAX_FILE_BYTES:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SuiteConfigError(
            "the file is not valid UTF-8", file=source, line=line, column=column
        ) from None


def _too_big(source: str, size: str) -> SuiteConfigError:
    return SuiteConfigError(
        f"suite file is too large: {size}, the limit is {MAX_FILE_BYTES:,} bytes",
        file=source,
        hint="split it into several suite files",
    )


def _compose(text: str, source: str) -> tuple[Node | None, _SuiteLoader]:
    try:
        loader = _SuiteLoader(text)  # the reader checks for unprintable characters right here
        return loader.get_single_node(), loader
    except _DeepNesting as exc:
        raise _mark_error(
            source, f"the document is nested more than {MAX_DEPTH} levels deep", exc.mark
        ) from None
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(source, exc) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise SuiteConfigError(
            f"invalid YAML: unacceptable character U+{exc.character:04X}",
            file=source,
            line=line,
            column=column,
        ) from None


def _yaml_error(source: str, exc: yaml.MarkedYAMLError) -> SuiteConfigError:
    problem = exc.problem or "syntax error"
    context = exc.context or ""
    start, at = exc.context_mark, exc.problem_mark
    if context and start is not None and at is not None and start.line != at.line:
        # An unclosed bracket or quote is found lines later: say where it was opened.
        context += f" started at line {start.line + 1}, column {start.column + 1}"
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    hint = "indent with spaces, not tabs" if "\\t" in problem or "\t" in problem else None
    error = _mark_error(source, message, exc.problem_mark or exc.context_mark)
    error.hint = hint
    return error


# ── step 2: walk nodes into values, recording positions ──────────────────────


def _short(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


class _Walker:
    def __init__(self, loader: _SuiteLoader, context: SourceMap) -> None:
        self.loader = loader
        self.context = context
        self.seen: set[int] = set()
        self.open: set[int] = set()
        self.revisits = 0

    def _error(self, message: str, node: Node, hint: str | None = None) -> SuiteConfigError:
        error = _mark_error(self.context.source, message, node.start_mark)
        error.hint = hint
        return error

    def value(self, node: Node, loc: Loc) -> Any:
        self.context.values[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
        node_id = id(node)
        if node_id in self.open:
            raise self._error("recursive alias: a node contains itself", node)
        if node_id in self.seen:
            # Only aliases lead to a node twice; this bounds the expansion of a YAML bomb.
            self.revisits += 1
            if self.revisits > MAX_ALIAS_EXPANSION:
                raise self._error(
                    f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes: "
                    "the document looks like a YAML bomb ('billion laughs')",
                    node,
                    hint="use fewer nested anchors and aliases",
                )
        self.seen.add(node_id)
        if isinstance(node, ScalarNode):
            return self._scalar(node)
        self.open.add(node_id)
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, loc)
            if isinstance(node, SequenceNode):
                return self._sequence(node, loc)
            raise self._error("unsupported YAML node", node)
        finally:
            self.open.discard(node_id)

    def _scalar(self, node: ScalarNode) -> Any:
        if node.tag == _TIMESTAMP_TAG:
            # `added: 2024-05-01` means that text; a datetime would not survive JSON or hashing.
            return node.value
        if node.tag == _BINARY_TAG:
            raise self._error("binary values (!!binary) are not supported in a suite", node)
        try:
            return self.loader.construct_object(node)
        except yaml.MarkedYAMLError as exc:
            raise _yaml_error(self.context.source, exc) from None
        except (ValueError, OverflowError) as exc:  # e.g. an int with 10,000 digits, 2024-13-45
            raise self._error(f"invalid value {node.value[:40]!r}: {exc}", node) from None

    def _sequence(self, node: SequenceNode, loc: Loc) -> list[Any]:
        if node.tag != _SEQ_TAG:
            raise self._error(f"unsupported YAML tag {_short(node.tag)!r} on a list", node)
        return [self.value(child, (*loc, i)) for i, child in enumerate(node.value)]

    def _mapping(self, node: MappingNode, loc: Loc) -> dict[str, Any]:
        if node.tag != _MAP_TAG:
            raise self._error(f"unsupported YAML tag {_short(node.tag)!r} on a mapping", node)
        merged = self._merged(node, loc)
        self.context.values[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            if not isinstance(key_node, ScalarNode):
                raise self._error("a mapping key must be a plain string", key_node)
            # The key's source text: `yes:` or `1:` mean the strings a suite author typed.
            key = key_node.value
            where = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key in result:
                first = self.context.keys[(*loc, key)][0]
                raise self._error(
                    f"duplicate key {key!r} (first at line {first}, again at line {where[0]})",
                    key_node,
                    hint="YAML would silently keep only the last one; remove or rename one",
                )
            self.context.keys[(*loc, key)] = where
            result[key] = self.value(value_node, (*loc, key))
        return {**{k: v for k, v in merged.items() if k not in result}, **result}

    def _merged(self, node: MappingNode, loc: Loc) -> dict[str, Any]:
        """Values from ``<<: *anchor`` merge keys; explicit keys win, earlier merges win."""
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE_TAG:
                continue
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in reversed(sources):
                if not isinstance(source, MappingNode):
                    raise self._error("a merge key '<<' takes a mapping or a list of them", source)
                merged.update(self.value(source, loc))
        return merged


def parse_yaml(text: str, source: str = "<string>") -> tuple[Any, SourceMap]:
    """Parse YAML text into plain values plus the positions of every key and value."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise _too_big(source, f"{len(text.encode('utf-8', 'surrogatepass')):,} bytes")
    node, loader = _compose(text, source)
    context = SourceMap(source)
    try:
        data = None if node is None else _Walker(loader, context).value(node, ())
    finally:
        loader.dispose()
    return data, context
