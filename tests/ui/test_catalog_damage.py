"""The window on a catalog whose pages are damaged (issue 16): SQLite's integrity check runs on a
pool thread once the window is shown, never before its first paint; damage it finds stops the
window's writers, is recorded beside the catalog, and a banner says so with the code and the steps.
Record and Import are then refused in those words and store nothing.

The damage is real: an index of the catalog changed in the file itself, which the check at every
open does not see (tests/support/pages.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from labrig.bootstrap import Services
from labrig.capture import import_media
from labrig.store import Store, open_store
from labrig.store.dialects.sqlite import PageCheck
from labrig.store.models import Capture, CaptureSegment
from labrig.ui.app import Gui, run_gui
from labrig.ui.shell.main_window import MainWindow
from tests.support.cli import write_video
from tests.support.pages import MISSING_ROW, damage_the_imported_index
from tests.ui.capture_helpers import (
    LEFT,
    MARKERS,
    WAIT_MS,
    fill_session,
    pick_device,
    shown_capture_page,
    wait_verified,
)

CODE = "LABRIG_CATALOG_DAMAGED"
MARKER = "labrig.db.damaged"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A store of two imports whose index of imported digests no longer matches its table."""
    root = tmp_path / "store"
    made = open_store(root)
    for n in range(2):
        write_video(tmp_path / f"trial-{n}.avi", frames=8 + n, seed=n)
        import_media(made, tmp_path / f"trial-{n}.avi")
    made.close()
    damage_the_imported_index(root / "labrig.db")
    damaged = open_store(root)  # the check at every open passes
    yield damaged
    damaged.close()


class _HeldCheck(PageCheck):
    """The real check, held at its start until the test lets it go, so the window is seen
    painting and answering while it runs."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.started, self.go_on = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None

    def run(self) -> list[str] | None:
        self.thread = threading.current_thread()
        self.started.set()
        self.go_on.wait(WAIT_MS / 1000)
        return super().run()


def _rows(store: Store) -> tuple[int, int]:
    """Captures and segments in the catalog (read through the store: reading goes on)."""
    with store.read() as session:
        return (
            session.scalar(select(func.count()).select_from(Capture)) or 0,
            session.scalar(select(func.count()).select_from(CaptureSegment)) or 0,
        )


def _files(store: Store) -> list[Path]:
    """What the media store and the provisional folders hold."""
    return sorted(p for d in ("captures", "media") for p in (store.root / d).rglob("*"))


def test_the_check_runs_behind_a_painted_window_and_its_damage_stops_record_with_the_code(
    qtbot: QtBot, services: Services, ui: Gui, store: Store, tmp_path: Path
) -> None:
    page = shown_capture_page(qtbot, ui)  # shown and painted before the check begins
    fill_session(qtbot, page, "S-016", "gait 10 m", "ana")  # a session: Record can be pressed
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)
    check = _HeldCheck(store.db_path)

    ui.catalog_check.start(check)

    assert check.started.wait(WAIT_MS / 1000)
    assert check.thread is not threading.main_thread()  # a pool thread: the GUI thread is free
    qtbot.wait(50)  # events are handled and the window repaints while the check runs
    assert ui.catalog_check.running and not ui.window.grab().isNull()
    assert not ui.window.damage_banner.isVisible()
    check.go_on.set()
    qtbot.waitUntil(ui.window.damage_banner.isVisible, timeout=WAIT_MS)
    banner = ui.window.damage_banner.text()
    assert banner.startswith(f"Writing stopped. {CODE}: the catalog {store.db_path} is damaged")
    assert MISSING_ROW in banner and "labrig recover --adopt" in banner
    assert "labrig doctor" in banner
    assert (store.root / MARKER).is_file()
    assert ui.executor.stopping.is_set()  # the window's writers were stopped first

    before, files = _rows(store), _files(store)
    qtbot.waitUntil(page.record_button.isEnabled, timeout=WAIT_MS)
    qtbot.mouseClick(page.record_button, LEFT)

    qtbot.waitUntil(lambda: "Recording did not start" in page.message.text(), timeout=WAIT_MS)
    assert "is damaged" in page.message.text() and "nothing was written" in page.message.text()
    assert _files(store) == files  # no provisional folder, no segment begun
    page.import_videos([tmp_path / "trial-0.avi"])  # its digest is the one the index lost
    qtbot.waitUntil(lambda: "Nothing was imported" in page.message.text(), timeout=WAIT_MS)
    assert "is damaged" in page.message.text()
    assert _files(store) == files and _rows(store) == before == (2, 2)


def _run_gui_at_most(qapp: QApplication, services: Services, ms: int) -> int:
    """``run_gui``, quit after ``ms`` at the latest: a look that failed fails the test, and
    never hangs it."""
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(qapp.quit)
    deadline.start(ms)
    try:
        return int(run_gui(services, ["labrig"]))
    finally:
        deadline.stop()


def _shown_windows(qapp: QApplication) -> list[MainWindow]:
    """The windows on screen (those of earlier tests are closed)."""
    return [w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]


def test_a_window_opened_on_a_catalog_recorded_damaged_says_so_and_starts_no_writer(
    qapp: QApplication, services: Services, store: Store
) -> None:
    (store.root / MARKER).write_bytes(b"")  # damage recorded by an earlier run (unreadable: still)
    store.recheck_damage()
    during: dict[str, object] = {}

    def look_then_quit() -> None:
        [window] = _shown_windows(qapp)
        during["banner"] = window.damage_banner.isVisible()
        during["text"] = window.damage_banner.text()
        during["dispatching"] = any(t.name == "labrig-dispatcher" for t in threading.enumerate())
        qapp.quit()

    QTimer.singleShot(0, look_then_quit)
    assert _run_gui_at_most(qapp, services, 2 * WAIT_MS) == 0

    assert during["banner"] is True and not during["dispatching"]
    assert str(during["text"]).startswith(f"Writing stopped. {CODE}: the catalog ")


def test_run_gui_starts_the_check_after_showing_the_window_and_stops_its_writers_on_damage(
    qapp: QApplication, services: Services, store: Store
) -> None:
    seen: dict[str, object] = {}

    def look(tries: int = 0) -> None:
        [window] = _shown_windows(qapp)  # shown before the check began
        if window.damage_banner.isVisible() or tries > WAIT_MS // 20:
            seen["banner"] = window.damage_banner.text()
            seen["dispatching"] = any(t.name == "labrig-dispatcher" for t in threading.enumerate())
            qapp.quit()
        else:
            QTimer.singleShot(20, lambda: look(tries + 1))

    QTimer.singleShot(0, look)
    assert _run_gui_at_most(qapp, services, 2 * WAIT_MS) == 0

    assert str(seen["banner"]).startswith(f"Writing stopped. {CODE}: the catalog ")
    assert seen["dispatching"] is False  # stopped when the damage was found
    assert '"found_by": "the window"' in (store.root / MARKER).read_text()
