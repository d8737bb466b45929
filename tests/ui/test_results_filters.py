"""The Results list sorted by a click on a column's header (again: reversed) and narrowed by its
result, review and rig-or-device lists (issue 21), on a real SQLite catalog: every list shown is
the catalog's attempts sorted or filtered by hand."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services
from labrig.store import Store
from labrig.store.models import Attempt, CaptureSession
from labrig.ui.results.page import ResultsPage
from labrig.ui.shell.bridge import EventBridge
from tests.integration.review.test_attempt_sorts import DEVICES, _built
from tests.ui.test_results_browse import _listed, _read, click_header

Facts = dict[str, dict[str, Any]]

#: each column's key, as the list sorts it: ties by date, then id, in the same direction
KEYS: dict[str, Callable[[dict[str, Any]], tuple[Any, ...]]] = {
    "Subject": lambda f: (f["subject"], f["session_id"], f["attempt_made"]),
    "Attempt": lambda f: (f["number"], f["attempt_made"]),
    "Result": lambda f: (f["result"], f["attempt_made"]),
    "Protocol": lambda f: (f["protocol"], f["session_id"], f["attempt_made"]),
    "Recorded": lambda f: (f["attempt_made"],),
}
#: what the line under the list says of each order: (first click, second click)
ORDERS = {
    "Subject": ("by subject, A to Z", "by subject, Z to A"),
    "Attempt": ("by attempt number, lowest first", "by attempt number, highest first"),
    "Result": (
        "by result: blocked, degraded, pending, published",
        "by result: published, pending, degraded, blocked",
    ),
    "Protocol": ("by protocol, A to Z", "by protocol, Z to A"),
    "Recorded": ("newest first", "oldest first"),
}


def _catalog(store: Store) -> Facts:
    """The integration tests' catalog (36 attempts with results of every status, some revised,
    every 2nd of the rig 'bench' with cam-a, the others of cam-b), and a 2nd and 3rd attempt in
    eight of its sessions with no result yet, of no device: each attempt's facts by id."""
    facts = _built(store)
    for f in facts.values():
        f["number"] = 1
    pending: Facts = {}
    with store.write() as session:
        for n, f in enumerate(sorted(facts.values(), key=lambda f: f["attempt_made"])[:8]):
            for number in (2, 3)[: 1 + n % 2]:
                attempt_id = str(uuid.uuid4())
                made = f["attempt_made"] + timedelta(minutes=10 * number)
                session.add(
                    Attempt(
                        id=attempt_id, session_id=f["session_id"], number=number, created_at=made
                    )
                )
                session.flush()
                pending[attempt_id] = f | {
                    "number": number,
                    "attempt_made": made,
                    "result": "pending",
                    "revised": False,
                    "signed_off": False,
                    "device": None,
                    "rig": None,
                }
    return facts | pending


def _sorted(facts: Facts, column: str, descending: bool) -> list[str]:
    return sorted(facts, key=lambda a: (*KEYS[column](facts[a]), a), reverse=descending)


def _newest_first(facts: Facts, keep: Callable[[dict[str, Any]], bool]) -> list[str]:
    return [a for a in _sorted(facts, "Recorded", True) if keep(facts[a])]


def _choose(box: QComboBox, words: str) -> None:
    at = box.findText(words)
    assert at >= 0, [box.itemText(i) for i in range(box.count())]
    box.setCurrentIndex(at)


def _counted(n: int) -> str:
    return f"{n} attempt{'' if n == 1 else 's'}"


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[ResultsPage]:
    page = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
    qtbot.addWidget(page)
    page.resize(1280, 800)
    page.show()
    qtbot.waitExposed(page)
    yield page
    page.shut_down(5000)


