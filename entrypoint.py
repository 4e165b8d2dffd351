"""Container entry point of the promptcanary GitHub Action."""

import sys

from promptcanary_action.main import main

sys.exit(main())
