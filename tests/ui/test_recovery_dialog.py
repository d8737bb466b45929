"""After a crash mid-recording, the window opens with a report of what was recovered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QLabel, QMainWindow, QTableWidget
from pytestqt.qtbot import QtBot

from labrig.bootstrap import bootstrap
from labrig.store import Store
from labrig.ui.shell.recovery_dialog import recover_and_report

REPO = Path(__file__).resolve().parents[2]


def test_a_salvaged_capture_is_reported_at_start_up(qtbot: QtBot, store: Store) -> None:
    child = [
        sys.executable,
        "-m",
        "tests.integration.recording.record_child",
        str(store.root),
        "--kill-at-rename",
        "4",
    ]
    assert subprocess.run(child, cwd=REPO, timeout=60, capture_output=True).returncode == -9
    window = QMainWindow()
    qtbot.addWidget(window)
    dialog = recover_and_report(bootstrap(store=store), window)
    assert dialog is not None and dialog.isVisible()
    table = dialog.findChild(QTableWidget, "recoveryTable")
    assert table.rowCount() == 1 and table.item(0, 1).text() == "salvaged"
    assert "Nothing was deleted" in dialog.findChild(QLabel, "recoveryIntro").text()
    # nothing left the second time
    assert recover_and_report(bootstrap(store=store), window) is None
