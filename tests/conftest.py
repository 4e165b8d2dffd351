"""Shared pytest configuration: fixture modules live next to the fakes they start."""

pytest_plugins = [
    "tests.fakes.llm_fixtures",
    "tests.fakes.github_fixtures",
    "tests.fakes.git_fixtures",
]
