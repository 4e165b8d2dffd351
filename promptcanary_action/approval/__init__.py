"""Approving drift with a pull-request label: ``record`` decides which approval is in force and
reads and writes the record hidden in the comment (pure); ``lookup`` gathers those facts from
GitHub through the port.

Not :mod:`promptcanary.core.verdict.approval`, which says which regressions an approval covers.
"""
