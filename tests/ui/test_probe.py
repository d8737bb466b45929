"""``python -m labrig.ui.probe`` reports the Qt platform in one JSON line, in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import PySide6
from PySide6.QtCore import qVersion


def test_probe_reports_the_offscreen_platform() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "labrig.ui.probe"], env=env, capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    assert json.loads(lines[0]) == {"platform": "offscreen", "qt": qVersion(), "pyside": PySide6.__version__}