def test_a_click_on_a_column_s_header_sorts_the_list_by_it_and_a_second_reverses_it(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    facts = _catalog(services.store)
    every, header = _counted(len(facts)), page.table.horizontalHeader()
    page.refresh()
    _read(qtbot, page, f"{every}, newest first.")
    assert _listed(page) == _sorted(facts, "Recorded", True)
    recorded = page.model.columns.index("Recorded")
    assert header.sortIndicatorSection() == recorded
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder

    for column, name in enumerate(page.model.columns):
        # a column first clicked: A to Z, lowest first (dates: newest first), then reversed
        first = name == "Recorded"
        for words, descending in zip(ORDERS[name], (first, not first), strict=True):
            click_header(qtbot, page, column)
            _read(qtbot, page, f"{every}, {words}.")
            assert _listed(page) == _sorted(facts, name, descending), words
            assert header.sortIndicatorSection() == column
            assert header.sortIndicatorOrder() == (
                Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
            )


FILTERS: list[tuple[str, str, Callable[[dict[str, Any]], bool]]] = [
    ("status", "Published", lambda f: f["result"] == "published"),
    ("status", "Degraded", lambda f: f["result"] == "degraded"),
    ("status", "Blocked", lambda f: f["result"] == "blocked"),
    ("status", "Pending", lambda f: f["result"] == "pending"),
    ("review", "Revised", lambda f: f["revised"]),
    ("review", "Not reviewed", lambda f: not f["revised"]),
    ("review", "Signed off", lambda f: f["signed_off"]),
    ("source", "Rig bench", lambda f: f["rig"] == "bench"),
    ("source", f"Device {DEVICES[1]}", lambda f: f["device"] == DEVICES[1]),
]
ANY = {"status": "Any result", "review": "Any review", "source": "Any rig or device"}


def _box(page: ResultsPage, which: str) -> QComboBox:
    return {
        "status": page.filters.status_box,
        "review": page.filters.review_box,
        "source": page.filters.source_box,
    }[which]


def test_each_filter_narrows_the_list_to_the_attempts_it_names(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    facts = _catalog(services.store)
    page.refresh()
    _read(qtbot, page, f"{_counted(len(facts))}, newest first.")
    # the rigs, then the devices, the catalog knows
    offered = [page.filters.source_box.itemText(i) for i in range(page.filters.source_box.count())]
    assert offered == ["Any rig or device", "Rig bench", *(f"Device {d}" for d in DEVICES)]

    for which, words, keep in FILTERS:
        _choose(_box(page, which), words)
        expected = _newest_first(facts, keep)
        assert expected, words  # the catalog has some of each
        _read(qtbot, page, f"{_counted(len(expected))}, newest first.")
        assert _listed(page) == expected, words
        _choose(_box(page, which), ANY[which])
        _read(qtbot, page, f"{_counted(len(facts))}, newest first.")

    # two at once: the attempts both keep
    _choose(page.filters.status_box, "Published")
    _choose(page.filters.source_box, f"Device {DEVICES[0]}")
    # a device's id is longer than the box shows: its tip names it whole
    assert page.filters.source_box.toolTip() == f"Only the attempts of the device {DEVICES[0]}"
    expected = _newest_first(
        facts, lambda f: f["result"] == "published" and f["device"] == DEVICES[0]
    )
    _read(qtbot, page, f"{_counted(len(expected))}, newest first.")
    assert _listed(page) == expected
    _choose(page.filters.status_box, "Pending")  # none of the pending attempts is the rig's
    _choose(page.filters.source_box, "Rig bench")
    assert page.filters.source_box.toolTip() == "Only the attempts of the rig bench"
    _read(qtbot, page, "No attempts match these filters: choose Any in a list to widen them.")
    assert _listed(page) == [] and not page.browse.older.isEnabled()


def test_a_session_chosen_among_every_session_lists_only_its_attempts(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    facts = _catalog(services.store)
    with services.store.read() as session:
        made = {s.id: s for s in session.scalars(select(CaptureSession))}
    newest = sorted(made.values(), key=lambda s: (s.created_at, s.id), reverse=True)
    page.refresh()
    _read(qtbot, page, f"{_counted(len(facts))}, newest first.")

    qtbot.mouseClick(page.filters.sessions_button, Qt.MouseButton.LeftButton)
    dialog = page.sessions_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.reading and len(dialog.model.rows) == len(made))
    # every session, newest first, each with its attempts counted
    assert [r.id for r in dialog.model.rows] == [s.id for s in newest]
    for row in dialog.model.rows:
        assert row.attempts == sum(f["session_id"] == row.id for f in facts.values())
    assert dialog.status.text() == f"{len(made)} sessions, newest first."

    # found by the start of its subject code, then chosen with a double-click
    wanted = max(newest, key=lambda s: sum(f["session_id"] == s.id for f in facts.values()))
    same_subject = [s.id for s in newest if s.subject_code.startswith(wanted.subject_code)]
    qtbot.keyClicks(dialog.browse.search, wanted.subject_code)
    qtbot.waitUntil(
        lambda: not dialog.reading and [r.id for r in dialog.model.rows] == same_subject
    )
    row = [r.id for r in dialog.model.rows].index(wanted.id)
    index = dialog.model.index(row, 0)
    rect = dialog.table.visualRect(index)
    qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: not dialog.isVisible())
    own = _newest_first(facts, lambda f: f["session_id"] == wanted.id)
    _read(qtbot, page, f"{_counted(len(own))}, newest first.")
    assert _listed(page) == own
    label = page.filters.session_label
    assert label.isVisible() and label.text().startswith(f"Session {wanted.subject_code} · ")

    # with a filter too, then every session's attempts again
    _choose(page.filters.status_box, "Pending")
    pending = [a for a in own if facts[a]["result"] == "pending"]
    said = (
        f"{_counted(len(pending))}, newest first."
        if pending
        else ("No attempts match these filters: choose Any in a list to widen them.")
    )
    _read(qtbot, page, said)
    assert _listed(page) == pending
    _choose(page.filters.status_box, "Any result")
    qtbot.mouseClick(page.filters.all_sessions, Qt.MouseButton.LeftButton)
    _read(qtbot, page, f"{_counted(len(facts))}, newest first.")
    assert not label.isVisible() and page.filters.session is None
