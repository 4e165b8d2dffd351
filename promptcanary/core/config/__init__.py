"""The suite's YAML format: safe loading with line numbers (``source``), the schema (``schema``)."""
