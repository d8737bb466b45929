"""The Storage page measures the real volume off the GUI thread and says what the level means."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.domain.storage import GIB
from labrig.events import events_after
from labrig.storage import DiskUsage, StorageMonitor
from labrig.ui.app import Gui
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.storage.page import StoragePage

WAIT_MS = 5_000


def test_the_page_shows_the_real_volume_and_a_forecast_per_mode(
    qtbot: QtBot, ui: Gui, services: Services
) -> None:
    ui.window.show()
    ui.window.show_page("storage")
    page = ui.window.pages.currentWidget()
    assert isinstance(page, StoragePage)
    qtbot.waitUntil(lambda: page.level.text() != "—" and not page.busy, timeout=WAIT_MS)
    assert page.level.text() == services.storage.level.label
    assert " of " in page.free.text() and "% used" in page.free.text()
    assert page.media.text().endswith(" files")
    assert page.folder.text() == str(services.store.media_dir)
    # by size and rate only: recordings are stored as MJPEG whatever the camera sends
    assert [page.forecast.item(r, 0).text() for r in range(page.forecast.rowCount())] == [
        "640x480 at 30 fps",
        "1280x720 at 30 fps",
        "1280x720 at 60 fps",
        "1920x1080 at 30 fps",
    ]
    assert "stored as MJPEG" in page.forecast.horizontalHeaderItem(0).text()
    assert all(page.forecast.item(r, 1).text() != "—" for r in range(page.forecast.rowCount()))


def test_a_full_volume_reads_critical_with_advice_and_no_recording_time(
    qtbot: QtBot, services: Services
) -> None:
    def nearly_full(_path: Path) -> DiskUsage:
        return DiskUsage(100 * GIB, 100 * GIB - 2 * GIB, 2 * GIB)

    bridge = EventBridge()
    page = StoragePage(StorageMonitor(services.store, disk_usage=nearly_full), bridge)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.level.text() == "critical", timeout=WAIT_MS)
    assert "new recordings are refused" in page.advice.text()
    assert {page.forecast.item(r, 1).text() for r in range(page.forecast.rowCount())} == {"none"}
    # the level change was recorded in the catalog with its event, as every sample does
    assert [
        e.payload["level"]
        for e in events_after(services.store, 0)
        if e.name == "storage.pressure.changed"
    ] == ["critical"]
    page.shut_down(WAIT_MS)
