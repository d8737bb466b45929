"""The Results page on real published and blocked results: plots, units, badges,
metrics and provenance."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.jobs.executor import ThreadExecutor
from labrig.pipeline import save_attempt
from labrig.results.attempt_list import ResultStatus
from labrig.store import Store
from labrig.store.models import AnalysisResultRecord
from labrig.ui.common.result_view import METRIC_COLUMNS
from labrig.ui.results.export_dialog import ExportDialog, export_start_folder
from labrig.ui.results.model import STATUS_COLUMN
from labrig.ui.results.page import NOTHING_TO_EXPORT_TIP, ResultsPage
from labrig.ui.shell.bridge import EventBridge
from tests.support.analysis_runs import (
    analyse,
    calibrate_markers_camera,
    new_session,
    record,
    request_analysis,
    run_analysis,
)
from tests.ui.analysis_helpers import WAIT_MS, click_row, curves
from tests.ui.jobs_helpers import ANALYSIS_LEASE


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    """As tests/ui/conftest.py's, with the lease the analysis stages need (see ANALYSIS_LEASE)."""
    built = bootstrap(store=store, poll_seconds=0.05, lease=ANALYSIS_LEASE)
    yield built
    built.close()


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[ResultsPage]:
    page = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
    qtbot.addWidget(page)
    page.resize(1400, 900)
    yield page
    page.shut_down(5000)


def _show(qtbot: QtBot, page: ResultsPage) -> None:
    page.show()
    qtbot.waitExposed(page)
    qtbot.waitUntil(lambda: not page.reading, timeout=WAIT_MS)


def _open(qtbot: QtBot, page: ResultsPage, attempt_id: str) -> None:
    """Click the attempt's row and wait until its result is on screen."""
    row = page.model.row_of(attempt_id)
    assert row is not None, "the attempt is not listed"
    click_row(qtbot, page.table, row)
    assert page.selected_key() == attempt_id
    qtbot.waitUntil(
        lambda: (
            page.detail.current is not None and page.detail.current.summary.attempt_id == attempt_id
        ),
        timeout=WAIT_MS,
    )


def _open_exportable(qtbot: QtBot, services: Services, page: ResultsPage) -> None:
    """Record and analyse an attempt, open its published result and wait until Export is offered."""
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id))
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)
    qtbot.waitUntil(page.export_button.isEnabled, timeout=WAIT_MS)


def _export_dialog(qtbot: QtBot, page: ResultsPage) -> ExportDialog:
    """Click Export… and find the dialog it opens."""
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    dialog = page.findChild(ExportDialog, "exportDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def _export(qtbot: QtBot, dialog: ExportDialog, folder: Path | None = None) -> str:
    """Click Export (into ``folder``, or the folder the dialog shows); what it says at the end."""
    if folder is not None:
        dialog.folder.setText(str(folder))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=3 * WAIT_MS)
    return dialog.outcome.toPlainText()


def _document(services: Services, attempt_id: str) -> dict[str, Any]:
    with services.store.read() as session:
        row = session.scalars(
            select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
        ).one()
    return json.loads(row.document)  # type: ignore[no-any-return]


def _status(page: ResultsPage, attempt_id: str) -> ResultStatus | None:
    summary = page.model.find(attempt_id)
    return None if summary is None else summary.status


def _labels(page: ResultsPage) -> list[str]:
    plots = (page.detail.plots.trajectory.getPlotItem(), page.detail.plots.speed.getPlotItem())
    return [p.getAxis(side).labelText for p in plots for side in ("bottom", "left")]


def _assert_metrics_match(page: ResultsPage, document: dict[str, Any]) -> None:
    table = page.detail.metrics
    assert table.rowCount() == len(document["metrics"]) > 0
    for row, metric in enumerate(document["metrics"]):
        for column, (key, _, _) in enumerate(METRIC_COLUMNS):
            if table.isColumnHidden(column):  # range z, for 3-D results only
                assert key not in metric
                continue
            shown, value = table.item(row, column).text(), metric[key]
            if isinstance(value, float):
                assert float(shown) == pytest.approx(value, abs=0.006), (key, row)
            else:
                assert shown == ("—" if value is None else str(value)), (key, row)


