"""Opening the window on bad input: a missing Qt plugin, an unwritable data folder, a second
window on the same store. Each is refused with its code, exit 2, no traceback and no change to
the store."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labrig.instance_lock import LOCK_FILENAME, InstanceLock
from labrig.store import open_store, paths

REPO = Path(__file__).resolve().parents[2]


def env(**extra: str) -> dict[str, str]:
    return os.environ | {"QT_QPA_PLATFORM": "offscreen"} | extra


def launch(store: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env(**extra),
        cwd=REPO,
    )


def test_a_missing_qt_platform_plugin_is_refused_before_the_store_is_touched(
    tmp_path: Path,
) -> None:
    result = launch(tmp_path / "store", QT_QPA_PLATFORM="nosuchplatform")
    assert result.returncode == 2, result.stderr
    assert "labrig: LABRIG_QT_UNAVAILABLE: the window cannot open" in result.stderr
    assert 'Could not find the Qt platform plugin "nosuchplatform"' in result.stderr
    assert "What to do:" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "store").exists()


def test_an_unwritable_data_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    result = launch(tmp_path / "file" / "store")
    assert result.returncode == 2
    assert "labrig: LABRIG_STORE_UNWRITABLE: cannot write to the data folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "file").read_text() == "not a folder"


def _wait_for_holder(lock_file: Path, pid: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            if json.loads(lock_file.read_text() or "null")["pid"] == pid:
                return
        except (OSError, ValueError, TypeError):
            pass
        time.sleep(0.1)
    pytest.fail("the window never took the store's lock")


@pytest.mark.slow
def test_a_second_window_on_the_same_store_is_refused_and_the_store_stays_whole(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    first = subprocess.Popen(
        [sys.executable, "-m", "labrig", "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=REPO,
    )
    try:
        _wait_for_holder(store / LOCK_FILENAME, first.pid, first)
        second = launch(store)
        assert second.returncode == 2
        assert "labrig: LABRIG_STORE_IN_USE: the data folder" in second.stderr
        assert f"process {first.pid} of user" in second.stderr
        assert "Switch to that window, or close it and start Labrig again" in second.stderr
        assert "Traceback" not in second.stderr
        assert first.poll() is None, "the first window must keep running"
        # headless commands share the store by design: they are not refused
        jobs = subprocess.run(
            [sys.executable, "-m", "labrig", "--store", str(store), "jobs", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env(),
            cwd=REPO,
        )
        assert jobs.returncode == 0, jobs.stderr
    finally:
        first.terminate()
        first.wait(30)
    InstanceLock(store).acquire()  # freed when the first window ended, however it ended
    with sqlite3.connect(store / paths.DB_FILENAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    open_store(store).close()
