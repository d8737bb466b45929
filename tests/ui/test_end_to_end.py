"""Issues 6 and 15, end to end by clicking, from an empty store to a millimetre result: a
technician opens a session on the virtual camera, holds the board up to it (the camera's scene
switch) and records it, lays it on the measurement plane and records that, calibrates from the two
on the Calibration screen, sees the Capture screen say results will be in mm, records two attempts;
the analysis runs and the results, in mm, are plotted; a reviewer revises a value, and both the
automatic and the revised value are on screen. Services are called only to set the roles up and to
check what was stored.

Roles are enforced (ada is admin): tom, a technician, does the capture; then rita, a reviewer, signs
in to the same workstation (the access service's user provider stands for the operating-system
login) and reviews.

The board recording is 330 frames (11 s of the 30 fps camera): a valid calibration needs the board's
corners to cover 40 % of the image and the virtual board wanders slowly, so 270 frames (9 s; every
10th frame, 27 views) is the shortest recording that validates (260 frames reach 39.6 %). Recordings
are stopped once they hold their frames, not after a time: a loaded machine records fewer frames a
second (the virtual camera hands every frame over late rather than skip it), and frame n always
shows the scene at n / 30 s. The board is recorded with the camera that records the attempts, so
the calibration is bound to ``virtual:markers`` in the attempts' mode and they are analysed in mm.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.calibration.views import Validity
from labrig.capture import SceneName
from labrig.domain.idempotency import sha256_hex
from labrig.domain.recordings import RecordingPurpose
from labrig.results.attempt_list import ResultStatus
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord
from labrig.ui.app import Gui, build_main_window
from labrig.ui.calibration.form import NO_PLANE
from labrig.ui.calibration.page import CalibrationPage
from labrig.ui.calibration.screen import CalibrationScreen
from labrig.ui.capture.page import CapturePage, Phase
from labrig.ui.common.result_view import METRIC_COLUMNS
from labrig.ui.results.page import ResultsPage
from labrig.ui.review.page import ReviewPage
from labrig.ui.review.widgets import AUTOMATIC_COLUMN, EFFECTIVE_COLUMN
from tests.ui.analysis_helpers import click_row, curves
from tests.ui.capture_helpers import (
    LEFT,
    MARKERS,
    choose,
    fill_session,
    pick_device,
    start_recording,
    wait_verified,
)
from tests.ui.jobs_helpers import ANALYSIS_LEASE

BOARD_FRAMES = 330  # 11 s of the camera
PLANE_FRAMES = 45  # 1.5 s: five views of the still board, every 10th frame
ATTEMPT_FRAMES = 45  # 1.5 s
WAIT_MS = 30_000
FIELD = "track:0.peak_speed"


class SignedIn:
    """Who is logged in to the workstation: changed when the reviewer takes over
    from the technician."""

    def __init__(self, user: str) -> None:
        self.user = user

    def __call__(self) -> str:
        return self.user


@pytest.fixture
def signed_in() -> SignedIn:
    return SignedIn("tom")


@pytest.fixture
def services(store: Store, signed_in: SignedIn) -> Iterator[Services]:
    admin = AccessControl(store, user=lambda: "ada", host=lambda: "bench-1")
    admin.set_role("ada", "admin", "lab manager")
    admin.set_role("tom", "technician", "bench technician")
    admin.set_role("rita", "reviewer", "senior analyst")
    built = bootstrap(
        store=store,
        poll_seconds=0.05,
        lease=ANALYSIS_LEASE,
        access=AccessControl(store, user=signed_in, host=lambda: "bench-1"),
    )
    yield built
    built.close()


@pytest.fixture
def gui(qtbot: QtBot, services: Services) -> Iterator[Gui]:
    """The window as ``build_main_window`` composes it."""
    built = build_main_window(services)
    qtbot.addWidget(built.window)
    yield built
    built.window.shut_down()
    built.executor.shutdown(5000)
    built.bridge.detach(services)


def _page(gui: Gui, key: str) -> QWidget:
    gui.window.show_page(key)
    return gui.window.pages.currentWidget()


def _record(qtbot: QtBot, page: CapturePage, scene: SceneName, frames: int, rows: int) -> None:
    """Switch the virtual camera to ``scene`` (which picks the recording's purpose: the board
    scenes are board and plane recordings, not analysed), record ``frames`` of it, stop, and wait
    for the row to be listed."""
    pick_device(qtbot, page.picker, MARKERS)
    wait_verified(qtbot, page.picker, MARKERS)
    choose(qtbot, page.setup.scene, scene)
    purpose = {"markers": "attempt", "board": "board", "plane": "plane"}[scene]
    assert page.setup.chosen_purpose() is RecordingPurpose(purpose)
    start_recording(qtbot, page)

    def recorded() -> bool:
        status = page.recording_status
        return status is not None and status.frames >= frames

    qtbot.waitUntil(recorded, timeout=WAIT_MS + frames * 100)  # allows for 10 frames a second
    qtbot.mouseClick(page.stop_button, LEFT)
    qtbot.waitUntil(
        lambda: page.attempts.rowCount() == rows and page.phase is Phase.READY, timeout=WAIT_MS
    )


def _calibrate(qtbot: QtBot, gui: Gui) -> CalibrationPage:
    """Calibrate from the board and plane recordings the form picks by itself, in the screen's
    one-camera mode (the mode it opens in)."""
    screen = _page(gui, "calibration")
    assert isinstance(screen, CalibrationScreen) and screen.modes.currentWidget() is screen.camera
    page = screen.camera
    qtbot.waitUntil(
        lambda: page.form.capture.count() == 1 and page.form.plane.count() == 2, timeout=WAIT_MS
    )
    board, plane = page.form.capture.currentData(), page.form.plane.currentData()
    assert board is not None and board.purpose == "board" and board.frames >= BOARD_FRAMES
    assert plane is not None and plane.purpose == "plane", "the plane recording is picked"
    # the defaults
    assert page.form.board.currentText() == "virtual-9x6-25" and page.form.every.value() == 10
    qtbot.mouseClick(page.form.button, LEFT)
    qtbot.waitUntil(lambda: page.detail.current is not None, timeout=WAIT_MS)
    detail = page.detail.current
    assert detail is not None and detail.summary.validity is Validity.IN_USE, (
        page.form.status.text()
    )
    assert detail.summary.has_plane, page.form.status.text()
    assert "outputs in mm" in page.form.status.text()
    assert f"Bound to {MARKERS}" in page.detail.binding.text()
    return page


def _plotted(qtbot: QtBot, page: ResultsPage, attempt_id: str) -> None:
    """Wait for the attempt's result to be published, click its row, see its curves."""

    def published() -> bool:
        summary = page.model.find(attempt_id)
        return summary is not None and summary.status in (
            ResultStatus.PUBLISHED,
            ResultStatus.DEGRADED,
        )

    qtbot.waitUntil(published, timeout=WAIT_MS)
    click_row(qtbot, page.table, page.model.row_of(attempt_id) or 0)
    qtbot.waitUntil(
        lambda: (
            page.detail.current is not None and page.detail.current.summary.attempt_id == attempt_id
        ),
        timeout=WAIT_MS,
    )
    assert len(curves(page.detail.plots)) == 3  # the three markers
    assert curves(page.detail.plots, "speed")


