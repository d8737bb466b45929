"""Shared bits of the job tests: selftest configs and reading the Queue page the way a person
would."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from labrig.jobs.lease import LeaseTerms
from labrig.ui.app import Gui
from labrig.ui.queue.model import COLUMNS
from labrig.ui.queue.page import QueuePage

SELFTEST = "labrig.selftest"
SHORT = {"steps": 5, "step_seconds": 0.05}
LONG = {"steps": 400, "step_seconds": 0.05}  # 20 s: ended early by cancel or shutdown
STATE_COLUMN, ERROR_COLUMN = COLUMNS.index("State"), COLUMNS.index("Error")
# Workers renew (and so notice a cancel) at most every third of the lease: a
# 3 s lease makes a running job stop within about a second of a cancel.
TEST_LEASE = LeaseTerms(seconds=3.0)
# The analysis stages report progress per frame, but can be silent for seconds on a busy machine:
# the first kinematics run imports scipy (2 s under load on its own). Under a 3 s lease the
# executor's next claim would reap the job from its own running worker (LABRIG_WORKER_LOST). Tests
# that run them keep the production lease.
ANALYSIS_LEASE = LeaseTerms()
WAIT_MS = 10_000


def shown_queue_page(qtbot: QtBot, gui: Gui) -> QueuePage:
    gui.window.show()
    qtbot.waitExposed(gui.window)
    gui.window.show_page("queue")
    page = gui.window.pages.currentWidget()
    assert isinstance(page, QueuePage)
    return page


def queue_page(gui: Gui) -> QueuePage:
    page = gui.window.page("queue")
    assert isinstance(page, QueuePage)
    return page


def state_shown(page: QueuePage, job_id: str) -> str | None:
    """The State cell of ``job_id``'s row, or None when the table has no such row."""
    row = page.model.row_of(job_id)
    return None if row is None else str(page.model.index(row, STATE_COLUMN).data())


def click_row(qtbot: QtBot, page: QueuePage, job_id: str) -> None:
    row = page.model.row_of(job_id)
    assert row is not None, f"the table does not show job {job_id}"
    rect = page.table.visualRect(page.model.index(row, 0))
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    selected = page.selected_job()
    assert selected is not None and selected.id == job_id
