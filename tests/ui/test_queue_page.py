"""The Queue page: jobs with their states, and Cancel, Reprocess and Retry acting
through the real queue."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.domain.jobs import JobState
from labrig.ui.app import Gui
from labrig.ui.queue.model import COLUMNS
from labrig.ui.queue.page import QueuePage
from tests.support.analysis_runs import new_session, record, request_analysis, run_analysis
from tests.ui.jobs_helpers import (
    LONG,
    SELFTEST,
    SHORT,
    WAIT_MS,
    click_row,
    shown_queue_page,
    state_shown,
)

S = JobState
LEFT = Qt.MouseButton.LeftButton


def _buttons(page: QueuePage) -> tuple[bool, bool, bool]:
    return (
        page.retry_button.isEnabled(),
        page.cancel_button.isEnabled(),
        page.reprocess_button.isEnabled(),
    )


def test_enqueued_jobs_appear_with_the_status_bar_counting_them(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    assert page.model.rowCount() == 0
    assert _buttons(page) == (False, False, False)  # nothing selected
    services.start()

    jobs = [services.queue.enqueue(SELFTEST, [f"{i:064x}"], SHORT) for i in range(2)]

    qtbot.waitUntil(lambda: all(state_shown(page, j.id) == "Ready" for j in jobs), timeout=WAIT_MS)
    assert page.model.row_of(jobs[1].id) == 0  # newest first
    assert not page.table.grab().isNull()  # the progress column paints as bars
    status = ui.window.findChild(QLabel, "queueStatus")
    qtbot.waitUntil(
        lambda: status.text() == "Queue: 2 ready · 0 running · 0 failed", timeout=WAIT_MS
    )


def test_cancel_stops_a_running_job_and_it_ends_cancelled(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    services.start()
    job = services.queue.enqueue(SELFTEST, config=LONG)
    ui.executor.start()
    qtbot.waitUntil(lambda: state_shown(page, job.id) == "Running", timeout=WAIT_MS)
    click_row(qtbot, page, job.id)
    # a running job is cancelled before it is reprocessed
    assert _buttons(page) == (False, True, False)

    with qtbot.waitSignal(ui.executor.signals.jobFinished, timeout=WAIT_MS) as finished:
        qtbot.mouseClick(page.cancel_button, LEFT)
        assert state_shown(page, job.id) == "Running (cancel requested)"
        assert "stops at its next check" in page.action_status.text()
        assert not page.cancel_button.isEnabled()

    assert finished.args[0].id == job.id and finished.args[0].state is S.CANCELLED
    assert services.queue.get(job.id).state is S.CANCELLED
    qtbot.waitUntil(lambda: state_shown(page, job.id) == "Cancelled", timeout=WAIT_MS)
    # kept across refreshes
    assert page.selected_job() is not None and page.selected_job().id == job.id
    assert _buttons(page) == (True, False, True)


def test_reprocess_creates_a_new_job_that_supersedes_the_selected_one(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    services.start()
    old = services.queue.enqueue(SELFTEST, config=SHORT)  # no worker yet: it stays Ready
    qtbot.waitUntil(lambda: state_shown(page, old.id) == "Ready", timeout=WAIT_MS)
    click_row(qtbot, page, old.id)
    assert _buttons(page) == (False, True, True)

    qtbot.mouseClick(page.reprocess_button, LEFT)

    new = page.selected_job()  # the page follows the new job
    assert new is not None and new.id != old.id
    assert new.supersedes_job_id == old.id and new.state is S.READY
    assert services.queue.get(old.id).state is S.SUPERSEDED
    assert state_shown(page, old.id) == "Replaced by a reprocess"
    assert page.action_status.text() == f"Reprocessing job {old.id[:8]} as new job {new.id[:8]}."
    with qtbot.waitSignal(ui.executor.signals.jobFinished, timeout=WAIT_MS) as finished:
        ui.executor.start()
    assert finished.args[0].id == new.id and finished.args[0].state is S.SUCCEEDED
    qtbot.waitUntil(lambda: state_shown(page, new.id) == "Done", timeout=WAIT_MS)
    assert services.queue.get(old.id).state is S.SUPERSEDED


def test_retry_runs_a_cancelled_job_again_as_a_new_job(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    services.start()
    old = services.queue.enqueue(SELFTEST, config=SHORT)
    qtbot.waitUntil(lambda: state_shown(page, old.id) == "Ready", timeout=WAIT_MS)
    click_row(qtbot, page, old.id)
    qtbot.mouseClick(page.cancel_button, LEFT)  # no worker holds it: Cancelled at once
    assert state_shown(page, old.id) == "Cancelled"
    assert page.action_status.text() == f"Job {old.id[:8]} cancelled."
    assert _buttons(page) == (True, False, True)
    assert "reprocess" in page.retry_button.toolTip()

    qtbot.mouseClick(page.retry_button, LEFT)

    new = page.selected_job()
    assert new is not None and new.supersedes_job_id == old.id
    with qtbot.waitSignal(ui.executor.signals.jobFinished, timeout=WAIT_MS) as finished:
        ui.executor.start()
    assert finished.args[0].id == new.id and finished.args[0].state is S.SUCCEEDED
    assert services.queue.get(old.id).state is S.CANCELLED  # a terminal job never changes


def test_a_refused_action_is_explained_on_the_page(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    job = services.queue.enqueue(SELFTEST, config=SHORT)
    ui.monitor.refresh_now()
    click_row(qtbot, page, job.id)
    services.queue.cancel(job.id)  # elsewhere (the CLI), before this page heard of it

    qtbot.mouseClick(page.cancel_button, LEFT)

    assert page.action_status.text().startswith("LABRIG_TERMINAL_STATE:")
    assert state_shown(page, job.id) == "Cancelled"


def test_an_empty_queue_says_when_jobs_appear(qtbot: QtBot, ui: Gui) -> None:
    page = shown_queue_page(qtbot, ui)
    assert page.model.rowCount() == 0
    assert page.empty_note.isVisible()
    assert "Jobs appear here when an attempt is recorded" in page.empty_note.text()


def test_rows_name_the_subject_and_attempt_in_words_a_technician_reads(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    services.start()
    session_id = new_session(services, "DEMO-001")
    for _ in range(2):  # the second attempt's jobs are the ones looked at
        attempt_id = request_analysis(
            services, session_id, record(services, session_id, seconds=1.0)
        )
    kinematics = next(
        j
        for j in services.queue.jobs()
        if j.attempt_id == attempt_id and j.stage_id == "kinematics"
    )
    qtbot.waitUntil(lambda: page.model.row_of(kinematics.id) is not None, timeout=WAIT_MS)
    assert not page.empty_note.isVisible()
    assert _cell(page, kinematics.id, "Attempt") == "DEMO-001 · attempt 2"
    # no calibration: kinematics ends degraded, said in words, with the internal name as a tip
    run_analysis(services)
    qtbot.waitUntil(lambda: state_shown(page, kinematics.id) == "Done, degraded", timeout=WAIT_MS)
    row = page.model.row_of(kinematics.id)
    assert row is not None
    state = page.model.index(row, COLUMNS.index("State"))
    assert state.data(Qt.ItemDataRole.ToolTipRole) == "SucceededDegraded"
    # the queue's tries of the job, never read as the subject's recording attempts
    assert "Attempts" not in COLUMNS and _cell(page, kinematics.id, "Tries") == "1 of 3"


def _cell(page: QueuePage, job_id: str, column: str) -> str:
    row = page.model.row_of(job_id)
    assert row is not None
    return str(page.model.index(row, COLUMNS.index(column)).data())
