"""``python -m labrig.ui.probe``: can Qt start here? Prints one JSON line and exits 0.

Run in a subprocess (``labrig doctor`` does) because a missing or broken Qt
platform plugin aborts the whole process instead of raising.
"""

from __future__ import annotations

import json
import sys

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtGui import QGuiApplication


def main(argv: list[str] | None = None) -> int:
    # a QGuiApplication is enough to load the platform plugin, and shows nothing
    app = QGuiApplication(argv if argv is not None else sys.argv[:1])
    facts = {"platform": app.platformName(), "qt": qVersion(), "pyside": PySide6.__version__}
    print(json.dumps(facts), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