def _published(services: Services) -> dict[str, datetime]:
    """Every published result's id and the time it was published."""
    with services.store.read() as session:
        return dict(
            session.execute(
                select(AnalysisResultRecord.id, AnalysisResultRecord.created_at).where(  # type: ignore[arg-type]
                    AnalysisResultRecord.status == "published"
                )
            ).all()
        )


def _automatic_document(services: Services, attempt_id: str) -> tuple[str, bytes]:
    with services.store.read() as session:
        row = session.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
        ).one()
        return row.id, row.document.encode()


def test_session_calibration_two_attempts_results_and_a_reviewed_value_by_clicking(
    qtbot: QtBot, services: Services, gui: Gui, signed_in: SignedIn
) -> None:
    services.start()  # events reach the window through the bridge
    gui.window.resize(1400, 900)
    gui.window.show()
    qtbot.waitExposed(gui.window)

    # the technician: a session; the board held up and recorded, then laid on the plane
    capture = _page(gui, "capture")
    assert isinstance(capture, CapturePage)
    fill_session(qtbot, capture, "E2E-1", "reach", "tom")
    _record(qtbot, capture, "board", BOARD_FRAMES, rows=1)
    _record(qtbot, capture, "plane", PLANE_FRAMES, rows=2)
    assert [row.attempt_id for row in capture.attempts.rows] == [None, None], "not analysed"
    choose(qtbot, capture.setup.scene, "markers")
    qtbot.waitUntil(lambda: "results will be in pixels" in capture.setup.calibration.text())
    capture.setup.calibration.linkActivated.emit("calibration")  # "Calibrate…"
    assert getattr(gui.window.pages.currentWidget(), "camera", None) is _calibrate(qtbot, gui)

    # back on Capture, before Record: results will be in mm; then two attempts of the markers
    capture = _page(gui, "capture")
    assert isinstance(capture, CapturePage) and capture.session is not None
    qtbot.waitUntil(lambda: "results in mm" in capture.setup.calibration.text(), timeout=WAIT_MS)
    _record(qtbot, capture, "markers", ATTEMPT_FRAMES, rows=3)
    _record(qtbot, capture, "markers", ATTEMPT_FRAMES, rows=4)
    first, second = (row.attempt_id for row in capture.attempts.rows[2:])
    assert first is not None and second is not None
    screen = _page(gui, "calibration")
    assert isinstance(screen, CalibrationScreen)
    calibration = screen.camera
    qtbot.waitUntil(lambda: not calibration.busy, timeout=WAIT_MS)
    assert calibration.form.capture.count() == 1, "attempts are never offered as boards"
    assert calibration.form.plane.itemText(0) == NO_PLANE and calibration.form.plane.count() == 2

    # the analysis runs; both results are published and plotted
    gui.executor.start()
    results = _page(gui, "results")
    assert isinstance(results, ResultsPage)
    for attempt_id in (first, second):
        _plotted(qtbot, results, attempt_id)
    result_id, automatic_document = _automatic_document(services, second)
    for attempt_id in (first, second):
        document = json.loads(_automatic_document(services, attempt_id)[1])
        assert document["units"] == {"length": "mm", "time": "s"}, document["reasons"]
        # degraded only for frames a loaded machine dropped, never for the calibration
        assert all("frames were dropped" in reason for reason in document["reasons"])

    # the reviewer signs in and revises one value of the second attempt's result
    signed_in.user = "rita"
    review = _page(gui, "review")
    assert isinstance(review, ReviewPage)
    qtbot.waitUntil(
        lambda: review.reviewer is not None and review.reviewer.user == "rita", timeout=WAIT_MS
    )
    assert (
        review.user.text() == "Signed in as rita (reviewer role)."
        and review.form.permission.isHidden()
    )
    # newest first: by the time each result was published, which is the order the two analyses
    # happened to finish in (the second attempt's may finish first), not the order of the attempts
    published = _published(services)
    qtbot.waitUntil(
        lambda: {r.result_id for r in review.model.rows} == set(published), timeout=WAIT_MS
    )
    listed = [published[r.result_id] for r in review.model.rows]
    assert listed == sorted(listed, reverse=True), "the Review list is not newest first"
    row_of_result = review.model.row_of(result_id)
    assert row_of_result is not None
    click_row(qtbot, review.table, row_of_result)
    qtbot.waitUntil(
        lambda: review.shown is not None and review.shown.result_id == result_id, timeout=WAIT_MS
    )
    row = review.values.row_of(FIELD)
    assert row is not None
    automatic = review.values.item(row, AUTOMATIC_COLUMN).text()
    qtbot.mouseClick(
        review.values.viewport(),
        LEFT,
        pos=review.values.visualItemRect(review.values.item(row, 0)).center(),
    )
    assert review.form.field() == FIELD
    qtbot.keyClicks(review.form.value, "812.5")
    qtbot.keyClicks(review.form.reason, "marker 0 was occluded; peak read from the video")
    qtbot.mouseClick(review.form.button, LEFT)

    qtbot.waitUntil(
        lambda: review.form.status.text().startswith("Revision 1 saved"), timeout=WAIT_MS
    )
    qtbot.waitUntil(
        lambda: review.values.item(row, EFFECTIVE_COLUMN).text() == "812.50", timeout=WAIT_MS
    )
    assert review.values.item(row, AUTOMATIC_COLUMN).text() == automatic != "812.50"
    assert review.history.item(0, 1).text() == "rita"

    # the Results page shows the revised value, marked, with the automatic one beside it
    results = _page(gui, "results")
    assert isinstance(results, ResultsPage)
    click_row(qtbot, results.table, results.model.row_of(second) or 0)
    column = [key for key, _, _ in METRIC_COLUMNS].index("peak_speed")
    qtbot.waitUntil(
        lambda: (
            results.detail.current is not None
            and results.detail.metrics.rowCount() > 0
            and results.detail.metrics.item(0, column).text().startswith("812.50")
        ),
        timeout=WAIT_MS,
    )
    assert results.detail.metrics.item(0, column).text() == f"812.50 (revised; auto {automatic})"
    assert results.detail.badges["revisedBadge"].isVisible()

    # stored: the revision by rita beside the result, whose automatic document is byte-identical
    reviewed = services.governance.revisions.show(result_id)
    [revision] = reviewed.revisions
    assert (revision.reviewer, revision.changes[0].field, revision.changes[0].new) == (
        "rita",
        FIELD,
        812.5,
    )
    assert services.governance.revisions.automatic_document(result_id) == automatic_document
    assert sha256_hex(automatic_document) == reviewed.automatic_digest and reviewed.automatic_intact
    assert services.governance.audit.verify().intact
