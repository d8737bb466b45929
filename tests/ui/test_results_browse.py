"""The Results and Review pages through a catalog larger than a page: 200 rows at a time with the
newer and older pages, and a search box that finds an attempt or a result by its subject code,
protocol, operator or id among them all (issue 21). The rows are real rows of a real SQLite
catalog."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.results.search import ATTEMPT_PAGE
from labrig.store import Store, utcnow
from labrig.store.models import AnalysisResultRecord, Attempt, CaptureSession
from labrig.ui.results.page import ResultsPage
from labrig.ui.review.page import ReviewPage
from labrig.ui.shell.bridge import EventBridge
from tests.ui.analysis_helpers import WAIT_MS

ATTEMPTS = 2 * ATTEMPT_PAGE + 50


def _catalog(store: Store, *, results: bool = False) -> list[tuple[str, str, str]]:
    """``ATTEMPTS`` attempts, one session each, a day apart over the last years, newest last
    (``results``: each with a published result): (attempt id, subject code, protocol) of each,
    oldest first."""
    start, made = utcnow() - timedelta(days=ATTEMPTS + 1), []
    with store.write() as session:
        for i in range(ATTEMPTS):
            session_id, attempt_id = str(uuid.uuid4()), str(uuid.uuid4())
            subject, protocol = f"S{i % 90:04d}", ("gait", "reach")[i % 2]
            when = start + timedelta(days=i)
            session.add(
                CaptureSession(
                    id=session_id,
                    subject_code=subject,
                    protocol=protocol,
                    operator=f"tech{i % 4}",
                    created_at=when,
                )
            )
            session.flush()
            session.add(Attempt(id=attempt_id, session_id=session_id, number=1, created_at=when))
            session.flush()
            if results:
                session.add(
                    AnalysisResultRecord(
                        id=str(uuid.uuid4()),
                        attempt_id=attempt_id,
                        status="published",
                        degraded=False,
                        reasons="[]",
                        document=json.dumps({"schema": "labrig.result/1"}),
                        digest="0" * 64,
                        created_at=when + timedelta(hours=1),
                    )
                )
            made.append((attempt_id, subject, protocol))
    return made


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[ResultsPage]:
    page = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
    qtbot.addWidget(page)
    page.resize(1280, 800)
    yield page
    page.shut_down(5000)


def _listed(page: ResultsPage | ReviewPage) -> list[str]:
    return [row.attempt_id for row in page.model.rows]


def click_header(qtbot: QtBot, page: ResultsPage, column: int) -> None:
    """A click on the middle of ``column``'s header, as a user makes it."""
    header = page.table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(
        header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2)
    )


def _read(qtbot: QtBot, page: ResultsPage | ReviewPage, status: str) -> None:
    try:
        qtbot.waitUntil(
            lambda: not page.list_busy and page.list_status.text() == status, timeout=WAIT_MS
        )
    except qtbot.TimeoutError:
        assert page.list_status.text() == status  # says what it shows instead
        raise


def test_the_whole_catalog_is_paged_newest_first(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    made = [a for a, _, _ in reversed(_catalog(services.store))]  # newest first
    page.show()
    qtbot.waitExposed(page)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")
    assert _listed(page) == made[:ATTEMPT_PAGE]
    assert not page.browse.newer.isEnabled() and page.browse.older.isEnabled()

    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS}, newest first.")
    assert _listed(page) == made[ATTEMPT_PAGE : 2 * ATTEMPT_PAGE]
    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 401–{ATTEMPTS} of {ATTEMPTS}, newest first.")
    assert _listed(page) == made[2 * ATTEMPT_PAGE :]
    assert page.browse.newer.isEnabled() and not page.browse.older.isEnabled()

    qtbot.mouseClick(page.browse.newer, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS}, newest first.")
    assert page.browse.newer.isEnabled() and page.browse.older.isEnabled()


