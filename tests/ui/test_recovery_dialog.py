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


def test_damaged_interrupted_recordings_are_reported_at_start_up_not_a_crash(
    qtbot: QtBot, store: Store
) -> None:
    """Issue 16: the window's start-up recovery meets the damage ``labrig recover`` meets (a
    manifest that is not JSON, one whose ``timestamps`` is a number) and reports it."""
    root = store.root / "captures" / "provisional"
    broken = root / "6f1c2a9e-0000-4000-8000-000000000001"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_bytes(b"\xff not json")
    numeric = root / "7a2d3b0f-0000-4000-8000-000000000002"
    numeric.mkdir()
    (numeric / "manifest.json").write_text(
        '{"schema": "labrig.manifest/1", "capture_id": "7a2d3b0f-0000-4000-8000-000000000002", '
        '"session_id": null, "device": {}, "mode": {}, "verification": {}, '
        '"started_utc": "2026-12-02T07:00:00+00:00", "segment_seconds": 5, "segments": [{"name": '
        '"seg-00000.avi", "timestamps": 7, "frames": 1, "sha256": "' + "a" * 64 + '", "bytes": 1, '
        '"first_mono_ns": 0, "last_mono_ns": 0}]}'
    )
    window = QMainWindow()
    qtbot.addWidget(window)

    dialog = recover_and_report(bootstrap(store=store), window)

    assert dialog is not None and dialog.isVisible()
    table = dialog.findChild(QTableWidget, "recoveryTable")
    rows = {table.item(r, 0).text(): table.item(r, 3).text() for r in range(table.rowCount())}
    assert {table.item(r, 1).text() for r in range(table.rowCount())} == {"quarantined"}
    assert (
        "is not valid JSON" in rows[broken.name[:8]]
        and "timestamp file 7" in rows[numeric.name[:8]]
    )
    assert (store.root / "captures" / "quarantine" / broken.name / "manifest.json").is_file()
