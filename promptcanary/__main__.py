"""``python -m promptcanary``: the same command line as the ``promptcanary`` script."""

from promptcanary.cli import main

raise SystemExit(main())