def test_an_old_attempt_is_found_by_its_subject_code_protocol_or_id(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    made = _catalog(services.store)
    page.show()
    qtbot.waitExposed(page)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")
    oldest, subject, _ = made[0]  # on the last page, more than a year ago
    assert oldest not in _listed(page)

    qtbot.keyClicks(page.browse.search, subject.lower())  # any letter case
    of_subject = [a for a, s, _ in reversed(made) if s == subject]
    _read(qtbot, page, f"{len(of_subject)} attempts found for '{subject.lower()}', newest first.")
    assert _listed(page) == of_subject and of_subject[-1] == oldest

    page.browse.search.clear()
    qtbot.keyClicks(page.browse.search, oldest[:8])
    qtbot.keyClick(page.browse.search, Qt.Key.Key_Return)  # at once, without the pause
    _read(qtbot, page, f"1 attempt found for '{oldest[:8]}', newest first.")
    assert _listed(page) == [oldest]

    page.browse.search.clear()
    qtbot.keyClicks(page.browse.search, "Reach")
    reach = [a for a, _, p in reversed(made) if p == "reach"]
    _read(
        qtbot,
        page,
        f"{len(reach)} attempts found for 'Reach', 1–{ATTEMPT_PAGE} shown, newest first.",
    )
    assert _listed(page) == reach[:ATTEMPT_PAGE]
    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(
        qtbot,
        page,
        f"{len(reach)} attempts found for 'Reach', 201–{len(reach)} shown, newest first.",
    )
    assert _listed(page) == reach[ATTEMPT_PAGE:]

    page.browse.search.clear()
    qtbot.keyClicks(page.browse.search, "nobody%")  # % is taken literally
    _read(qtbot, page, "Nothing found for 'nobody%'.")
    assert _listed(page) == []

    page.browse.search.clear()  # back to every attempt, at the first page
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")


def test_the_review_page_pages_and_searches_every_published_result(
    qtbot: QtBot, services: Services, bridge: EventBridge
) -> None:
    made = _catalog(services.store, results=True)
    newest_first = [a for a, _, _ in reversed(made)]
    page = ReviewPage(services.governance.reviewed, bridge)
    qtbot.addWidget(page)
    page.resize(1280, 800)
    page.show()
    qtbot.waitExposed(page)
    try:
        _read(qtbot, page, f"Published results 1–200 of {ATTEMPTS}, newest first.")
        assert _listed(page) == newest_first[:ATTEMPT_PAGE]
        qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
        # no second turn before the page is read: a second click would skip it
        assert not page.browse.older.isEnabled() and not page.browse.newer.isEnabled()
        _read(qtbot, page, f"Published results 201–400 of {ATTEMPTS}, newest first.")
        assert _listed(page) == newest_first[ATTEMPT_PAGE : 2 * ATTEMPT_PAGE]

        oldest, subject, _ = made[0]
        qtbot.keyClicks(page.browse.search, subject)
        qtbot.keyClick(page.browse.search, Qt.Key.Key_Return)
        of_subject = [a for a, s, _ in reversed(made) if s == subject]
        said = f"{len(of_subject)} published results found for '{subject}', newest first."
        _read(qtbot, page, said)  # from the first page again
        assert _listed(page) == of_subject and of_subject[-1] == oldest

        # a period: the results made in the last 7 days (an hour after their attempts)
        page.browse.search.clear()
        page.browse.period.setCurrentIndex(page.browse.period.findText("Last 7 days"))
        _read(qtbot, page, "6 published results (last 7 days), newest first.")
        assert _listed(page) == newest_first[:6]
    finally:
        page.shut_down(5000)


def test_a_period_keeps_the_attempts_made_in_it_with_or_without_a_search(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    made = _catalog(services.store)  # the newest made two days ago, one a day before each
    newest_first = [a for a, _, _ in reversed(made)]
    page.show()
    qtbot.waitExposed(page)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")

    page.browse.period.setCurrentIndex(page.browse.period.findText("Last 7 days"))
    _read(qtbot, page, "5 attempts (last 7 days), newest first.")  # 2 to 6 days ago
    assert _listed(page) == newest_first[:5]
    page.browse.period.setCurrentIndex(page.browse.period.findText("Last 30 days"))
    _read(qtbot, page, "28 attempts (last 30 days), newest first.")
    subject = made[-3][1]
    qtbot.keyClicks(page.browse.search, subject)
    qtbot.keyClick(page.browse.search, Qt.Key.Key_Return)
    _read(qtbot, page, f"1 attempt found for '{subject}' (last 30 days), newest first.")
    assert _listed(page) == [made[-3][0]]  # its older attempts are outside the period

    page.browse.search.clear()
    page.browse.period.setCurrentIndex(page.browse.period.findText("Today"))
    _read(qtbot, page, "No attempts made today.")
    assert _listed(page) == [] and not page.browse.older.isEnabled()
    page.browse.period.setCurrentIndex(page.browse.period.findText("Any time"))
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")


def test_a_filter_or_an_order_chosen_on_a_later_page_shows_the_first_page(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    made = [a for a, _, _ in _catalog(services.store)]  # oldest first, every one pending
    page.show()
    qtbot.waitExposed(page)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")
    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS}, newest first.")

    page.filters.status_box.setCurrentIndex(page.filters.status_box.findText("Pending"))
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")
    assert _listed(page) == made[::-1][:ATTEMPT_PAGE]
    assert not page.browse.newer.isEnabled() and page.browse.older.isEnabled()

    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS}, newest first.")
    click_header(qtbot, page, page.model.columns.index("Recorded"))  # oldest first
    # until the first page in the new order is shown, its older page cannot be asked for (the
    # shown page's last row stands in the old order)
    assert not page.browse.older.isEnabled() and not page.browse.newer.isEnabled()
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, oldest first.")
    assert _listed(page) == made[:ATTEMPT_PAGE]


def test_an_older_page_keeps_its_rows_while_new_attempts_arrive(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    """An older page is read after the last row of the page before it, not past a count of rows:
    an attempt recorded meanwhile joins the first page and leaves the shown one as it was."""
    made = [a for a, _, _ in reversed(_catalog(services.store))]  # newest first
    page.show()
    qtbot.waitExposed(page)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS}, newest first.")
    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS}, newest first.")
    assert page.browse.after is not None

    with services.store.write() as session:
        now = utcnow()
        session.add(
            CaptureSession(
                id="new-session",
                subject_code="S9999",
                protocol="gait",
                operator="ada",
                created_at=now,
            )
        )
        session.flush()
        session.add(Attempt(id="new-attempt", session_id="new-session", number=1, created_at=now))
    page.refresh()
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS + 1}, newest first.")
    assert _listed(page) == made[ATTEMPT_PAGE : 2 * ATTEMPT_PAGE]

    qtbot.mouseClick(page.browse.older, Qt.MouseButton.LeftButton)
    # the last page: its rows are the last of the count, whatever was made since
    _read(qtbot, page, f"Attempts 402–{ATTEMPTS + 1} of {ATTEMPTS + 1}, newest first.")
    assert _listed(page) == made[2 * ATTEMPT_PAGE :]
    assert not page.browse.older.isEnabled()
    qtbot.mouseClick(page.browse.newer, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 201–400 of {ATTEMPTS + 1}, newest first.")
    assert _listed(page) == made[ATTEMPT_PAGE : 2 * ATTEMPT_PAGE]
    qtbot.mouseClick(page.browse.newer, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"Attempts 1–200 of {ATTEMPTS + 1}, newest first.")
    assert _listed(page) == ["new-attempt", *made[: ATTEMPT_PAGE - 1]]
    assert page.browse.after is None
