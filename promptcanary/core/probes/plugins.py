"""Import custom probe modules (files or dotted modules) before suites are loaded.

Used by the CLI (``--probe-module``) and the action (input ``probe-modules``); ``label`` names
where the entry came from in error messages.

Each entry is a Python file (``probes/my_probes.py``) or a dotted module (``myproject.probes``).
Importing registers every ``BaseProbe`` subclass and ``@probe`` function the module defines.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from promptcanary.core.probes.registry import ProbeRegistry, registry_or_active


class ProbeModuleError(Exception):
    """A custom probe module could not be imported; names the file and the cause."""


def _module_name(path: Path, base_dir: Path) -> str:
    """A module name unique per file: ``team_a/probes.py`` and ``team_b/probes.py`` differ.

    Two files sharing a stem must not share a name, or the second replaces the first's classes
    under the same qualified name and a duplicate probe id goes unreported.
    """
    try:
        parts = path.resolve().with_suffix("").relative_to(base_dir.resolve()).parts
    except ValueError:  # outside the working directory (an absolute path)
        parts = path.resolve().with_suffix("").parts[1:]
    return "promptcanary_user_probes." + "__".join(re.sub(r"\W", "_", p) for p in parts)


def _import_file(path: Path, base_dir: Path) -> ModuleType:
    name = _module_name(path, base_dir)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProbeModuleError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _where(exc: BaseException, path: Path | None, base_dir: Path) -> str:
    """The innermost frame in the user's code, so the message points at their line.

    For a file entry that is the file itself; for a dotted module, whose file is only known to
    the import system, the innermost frame in a file under the working directory.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if path is not None:
        own = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
    else:
        root = base_dir.resolve()
        own = [f for f in frames if Path(f.filename).resolve().is_relative_to(root)]
    if own:
        return f"{path or own[-1].filename}:{own[-1].lineno}"
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    return str(path) if path is not None else ""


def _is_prefix(module: str, entry: str) -> bool:
    """``pkg`` and ``pkg.probes`` are the entry ``pkg.probes`` or one of its packages."""
    return entry == module or entry.startswith(module + ".")


def import_probe_modules(
    entries: Sequence[str],
    *,
    base_dir: Path,
    label: str = "probe module",
    registry: ProbeRegistry | None = None,
) -> list[ModuleType]:
    """Import every entry; the first failure raises :class:`ProbeModuleError`.

    The probes the modules define register in ``registry`` (default: the active registry).
    """
    if str(base_dir) not in sys.path:
        sys.path.insert(0, str(base_dir))  # so workspace packages and sibling imports resolve
    with registry_or_active(registry).active():
        return [_import_entry(entry, base_dir, label) for entry in entries]


def _import_entry(entry: str, base_dir: Path, label: str) -> ModuleType:
    """One entry imported, or a :class:`ProbeModuleError` naming where it failed."""
    looks_like_file = entry.endswith(".py") or "/" in entry
    path = (base_dir / entry) if looks_like_file else None
    if path is not None and not path.is_file():
        raise ProbeModuleError(f"{label}: {entry}: no such file (paths are relative to {base_dir})")
    try:
        return _import_file(path, base_dir) if path else importlib.import_module(entry)
    except ProbeModuleError:
        raise
    except ModuleNotFoundError as exc:
        # The entry itself (or its package) is missing, not a dependency the module imports.
        if path is None and exc.name is not None and _is_prefix(exc.name, entry):
            raise ProbeModuleError(
                f"{label}: {entry}: no such module ({exc}); give a file path ending in "
                f".py, or a module importable from {base_dir}"
            ) from exc
        raise _failed(exc, entry, path, base_dir) from exc
    except Exception as exc:  # user code may raise anything at import time
        raise _failed(exc, entry, path, base_dir) from exc


def _failed(exc: Exception, entry: str, path: Path | None, base_dir: Path) -> ProbeModuleError:
    where = _where(exc, path, base_dir) or entry
    return ProbeModuleError(
        f"{where}: importing custom probe module {entry!r} failed: {type(exc).__name__}: {exc}"
    )
