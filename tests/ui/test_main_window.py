"""The main window opens offscreen, navigates between its pages and shows real store facts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QListWidget, QSplitter, QStackedWidget
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.domain.storage import human_bytes
from labrig.store import migrate
from labrig.ui.app import Gui, build_main_window
from labrig.ui.review.page import ReviewPage
from labrig.ui.screens import PAGES
from labrig.ui.shell.main_window import MainWindow
from labrig.ui.shell.window_state import opening_size

TITLES = [
    "Capture",
    "Calibration",
    "Results",
    "Review",
    "Queue",
    "Devices",
    "Storage",
    "Releases",
    "Audit trail",
    "Users and roles",
    "Settings",
]


def _shown(qtbot: QtBot, window: MainWindow) -> MainWindow:
    window.show()
    qtbot.waitExposed(window)
    return window


def test_window_lists_every_page_in_order(ui: Gui) -> None:
    window = ui.window
    navigation = window.findChild(QListWidget, "navigation")
    pages = window.findChild(QStackedWidget, "pages")

    assert window.windowTitle() == "Labrig"
    assert [navigation.item(i).text() for i in range(navigation.count())] == TITLES
    assert [spec.title for spec in PAGES] == TITLES
    assert pages.count() == len(TITLES)
    assert pages.currentIndex() == navigation.currentRow() == 0


def test_clicking_an_entry_switches_the_page(qtbot: QtBot, ui: Gui) -> None:
    window = _shown(qtbot, ui.window)
    navigation = window.findChild(QListWidget, "navigation")
    pages = window.findChild(QStackedWidget, "pages")

    for row in (4, 1, 8):
        rect = navigation.visualItemRect(navigation.item(row))
        qtbot.mouseClick(navigation.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert pages.currentIndex() == row
        assert pages.currentWidget().objectName() == f"page_{PAGES[row].key}"

    window.show_page("review")
    assert navigation.currentRow() == pages.currentIndex() == TITLES.index("Review")


def test_the_review_page_is_in_its_place(ui: Gui) -> None:
    stack = ui.window.findChild(QStackedWidget, "pages")
    # built when first asked for, in its place
    assert stack.widget(TITLES.index("Review")).objectName() == "unbuilt_review"
    review = ui.window.page("review")
    assert isinstance(review, ReviewPage) and stack.widget(TITLES.index("Review")) is review


def test_settings_page_shows_the_real_store(services: Services, ui: Gui) -> None:
    window = ui.window
    window.show_page("settings")
    page = window.findChild(QStackedWidget, "pages").currentWidget()
    store = services.store

    def text(name: str) -> str:
        return page.findChild(QLabel, name).text()

    assert text("dataFolder") == str(store.root)
    assert text("databaseFile") == str(store.db_path)
    assert store.db_path.is_file()
    # a fresh store is migrated to the newest revision; the foundation is always below it
    assert text("schemaRevision") == store.revision() == migrate.head_revision()
    assert "0001_foundation" in migrate.known_revisions()
    assert text("storeId") == store.meta("store_id")
    assert text("storeId")


def test_status_bar_starts_honest(qtbot: QtBot, services: Services, ui: Gui) -> None:
    window = ui.window

    # the queue's counts are real from the start (an empty store: nothing anywhere)
    assert window.findChild(QLabel, "queueStatus").text() == "Queue: 0 ready · 0 running · 0 failed"
    assert window.findChild(QLabel, "lastEvent").text() == "Last event: —"
    # storage and release are read off the GUI thread: a dash until the reading arrives, never a
    # guess
    storage = window.findChild(QLabel, "storageStatus")
    qtbot.waitUntil(
        lambda: storage.text().startswith(f"Storage: {services.storage.level.label} ("),
        timeout=5000,
    )
    assert window.findChild(QLabel, "releaseStatus").text() == "Release: none active"


def test_grab_renders_the_whole_window(qtbot: QtBot, ui: Gui) -> None:
    window = _shown(qtbot, ui.window)
    pixmap = window.grab()

    assert not pixmap.isNull()
    assert pixmap.size() == window.size()


def test_human_bytes_uses_decimal_units() -> None:
    assert human_bytes(999) == "999 B"
    assert human_bytes(12_300_000_000) == "12.3 GB"
    assert human_bytes(4_500_000_000_000) == "4.5 TB"


def test_the_status_bar_says_whether_sync_is_configured_and_what_is_pending(
    qtbot: QtBot, services: Services, ui: Gui, tmp_path: Path
) -> None:
    sync = ui.window.findChild(QLabel, "syncStatus")
    qtbot.waitUntil(lambda: sync.text() == "Sync: not configured", timeout=5000)
    assert "on the Settings screen" in sync.toolTip()

    archive = tmp_path / "archive"
    archive.mkdir()
    services.sync.configure(archive, "the lab's archive share")
    ui.window.refresh_action.trigger()
    qtbot.waitUntil(
        lambda: sync.text().startswith("Sync: ") and "pending" in sync.text(), timeout=5000
    )
    assert sync.text().endswith("· 0 archived")
    assert str(archive) in sync.toolTip()


def test_the_opening_size_is_at_least_1280_by_800_where_the_screen_allows() -> None:
    assert opening_size(QSize(1280, 800)) == QSize(1280, 800)
    assert opening_size(QSize(1920, 1080)) == QSize(1536, 864)  # four fifths of a large screen
    assert opening_size(QSize(1024, 700)) == QSize(1024, 700)  # never beyond a small one
    assert opening_size(QSize(1366, 768)) == QSize(1280, 768)


def _built(qtbot: QtBot, services: Services) -> Gui:
    """A window built the app's way, as a new run of Labrig builds it."""
    gui = build_main_window(services)
    qtbot.addWidget(gui.window)
    return gui