def test_an_uncalibrated_result_is_plotted_in_pixels_with_the_degraded_badge(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id))
    document = _document(services, attempt_id)
    _show(qtbot, page)

    _open(qtbot, page, attempt_id)

    trajectories = curves(page.detail.plots)
    speeds = curves(page.detail.plots, "speed")
    assert len(trajectories) == len(document["series"]) == 3
    assert len(speeds) == sum(s["velocity"] is not None for s in document["series"])
    for item, series in zip(trajectories, document["series"], strict=True):
        x, y = item.getData()
        assert list(x) == pytest.approx([p[0] for p in series["xy"]])
        assert list(y) == pytest.approx([p[1] for p in series["xy"]])
        # drawn in its marker's colour as the video shows it; white, yellow and cyan would vanish
        # on the white plot, so each has a dark outline
        assert item.opts["pen"].color().getRgb()[:3] == tuple(series["colour_rgb"])
        assert item.opts["shadowPen"] is not None
    assert _labels(page) == ["x (px)", "y (px, downwards)", "time (s)", "speed (px/s)"]
    # one camera's result: no front and side views, no 3-D reconstruction tab
    detail = page.detail
    assert not detail.plots.front.isVisible() and not detail.plots.side.isVisible()
    assert not detail.tabs.isTabVisible(detail.tabs.indexOf(detail.reconstruction))
    _assert_metrics_match(page, document)
    badge = page.detail.badges["degradedBadge"]
    assert badge.isVisible() and badge.text() == "DEGRADED"
    assert page.detail.degraded_reasons.isVisible()
    assert "no valid calibration" in page.detail.degraded_reasons.text()
    assert page.detail.badges["unitsBadge"].text() == "px · s"
    assert not page.detail.blocked_panel.isVisible()
    status = page.model.index(page.model.row_of(attempt_id) or 0, STATUS_COLUMN).data()
    assert status == "Published, degraded"
    keys = {j["idempotency_key"] for j in document["provenance"]["jobs"]}
    tree = page.detail.provenance
    shown = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    jobs = shown["Jobs"]
    assert jobs.childCount() == 3
    assert {jobs.child(i).child(1).text(1) for i in range(3)} == keys
    assert shown["Inputs"].child(0).text(1) == document["provenance"]["inputs"][0]


def test_a_result_made_with_no_active_release_says_so_on_a_badge_and_in_its_provenance(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    assert services.releases.list() == []
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id, seconds=0.5))
    assert _document(services, attempt_id)["provenance"]["release"] is None
    _show(qtbot, page)

    _open(qtbot, page, attempt_id)

    badge = page.detail.badges["releaseBadge"]
    assert badge.isVisible() and badge.text() == "No active release"
    assert "cannot be traced to a health-checked, activated release" in badge.toolTip()
    tree = page.detail.provenance
    [release] = [
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).text(0) == "Release"
    ]
    assert (release.child(0).text(0), release.child(0).text(1)) == (
        "release",
        "none active — this result was not made under an activated release",
    )


def test_a_calibrated_result_is_in_millimetres_and_seconds_without_the_badge(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    calibration = calibrate_markers_camera(services)
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id))
    document = _document(services, attempt_id)
    assert document["degraded"] is False, document["reasons"]
    _show(qtbot, page)

    _open(qtbot, page, attempt_id)

    assert _labels(page) == ["x (mm)", "y (mm, downwards)", "time (s)", "speed (mm/s)"]
    assert len(curves(page.detail.plots)) == len(document["series"])
    _assert_metrics_match(page, document)
    header = page.detail.metrics.horizontalHeaderItem(1).text()
    assert header == "Path length (mm)"
    assert page.detail.metrics.horizontalHeaderItem(3).text() == "Peak speed (mm/s)"
    assert not page.detail.badges["degradedBadge"].isVisible()
    assert not page.detail.degraded_reasons.isVisible()
    assert page.detail.badges["statusBadge"].text() == "Published"
    assert page.detail.badges["calibrationBadge"].text() == f"Calibration {calibration.id[:8]}"
    assert (
        page.detail.current is not None
        and page.detail.current.summary.status is ResultStatus.PUBLISHED
    )


