"""Launcher frozen by the installer: everything else lives in the labrig package."""

import sys

from labrig.cli import main

if __name__ == "__main__":
    sys.exit(main())
