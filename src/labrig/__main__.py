"""``python -m labrig``: the same entry point as the ``labrig`` console script."""

import sys

from labrig.cli import main

sys.exit(main())
