"""``python -m labrig`` and the ``labrig`` console script: the command line's entry point."""

from __future__ import annotations

import sys
from collections.abc import Callable


def main() -> int:
    """Run the command this process's arguments name (:func:`labrig.cli.main`), its modules
    imported without the collector's passes over them (:func:`labrig.heap.started_uncollected`)."""
    from labrig.heap import started_uncollected

    return started_uncollected(_load)()


def _load() -> Callable[[], int]:
    from labrig import cli

    cli.command_modules()  # the named command's modules (every one for the window or the help)
    return cli.main


if __name__ == "__main__":
    sys.exit(main())
