"""``labrig --self-test`` from the source tree: one line per check, exit 1 on any failure,
scratch folders only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKS = (
    "qt",
    "qt-xcb",
    "opencv",
    "resources",
    "usb",
    "migrations",
    "recording",
    "pipeline",
    "export",
)
pytestmark = pytest.mark.slow


def self_test(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = (
        os.environ
        | {"QT_QPA_PLATFORM": "offscreen", "LABRIG_STORE": str(tmp_path / "ambient")}
        | env
    )
    return subprocess.run(
        [sys.executable, "-m", "labrig", *args, "--self-test"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
        cwd=REPO,
    )


def lines(stdout: str) -> dict[str, str]:
    """check name -> PASS/WARN/FAIL/SKIP."""
    return {m[2]: m[1] for m in re.finditer(r"^  (PASS|WARN|FAIL|SKIP)  (\S+)", stdout, flags=re.M)}


def test_every_check_passes_in_a_scratch_store_that_is_not_the_users(tmp_path: Path) -> None:
    result = self_test(tmp_path, "--store", str(tmp_path / "explicit"))
    assert result.returncode == 0, result.stdout + result.stderr
    status = lines(result.stdout)
    assert list(status) == list(CHECKS)
    # the window's plugin needs the xcb libraries, which a test machine may lack: a warning, never a
    # failure
    assert all(s == "PASS" for name, s in status.items() if name != "qt-xcb"), result.stdout
    assert status["qt-xcb"] in ("PASS", "WARN")
    assert "widget grab" in result.stdout and "result published with 3 tracks" in result.stdout
    # each format written and read back by its own library
    export = next(line for line in result.stdout.splitlines() if "  export  " in line)
    assert all(f in export for f in ("tidy CSV", "C3D 3 markers", "NWB", "video", "TRC", "MOT"))
    assert result.stdout.rstrip().endswith("Self-test passed: 9 checks.")
    assert not (tmp_path / "ambient").exists() and not (tmp_path / "explicit").exists()


def test_a_missing_qt_platform_plugin_fails_its_line_and_the_rest_still_run(tmp_path: Path) -> None:
    result = self_test(tmp_path, QT_QPA_PLATFORM="nosuchplatform")
    assert result.returncode == 1
    status = lines(result.stdout)
    assert status["qt"] == "FAIL"
    assert 'Could not find the Qt platform plugin "nosuchplatform"' in result.stdout
    assert "what to do:" in result.stdout
    assert all(
        status[name] == "PASS"
        for name in ("opencv", "migrations", "recording", "pipeline", "export")
    )
    assert "Self-test FAILED: qt (1 of 9 checks)." in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_the_self_test_and_the_instance_lock_import_no_qt() -> None:
    """The core stays importable without Qt: Qt runs only in the probe's child process."""
    code = (
        "import sys, labrig.scenarios.selftest, labrig.instance_lock, labrig.health; qt = sorted(m "
        "for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')); "
        "print(qt, file=sys.stderr); sys.exit(1 if qt else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
