"""The Queue screen pages through the whole queue: 200 jobs a page, newest first, the newer and
older pages, which jobs to show, and a search by the start of a job's or an attempt's id, all by
clicking and typing in the real window."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from sqlalchemy import text, update

from labrig.bootstrap import Services
from labrig.domain.jobs import JobState
from labrig.jobs.queue import JobSpec
from labrig.store import utcnow
from labrig.store.models import Job
from labrig.store.search import COUNT_AHEAD
from labrig.ui.app import Gui
from labrig.ui.queue.page import JOB_PAGE, QueuePage
from tests.ui.jobs_helpers import SELFTEST, SHORT, WAIT_MS, shown_queue_page

S = JobState
LEFT = Qt.MouseButton.LeftButton
JOBS = 450


def _ids(page: QueuePage) -> list[str]:
    return [job.id for job in page.page]


def test_the_queue_is_paged_filtered_and_searched_by_clicking_and_typing(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    views = services.queue.enqueue_many(
        [JobSpec(SELFTEST, [f"{i:064x}"], SHORT) for i in range(JOBS)]
    )
    failed = [views[i].id for i in (3, 140, 333)]
    with services.store.write() as session:
        session.execute(
            text("UPDATE jobs SET state = 'PermanentFailure' WHERE id IN (:a, :b, :c)"),
            dict(zip("abc", failed, strict=True)),
        )
    newest = [job.id for job in services.queue.jobs(newest_first=True)]
    page = shown_queue_page(qtbot, ui)

    assert _ids(page) == newest[:JOB_PAGE] and page.model.rowCount() == JOB_PAGE
    assert page.list_status.text() == f"Jobs 1–200 of {JOBS}, newest first."
    assert not page.browse.newer.isEnabled() and page.browse.older.isEnabled()
    qtbot.mouseClick(page.browse.older, LEFT)
    assert _ids(page) == newest[JOB_PAGE : 2 * JOB_PAGE]
    qtbot.mouseClick(page.browse.older, LEFT)
    assert _ids(page) == newest[2 * JOB_PAGE :]
    assert page.list_status.text() == f"Jobs 401–450 of {JOBS}, newest first."
    assert page.browse.newer.isEnabled() and not page.browse.older.isEnabled()

    # which jobs: the ones that need an operator, from the first page again
    page.shown.setCurrentIndex(page.shown.findText("Needs an operator (failed or blocked)"))
    assert sorted(_ids(page)) == sorted(failed)
    assert page.list_status.text() == "3 jobs, newest first."
    assert {page.model.job_at(r).state for r in range(3)} == {S.PERMANENT_FAILURE}  # type: ignore[union-attr]

    # a search, taken when typing pauses: the start of a job's id, in any letter case
    page.shown.setCurrentIndex(0)
    qtbot.keyClicks(page.browse.search, failed[1][:8].upper())
    qtbot.waitUntil(lambda: _ids(page) == [failed[1]], timeout=WAIT_MS)
    assert page.list_status.text() == f"1 job found for '{failed[1][:8].upper()}', newest first."
    page.browse.search.clear()
    qtbot.keyClicks(page.browse.search, "S0001")  # not an id: nothing
    qtbot.waitUntil(
        lambda: page.list_status.text() == "Nothing found for 'S0001'.", timeout=WAIT_MS
    )
    assert page.model.rowCount() == 0 and not page.empty_note.isVisible()

    # a job enqueued meanwhile: the queue's change reads the page again
    page.browse.search.clear()
    qtbot.waitUntil(lambda: page.model.rowCount() == JOB_PAGE, timeout=WAIT_MS)
    services.start()
    new = services.queue.enqueue(SELFTEST, ["f" * 64], SHORT)
    qtbot.waitUntil(lambda: _ids(page)[:1] == [new.id], timeout=WAIT_MS)
    assert page.list_status.text() == f"Jobs 1–200 of {JOBS + 1}, newest first."


def test_an_empty_group_says_so_and_the_empty_queue_says_how_jobs_come(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    page = shown_queue_page(qtbot, ui)
    assert page.model.rowCount() == 0 and page.empty_note.isVisible()
    services.queue.enqueue(SELFTEST, ["a" * 64], SHORT)
    page.shown.setCurrentIndex(page.shown.findText("Needs an operator (failed or blocked)"))
    assert page.list_status.text() == "No jobs: needs an operator (failed or blocked)."
    assert not page.empty_note.isVisible()
    page.shown.setCurrentIndex(page.shown.findText("Waiting or running"))
    assert page.model.rowCount() == 1 and page.list_status.text() == "1 job, newest first."


def test_a_period_keeps_the_jobs_created_in_it(qtbot: QtBot, services: Services, ui: Gui) -> None:
    views = services.queue.enqueue_many([JobSpec(SELFTEST, [f"{i:064x}"], SHORT) for i in range(6)])
    old = {views[0].id, views[1].id}
    with services.store.write() as session:
        session.execute(
            update(Job).where(Job.id.in_(old)).values(created_at=utcnow() - timedelta(days=10))
        )
    page = shown_queue_page(qtbot, ui)
    assert page.list_status.text() == "6 jobs, newest first."
    page.browse.period.setCurrentIndex(page.browse.period.findText("Last 7 days"))
    assert set(_ids(page)) == {v.id for v in views} - old
    assert page.list_status.text() == "4 jobs (last 7 days), newest first."
    page.browse.period.setCurrentIndex(page.browse.period.findText("Last 30 days"))
    assert len(_ids(page)) == 6
    page.shown.setCurrentIndex(page.shown.findText("Needs an operator (failed or blocked)"))
    assert (
        page.list_status.text() == "No jobs: needs an operator (failed or blocked), last 30 days."
    )
    assert not page.empty_note.isVisible()


def test_a_long_history_is_counted_only_so_far_and_says_there_are_more(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    many = COUNT_AHEAD + 150
    services.queue.enqueue_many([JobSpec(SELFTEST, [f"{i:064x}"], SHORT) for i in range(many)])
    page = shown_queue_page(qtbot, ui)
    assert page.model.rowCount() == JOB_PAGE
    assert page.list_status.text() == f"Jobs 1–200 of more than {COUNT_AHEAD:,}, newest first."
    assert page.browse.older.isEnabled()
    qtbot.mouseClick(page.browse.older, LEFT)  # the count goes as far past the new page's start
    assert page.list_status.text() == f"Jobs 201–400 of {COUNT_AHEAD + 150:,}, newest first."
