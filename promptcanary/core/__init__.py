"""The engine's core: models, probes, suite, comparison, statistics and reports."""
