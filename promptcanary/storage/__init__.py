"""Baseline storage: snapshot files on disk."""
