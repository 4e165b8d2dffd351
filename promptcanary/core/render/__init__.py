"""Rendering runs and drift reports: markdown and JSON, the terminal, escaping."""