def _closed(gui: Gui, services: Services) -> None:
    """Closed as a user closes it (which keeps its size and splitters), then taken apart."""
    gui.window.close()
    gui.executor.shutdown(5000)
    gui.bridge.detach(services)


def _calibration_splitter(window: MainWindow) -> QSplitter:
    [splitter] = [
        s for s in window.findChildren(QSplitter) if s.objectName() == "calibrationSplitter"
    ]
    return splitter


def test_the_window_remembers_its_size_and_splitters_between_runs(
    qtbot: QtBot, services: Services
) -> None:
    first = _built(qtbot, services)
    # nothing kept yet: the opening size, on the tests' 1280×800 screen
    assert first.window.size() == QSize(1280, 800)
    first.window.show()
    qtbot.waitExposed(first.window)
    first.window.resize(1000, 700)
    first.window.show_page("calibration")
    splitter = _calibration_splitter(first.window)
    qtbot.waitUntil(lambda: sum(splitter.sizes()) > 0)
    splitter.setSizes([300, sum(splitter.sizes()) - 300])
    kept = splitter.sizes()
    _closed(first, services)

    again = _built(qtbot, services)
    again.window.show()
    qtbot.waitExposed(again.window)
    assert again.window.size() == QSize(1000, 700)
    again.window.show_page("calibration")
    splitter = _calibration_splitter(again.window)
    qtbot.waitUntil(lambda: splitter.sizes() == kept)
    _closed(again, services)


def test_a_maximised_window_opens_maximised_again(qtbot: QtBot, services: Services) -> None:
    first = _built(qtbot, services)
    first.window.showMaximized()
    qtbot.waitUntil(first.window.isMaximized)
    _closed(first, services)

    again = _built(qtbot, services)
    again.window.show()
    qtbot.waitUntil(again.window.isMaximized)
    _closed(again, services)


OPENS_ON_RESULTS = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from labrig.bootstrap import bootstrap
from labrig.ui.app import build_main_window
services = bootstrap(sys.argv[1])
gui = build_main_window(services)
gui.window.show_page("results")
gui.window.show()
app.processEvents()
built = sorted(p.objectName() for p in gui.window.built_pages())
loaded = sorted(m for m in sys.modules if m.startswith("labrig.ui.") and m.endswith(".page"))
print(built, loaded, "labrig.ui.calibration.screen" in sys.modules)
later = ("pyqtgraph", "labrig.export", "labrig.ui.shell.device_checks", "labrig.capture.service")
print([m for m in later if m in sys.modules])
gui.executor.shutdown(5000)
services.close()
"""


def test_the_window_opens_on_one_screen_and_builds_the_others_when_shown(tmp_path: Path) -> None:
    """A screen is built, and its modules imported, when it is first shown: the window opens on
    the Results screen without the Capture screen's previews or the Calibration screen's plots;
    the result's plots (pyqtgraph), the export service and the device checks (the capture
    service) wait until a result is shown, Export… is clicked or a screen opens a device."""
    child = subprocess.run(
        [sys.executable, "-c", OPENS_ON_RESULTS, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert child.returncode == 0, child.stderr
    pages, later = child.stdout.splitlines()
    assert pages.split() == ["['page_results']", "['labrig.ui.results.page']", "False"]
    assert later == "[]"