def test_a_blocked_result_says_why_and_what_to_do(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    session_id = new_session(services)
    attempt_id = analyse(
        services, session_id, record(services, session_id, scene="plane", seconds=1.0)
    )
    _show(qtbot, page)

    _open(qtbot, page, attempt_id)

    assert page.detail.blocked_panel.isVisible()
    assert page.detail.blocked_reasons.text().startswith(
        "• tracking.markers: no markers were found in any of the"
    )
    assert "Check the lighting" in page.detail.what_to_do.text()
    assert page.detail.badges["statusBadge"].text() == "Blocked"
    assert not page.detail.badges["degradedBadge"].isVisible()
    assert curves(page.detail.plots) == []
    assert page.detail.metrics.rowCount() == 0


def test_a_new_result_appears_through_the_bridge_without_a_refresh(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    _show(qtbot, page)
    assert page.model.rowCount() == 0
    assert page.list_status.text() == "No attempts yet: record one on the Capture page."
    services.start()  # the dispatcher thread announces events to the bridge

    session_id = new_session(services, "LIVE-1")
    attempt_id = request_analysis(services, session_id, record(services, session_id, seconds=1.0))

    qtbot.waitUntil(lambda: _status(page, attempt_id) is ResultStatus.PENDING, timeout=WAIT_MS)
    run_analysis(services)
    qtbot.waitUntil(lambda: _status(page, attempt_id) is ResultStatus.DEGRADED, timeout=WAIT_MS)
    assert page.model.rows[0].subject_code == "LIVE-1"
    _open(qtbot, page, attempt_id)
    assert len(curves(page.detail.plots)) == 3


def test_an_attempt_blocked_while_the_page_is_open_turns_blocked_with_its_reason(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    _show(qtbot, page)
    services.start()
    session_id = new_session(services)
    attempt_id = request_analysis(
        services, session_id, record(services, session_id, scene="plane", seconds=0.5)
    )
    qtbot.waitUntil(lambda: page.select(attempt_id), timeout=WAIT_MS)

    # the dispatcher thread publishes, not this test
    ThreadExecutor(services.queue, workers=1).run(drain=True)

    qtbot.waitUntil(lambda: _status(page, attempt_id) is ResultStatus.BLOCKED, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: page.detail.blocked_panel.isVisible(), timeout=WAIT_MS)
    assert (
        "tracking.markers: no markers were found in any of the"
        in page.detail.blocked_reasons.text()
    )


def _assert_sha256sum_verifies(bundle: Path) -> None:
    """``sha256sum -c`` (coreutils, not Labrig) checks every file of the bundle."""
    check = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"],
        cwd=bundle,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_published_result_is_exported_through_the_folder_dialog_and_sha256sum_verifies_it(
    qtbot: QtBot, services: Services, page: ResultsPage, tmp_path: Path
) -> None:
    _open_exportable(qtbot, services, page)
    target = tmp_path / "exports"
    target.mkdir()
    dialog = _export_dialog(qtbot, page)
    assert dialog.selected_choice.isChecked() and not dialog.media.isChecked()

    qtbot.mouseClick(dialog.choose_button, Qt.MouseButton.LeftButton)
    folders = dialog.findChild(QFileDialog, "exportFolderDialog")
    assert folders is not None and folders.isVisible()
    folders.setDirectory(str(target))
    folders.selectFile(str(target))
    folders.accept()
    assert dialog.folder.text() == str(target)
    said = _export(qtbot, dialog)

    assert said.startswith("Exported 1 result ")
    [bundle] = [p for p in target.iterdir() if not p.name.startswith(".")]
    assert str(bundle) in said
    _assert_sha256sum_verifies(bundle)
    assert dialog.export_button.isEnabled() and page.export_button.isEnabled()


def test_every_published_result_is_exported_with_its_recordings_from_the_last_folder(
    qtbot: QtBot, services: Services, page: ResultsPage, tmp_path: Path
) -> None:
    first_session = new_session(services, "S-2")
    analyse(services, first_session, record(services, first_session))
    _open_exportable(qtbot, services, page)
    # the dialog does not open in the program's folder
    assert export_start_folder() != str(Path.cwd())
    target = tmp_path / "exports"
    target.mkdir()
    dialog = _export_dialog(qtbot, page)
    assert dialog.folder.text() == export_start_folder()
    for button in (dialog.everything_choice, dialog.media):  # on the tick, left of the words
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(6, button.height() // 2))
    assert dialog.everything and dialog.media.isChecked()

    said = _export(qtbot, dialog, target)

    assert said.startswith("Exported 2 results")
    [bundle] = [p for p in target.iterdir() if not p.name.startswith(".")]
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert len(manifest["results"]) == 2 and manifest["media"] is True
    media = sorted((bundle / "media").iterdir())
    assert len(media) == 2 and all(any(folder.glob("*.avi")) for folder in media)
    _assert_sha256sum_verifies(bundle)
    # the next export starts where this one went
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert _export_dialog(qtbot, page).folder.text() == str(target) == export_start_folder()


def test_a_blocked_result_cannot_be_exported(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    session_id = new_session(services)
    attempt_id = analyse(
        services, session_id, record(services, session_id, scene="plane", seconds=0.5)
    )
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)
    assert _status(page, attempt_id) is ResultStatus.BLOCKED
    assert not page.export_button.isEnabled()
    assert page.export_button.toolTip() == NOTHING_TO_EXPORT_TIP


def test_an_export_shows_its_progress_and_a_cancelled_one_leaves_no_bundle(
    qtbot: QtBot, services: Services, page: ResultsPage, tmp_path: Path
) -> None:
    _open_exportable(qtbot, services, page)
    dialog = _export_dialog(qtbot, page)

    dialog.folder.setText(str(tmp_path / "exports"))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.task_bar.shown and dialog.task_bar.task is not None
    shown: list[float] = []
    dialog.task_bar.task.progressed.connect(lambda fraction, _message: shown.append(fraction))
    qtbot.waitUntil(lambda: not dialog.running, timeout=3 * WAIT_MS)
    assert dialog.outcome.toPlainText().startswith("Exported")
    assert shown and shown == sorted(shown) and shown[-1] == 1.0 and not dialog.task_bar.shown

    cancelled = tmp_path / "cancelled"
    release = threading.Event()
    # the export thread is busy
    page._exporting.submit(release.wait, lambda _: None, lambda _: None)
    dialog.folder.setText(str(cancelled))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.task_bar.cancel_button, Qt.MouseButton.LeftButton)
    release.set()
    qtbot.waitUntil(lambda: not dialog.running, timeout=WAIT_MS)
    assert dialog.outcome.toPlainText().startswith("Export cancelled at your request")
    assert not dialog.task_bar.shown and dialog.export_button.isEnabled()
    assert not cancelled.exists() or list(cancelled.iterdir()) == []


def test_an_interrupted_attempt_says_so_in_the_list_and_on_its_result(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    session_id = new_session(services)
    note = "Interrupted: the window was closed during the recording, which was stopped and saved."
    attempt_id = save_attempt(services.queue, session_id, [record(services, session_id)], note)
    run_analysis(services)
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)

    row = page.model.row_of(attempt_id)
    assert row is not None and page.model.index(row, 1).data() == "1 (interrupted)"
    assert page.detail.attempt_note.isVisibleTo(page) and page.detail.attempt_note.text() == note


def test_a_fifo_in_the_store_during_an_export_from_the_window_ends_in_the_message_not_a_wait(
    qtbot: QtBot, services: Services, page: ResultsPage, tmp_path: Path
) -> None:
    """Issue 16: the window meets the fault of ``labrig export --media`` with the same words."""
    _open_exportable(qtbot, services, page)
    [blob] = list(services.store.media_dir.rglob("*.avi"))
    blob.unlink()
    os.mkfifo(blob)  # read the ordinary way, it would wait for a writer for ever
    target = tmp_path / "exports"
    target.mkdir()
    dialog = _export_dialog(qtbot, page)
    dialog.media.setChecked(True)

    said = _export(qtbot, dialog, target)

    assert said.startswith("Not exported")
    assert "is a FIFO, not a file" in said
    assert "restore the file from a backup or the archive" in said
    assert dialog.export_button.isEnabled()  # the dialog is usable again
    assert [p.name for p in target.iterdir() if not p.name.startswith(".")] == []


def test_a_rig_attempt_shows_how_well_its_cameras_were_in_sync(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    from labrig.capture import create_session
    from labrig.capture.rig_camera import CameraTiming
    from labrig.capture.rigs import DeviceSpec
    from labrig.capture.sources import Mode
    from labrig.pipeline import save_rig_attempt

    mode = Mode(640, 360, 30.0, "any")
    services.capture.add_rig("pair", [DeviceSpec(f"virtual:rig-{n}", mode) for n in (1, 2)])
    services.capture.virtual_rig.timing = {1: CameraTiming(offset_ms=10.0)}  # over 8.3 ms
    session_id = create_session(services.queue, "RIG-R", "gait", "ana")
    recording = services.capture.start_rig_recording("pair", session_id)
    qtbot.waitUntil(lambda: min(c.status.frames for c in recording.status().cameras) >= 60)
    attempt_id = save_rig_attempt(services.queue, recording.stop())
    run_analysis(services)
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)
    badge = page.detail.badges["syncBadge"]
    assert badge.isVisible() and badge.text() == "2 cameras · sync p99 10.00 ms"
    assert "spread p50 10.00 ms" in badge.toolTip()
    # and rig.sync says why the result is degraded
    assert any("10.0 ms apart at p99" in r for r in page.detail.current.summary.reasons)  # type: ignore[union-attr]


def test_a_result_under_a_superseded_calibration_is_flagged_and_reprocessed_with_one_click(
    qtbot: QtBot, services: Services, page: ResultsPage
) -> None:
    from datetime import timedelta

    from labrig.calibration.camera import CalibrationThresholds
    from labrig.store import utcnow

    calibrate_markers_camera(services)
    session_id = new_session(services)
    attempt_id = analyse(services, session_id, record(services, session_id, seconds=0.5))
    newer = calibrate_markers_camera(
        services,
        thresholds=CalibrationThresholds(max_rms_px=0.9),
        now=utcnow() + timedelta(minutes=1),
    )
    _show(qtbot, page)
    _open(qtbot, page, attempt_id)

    panel = page.detail.flagged_panel
    assert panel.isVisible()
    assert f"superseded by calibration {newer.id[:8]}" in panel.reasons.text()
    status = page.model.index(page.model.row_of(attempt_id) or 0, STATUS_COLUMN).data()
    assert status == "Published · calibration changed"
    button = page.detail.reprocess_button
    assert button.isEnabled()
    count = page.model.rowCount()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: "Analysing again as a new attempt" in page.detail.reprocess_message.text(),
        timeout=WAIT_MS,
    )
    assert not button.isEnabled()  # one click, one new attempt
    qtbot.waitUntil(lambda: page.model.rowCount() == count + 1, timeout=WAIT_MS)
    run_analysis(services)
    with services.store.read() as s:
        rows = list(s.scalars(select(AnalysisResultRecord)))
    fresh = [r for r in rows if r.attempt_id != attempt_id]
    assert len(fresh) == 1
    assert json.loads(fresh[0].document)["provenance"]["calibration_id"] == newer.id
    # opened again, the flagged result says it was analysed again already
    page.refresh()
    qtbot.waitUntil(lambda: page.model.row_of(fresh[0].attempt_id) is not None, timeout=WAIT_MS)
    _open(qtbot, page, fresh[0].attempt_id)
    _open(qtbot, page, attempt_id)
    assert "Already analysed again as attempt 2" in page.detail.reprocess_message.text()
