"""The Review page's test bench: a template store with a published result (recorded and analysed
once per run), each test's own copy of it, services acting as named users, and the clicks every
Review test makes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot
from sqlalchemy import func, select

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.store import Store, open_store
from labrig.store.models import AuditEntry, OutboxEvent, ResultRevision
from labrig.ui.results.page import ResultsPage
from labrig.ui.review.page import ReviewPage
from labrig.ui.shell.bridge import EventBridge
from tests.support.results import TemplateResults, copy_store, make_results
from tests.ui.analysis_helpers import click_row
from tests.ui.jobs_helpers import TEST_LEASE

LEFT = Qt.MouseButton.LeftButton
WAIT_MS = 10_000
FIELD = "track:0.peak_speed"


@pytest.fixture(scope="session")
def review_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("review-ui-template") / "store"
    return root, make_results(root)


def as_user(store: Store, user: str) -> AccessControl:
    return AccessControl(store, user=lambda: user, host=lambda: "bench-1")


@dataclass
class Rig:
    store: Store
    published_id: str

    def services_as(self, user: str) -> Services:
        return bootstrap(
            store=self.store, poll_seconds=0.05, lease=TEST_LEASE, access=as_user(self.store, user)
        )


@pytest.fixture
def rig(review_template: tuple[Path, TemplateResults], tmp_path: Path) -> Iterator[Rig]:
    store = open_store(copy_store(review_template[0], tmp_path / "store"))
    yield Rig(store, review_template[1].published_id)
    store.close()


class Bench:
    """Services acting as one user each, with a bridge attached and the dispatcher running; pages
    built on them are shut down, and the threads stopped, at the end of the test."""

    def __init__(self, qtbot: QtBot, rig: Rig) -> None:
        self.qtbot, self.rig = qtbot, rig
        self.opened: list[tuple[Services, EventBridge]] = []
        self.pages: list[ReviewPage | ResultsPage] = []

    def open_as(self, user: str) -> tuple[Services, EventBridge]:
        services = self.rig.services_as(user)
        bridge = EventBridge()
        bridge.attach(services)
        services.start()
        self.opened.append((services, bridge))
        return services, bridge

    def show(self, page: ReviewPage | ResultsPage) -> None:
        self.qtbot.addWidget(page)
        self.pages.append(page)
        page.resize(1400, 900)
        page.show()
        self.qtbot.waitExposed(page)

    def review_page(self, user: str) -> tuple[ReviewPage, Services]:
        services, bridge = self.open_as(user)
        page = ReviewPage(services.governance.reviewed, bridge)
        self.show(page)
        self.qtbot.waitUntil(
            lambda: page.model.rowCount() == 1 and page.reviewer is not None, timeout=WAIT_MS
        )
        return page, services

    def results_page(self, user: str) -> tuple[ResultsPage, Services]:
        """The Results page as ``user``, showing the published result's attempt."""
        services, bridge = self.open_as(user)
        page = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
        self.show(page)
        attempt_id = services.governance.revisions.show(self.rig.published_id).attempt_id
        self.qtbot.waitUntil(lambda: page.model.row_of(attempt_id) is not None, timeout=WAIT_MS)
        click_row(self.qtbot, page.table, page.model.row_of(attempt_id) or 0)
        return page, services

    def close(self) -> None:
        for page in self.pages:
            page.shut_down(5000)
        for services, bridge in self.opened:
            bridge.detach(services)
            services.dispatcher_thread.stop()
        self.pages, self.opened = [], []  # closing again (the fixture's teardown) does nothing


@pytest.fixture
def bench(qtbot: QtBot, rig: Rig) -> Iterator[Bench]:
    made = Bench(qtbot, rig)
    yield made
    made.close()


def open_result(qtbot: QtBot, page: ReviewPage, result_id: str) -> None:
    row = page.model.row_of(result_id)
    assert row is not None, "the result is not listed"
    click_row(qtbot, page.table, row)
    qtbot.waitUntil(
        lambda: page.shown is not None and page.shown.result_id == result_id, timeout=WAIT_MS
    )


def open_tab(qtbot: QtBot, page: ReviewPage, tab: QWidget) -> None:
    """Click the tab of ``tab`` under the video: correcting, revising or signing off on the left;
    the speed, the values or the history on the right."""
    tabs = page.action_tabs if page.action_tabs.indexOf(tab) >= 0 else page.evidence_tabs
    bar = tabs.tabBar()
    qtbot.mouseClick(bar, LEFT, pos=bar.tabRect(tabs.indexOf(tab)).center())
    assert tabs.currentWidget() is tab


def counts(store: Store) -> tuple[int, ...]:
    with store.read() as session:
        return tuple(
            session.scalar(select(func.count()).select_from(m)) or 0
            for m in (ResultRevision, OutboxEvent, AuditEntry)
        )


def staff(store: Store) -> None:
    admin = as_user(store, "ada")
    admin.set_role("ada", "admin", "lab manager")
    admin.set_role("rita", "reviewer", "senior analyst")
    admin.set_role("tom", "technician", "bench technician")
