"""``python -m labrig.ui.shell.probe`` reports the Qt platform in one JSON line, in its own
process."""

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
        [sys.executable, "-m", "labrig.ui.shell.probe"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    assert json.loads(lines[0]) == {
        "platform": "offscreen",
        "qt": qVersion(),
        "pyside": PySide6.__version__,
    }


def _probe(*args: str, platform: str = "offscreen") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM=platform)
    return subprocess.run(
        [sys.executable, "-m", "labrig.ui.shell.probe", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_grab_renders_a_widget_with_text_on_it() -> None:
    done = _probe("--grab")
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    width, height = map(int, facts["grab"].split("x"))
    assert facts["platform"] == "offscreen" and width > 20 and height > 10


def test_plugin_loads_a_platform_plugin_without_a_display_or_names_what_is_missing() -> None:
    # the plugin is only loaded, not started
    done = _probe("--plugin", "offscreen", platform="nosuchplatform")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plugin"] == "offscreen"
    missing = _probe("--plugin", "nosuchplatform")
    assert missing.returncode == 1
    assert "Could not find the Qt platform plugin 'nosuchplatform'" in missing.stderr
