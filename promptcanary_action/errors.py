"""Errors shared by several modules of the action (each maps to an exit code in main)."""


class UsageError(Exception):
    """The step's configuration cannot work (no suite file matched, no model): exit 2."""


class ReportWriteError(Exception):
    """The report folder cannot be written (disk full, read-only file system): exit 2."""
