"""Errors of a model's configuration, found before any request is sent."""

from __future__ import annotations


class ModelConfigError(ValueError):
    """A model the run cannot call as configured: a model string LiteLLM does not know, or a
    model entry's parameter it refuses. A configuration error (exit 2), not an untrustworthy
    run: no answer was asked for."""
