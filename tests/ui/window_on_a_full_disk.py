"""The window recording when the disk fills (issue 16), run by
tests/integration/hostile/test_full_disk.py inside a private mount namespace with ``--basetemp`` on
a small tmpfs, so this test's store is on a disk it can fill. Not collected on its own (its name is
not test_*.py): outside that namespace it would fill the machine's disk.

The storage monitor is given floors of zero: on a real workstation it stops the recording before
the disk is full; here the disk is far below its 5 GB floor, and what is tested is the write that
finds no room."""

from __future__ import annotations

import errno
import re
from pathlib import Path

from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.domain.storage import PressurePolicy
from labrig.storage import StorageMonitor
from labrig.store.models import Capture
from labrig.ui.app import Gui
from labrig.ui.capture.page import Phase
from tests.ui.capture_helpers import (
    MARKERS,
    fill_session,
    pick_device,
    shown_capture_page,
    start_recording,
)

NO_FLOORS = PressurePolicy(0, 0, 0, 0.0, 0.0, 0.0)


def _fill(disk_file: Path) -> None:
    """Write zeros into ``disk_file`` until its disk has no room left."""
    block = bytes(1 << 20)
    with disk_file.open("wb") as out:
        try:
            while True:
                out.write(block)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def test_a_disk_that_fills_while_the_window_records_says_so_and_keeps_the_segments(
    qtbot: QtBot, services: Services, ui: Gui, tmp_path: Path
) -> None:
    services.capture.monitor = StorageMonitor(services.store, NO_FLOORS)
    page = shown_capture_page(qtbot, ui)
    fill_session(qtbot, page, "S-016", "reach", "ana")
    pick_device(qtbot, page.picker, MARKERS)
    try:
        start_recording(qtbot, page)
    finally:
        print("at record:", page.message.text())
    # past the first 5 s segment, so one is closed when the disk fills
    qtbot.waitUntil(
        lambda: (status := page.recording_status) is not None and status.frames > 170,
        timeout=20_000,
    )

    _fill(tmp_path / "filler")
    qtbot.waitUntil(lambda: page.phase is Phase.READY, timeout=30_000)

    said = page.message.text()
    print("window said:", said)
    assert "the disk is full: recording stopped" in said, said
    assert re.search(r"The [1-9]\d* frames of its [1-9]\d* closed segments are kept", said), said
    assert "try again. Nothing was deleted: Labrig recovers it at its next start" in said, said
    assert page.attempts.rowCount() == 0
    with services.store.read() as session:
        assert not session.scalars(select(Capture).where(Capture.state == "committed")).all()
