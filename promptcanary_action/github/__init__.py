"""The action's side of GitHub: ``port`` (the typed port the action talks to, and its data types),
``client`` (the port over GitHub's REST API: the only module that imports PyGithub), ``errors``
(GitHub's failures as domain errors) and ``limits`` (GitHub's size limits).

Imports nothing, so that importing the port or the errors never loads PyGithub.
"""
