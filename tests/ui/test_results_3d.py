"""The Results page on a rig's 3-D result, recorded with the virtual rig and analysed through the
queue: the paths seen from above, the front and the side in the rig's world, the speed, the
reconstruction's tab (per marker and over time) and the rig calibration it was made under."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.capture import create_session
from labrig.capture.rigs import builtin_rig
from labrig.jobs.executor import ThreadExecutor
from labrig.pipeline import save_rig_attempt
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord
from labrig.ui.results.page import ResultsPage
from labrig.ui.shell.bridge import EventBridge
from tests.integration.recording.test_rig_recording import record_frames
from tests.support.rig_truth import store_truth_calibration
from tests.ui.analysis_helpers import curves
from tests.ui.jobs_helpers import ANALYSIS_LEASE
from tests.ui.test_results_page import _open, _show


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    built = bootstrap(store=store, poll_seconds=0.05, lease=ANALYSIS_LEASE)
    yield built
    built.close()


@pytest.fixture
def page(qtbot: QtBot, services: Services) -> Iterator[ResultsPage]:
    bridge = EventBridge()
    bridge.attach(services)
    page = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
    qtbot.addWidget(page)
    page.resize(1280, 800)
    yield page
    page.shut_down(5000)
    bridge.detach(services)


def rig_result(services: Services) -> tuple[str, dict[str, Any]]:
    """Two seconds of the built-in virtual rig under its true cameras, analysed in 3-D."""
    store_truth_calibration(services.store, builtin_rig())
    session = create_session(services.queue, "RIG-UI", "gait", "ana")
    recording = services.capture.start_rig_recording("virtual", session)
    record_frames(recording, 60)
    attempt_id = save_rig_attempt(services.queue, recording.stop())
    ThreadExecutor(services.queue, workers=2).run(drain=True)
    services.dispatcher.dispatch_all()
    with services.store.read() as s:
        row = s.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
        ).one()
    return attempt_id, json.loads(row.document)


def test_a_3d_result_shows_three_views_of_each_path_and_its_reconstruction(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    attempt_id, document = rig_result(services)
    assert document["status"] == "published", document["reasons"]
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)
    view, plots = page.detail, page.detail.plots

    assert plots.front.isVisible() and plots.side.isVisible()
    series = document["series"]
    for name, (a, b) in (("trajectory", (0, 1)), ("front", (0, 2)), ("side", (1, 2))):
        items = curves(plots, name)  # the player's dots at the frame it shows left out
        assert len(items) == len(series) == 4
        for item, s in zip(items, series, strict=True):
            x, y = item.getData()
            xyz = np.asarray(s["xyz"])
            assert list(x) == pytest.approx(list(xyz[:, a])) and list(y) == pytest.approx(
                list(xyz[:, b])
            )
    labels = [
        p.getPlotItem().getAxis(side).labelText
        for p in (plots.trajectory, plots.front, plots.side)
        for side in ("bottom", "left")
    ]
    assert labels == ["x (mm)", "y (mm)", "x (mm)", "z (mm, up)", "y (mm)", "z (mm, up)"]
    assert not plots.trajectory.getPlotItem().getViewBox().yInverted()  # the world's y, not px
    assert view.badges["unitsBadge"].text() == "3-D · mm · s"
    # a rig's many badges wrap onto more rows, and its recording's four cameras stand two abreast:
    # the result never needs more than half the window, so the attempt list beside it keeps its
    # width, and no badge is cut
    qtbot.waitUntil(lambda: len(page.player.views) == 4, timeout=30_000)
    assert view.minimumSizeHint().width() <= 640
    for badge in view.badges.values():
        if badge.isVisible():
            assert badge.width() >= badge.sizeHint().width(), badge.text()
    assert view.badges["calibrationBadge"].text().startswith("Rig calibration truth-")

    # the range z column is shown, with each marker's value
    columns = [
        view.metrics.horizontalHeaderItem(c).text() for c in range(view.metrics.columnCount())
    ]
    z = next(c for c, text in enumerate(columns) if text.startswith("Range z"))
    assert not view.metrics.isColumnHidden(z)
    for row, metric in enumerate(document["metrics"]):
        assert float(view.metrics.item(row, z).text()) == pytest.approx(
            metric["range_z"], abs=0.006
        )

    # the reconstruction's own tab: one row per marker, and cameras and errors over time
    tab = view.tabs.indexOf(view.reconstruction)
    assert view.tabs.isTabVisible(tab)
    rec = document["reconstruction"]
    table = view.reconstruction.table
    assert table.rowCount() == len(rec["markers"]) == 4
    for row, m in enumerate(rec["markers"]):
        assert table.item(row, 1).text() == str(m["frames"])
        assert "front" in table.item(row, 6).text()
    counts = view.reconstruction.cameras.getPlotItem().listDataItems()
    assert len(counts) == 4
    assert (
        "4 markers from 4 cameras (front, right, back, left)" in view.reconstruction.summary.text()
    )
    tree = view.provenance
    tops = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert "Rig calibration" in tops and "Calibration" not in tops
