"""The Results screen's Export dialog on a real store: several selected results at once in the
formats chosen, a blocked one named as not exportable, Cancel mid-way, refusals with their codes,
and a dialog that fits a 1280×800 screen."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services, bootstrap
from labrig.capture.virtual import VirtualCamera
from labrig.export.interchange import DEFAULT_FORMATS, FORMATS
from labrig.store import Store, open_store
from labrig.store.models import AnalysisResultRecord
from labrig.tasks import TaskControl
from labrig.ui.results.export_dialog import FORMAT_WORDS, ExportDialog, kept_formats
from labrig.ui.results.page import ResultsPage
from labrig.ui.shell.bridge import EventBridge
from tests.support.analysis_runs import analyse, new_session, record
from tests.support.results import MODE, TemplateResults, copy_store
from tests.ui.analysis_helpers import WAIT_MS, click_row
from tests.ui.jobs_helpers import ANALYSIS_LEASE
from tests.ui.review_helpers import as_user, staff

SCREEN = (1280, 800)


@dataclass(frozen=True)
class Template:
    root: Path
    published: tuple[str, str]  # two published results' attempts (px: no calibration)
    blocked: str  # a blocked result's attempt


@pytest.fixture(scope="session")
def export_template(
    review_template: tuple[Path, TemplateResults], tmp_path_factory: pytest.TempPathFactory
) -> Template:
    """The Review template (one published, one blocked result) and a second published result."""
    root = copy_store(review_template[0], tmp_path_factory.mktemp("export-ui") / "store")
    services = bootstrap(root)
    try:
        session_id = new_session(services, "EXPORT-2")
        camera = VirtualCamera("markers", paced=False, frames_limit=30)
        second = analyse(
            services, session_id, record(services, session_id, camera=camera, mode=MODE)
        )
        with services.store.read() as session:
            first, blocked = (
                session.get(AnalysisResultRecord, result_id)
                for result_id in (review_template[1].published_id, review_template[1].blocked_id)
            )
            assert first is not None and blocked is not None
            return Template(root, (first.attempt_id, second), blocked.attempt_id)
    finally:
        services.close()


@pytest.fixture
def store(export_template: Template, tmp_path: Path) -> Iterator[Store]:
    """This test's own copy of the template."""
    copied = open_store(copy_store(export_template.root, tmp_path / "store"))
    yield copied
    copied.close()


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    built = bootstrap(store=store, poll_seconds=0.05, lease=ANALYSIS_LEASE)
    yield built
    built.close()


@pytest.fixture
def page(qtbot: QtBot, services: Services, bridge: EventBridge) -> Iterator[ResultsPage]:
    made = ResultsPage(services.governance.reviewed, lambda: services.export, bridge)
    qtbot.addWidget(made)
    made.resize(*SCREEN)
    made.show()
    qtbot.waitExposed(made)
    qtbot.waitUntil(lambda: made.model.rowCount() == 3 and not made.reading, timeout=WAIT_MS)
    yield made
    made.shut_down(5000)


def _select(qtbot: QtBot, page: ResultsPage, *attempts: str) -> None:
    """Click the first attempt's row, ctrl-click the others', as a reviewer picks several."""
    for n, attempt_id in enumerate(attempts):
        row = page.model.row_of(attempt_id)
        assert row is not None
        rect = page.table.visualRect(page.model.index(row, 0))
        modifier = Qt.KeyboardModifier.ControlModifier if n else Qt.KeyboardModifier.NoModifier
        qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())
    assert {r.attempt_id for r in page.selected_rows()} == set(attempts)


def _open_dialog(qtbot: QtBot, page: ResultsPage) -> ExportDialog:
    assert page.export_button.isEnabled()
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    dialog = page.findChild(ExportDialog, "exportDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def _export(qtbot: QtBot, dialog: ExportDialog, folder: Path, formats: tuple[str, ...]) -> None:
    """Tick ``formats`` only, type ``folder``, click Export and wait until it ends."""
    for fmt, box in dialog.format_boxes.items():
        if box.isChecked() != (fmt in formats):
            # on its tick box: the box is as wide as its grid column, its text is not
            qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))
    assert dialog.formats() == list(formats)
    dialog.folder.setText(str(folder))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.running
    qtbot.waitUntil(lambda: not dialog.running, timeout=4 * WAIT_MS)


def _bundles(folder: Path) -> list[Path]:
    return sorted(folder.glob("labrig-export-*")) if folder.exists() else []


def test_two_selected_results_are_exported_in_csv_and_c3d_and_sha256sum_verifies_them(
    qtbot: QtBot, page: ResultsPage, export_template: Template, tmp_path: Path
) -> None:
    first, second = export_template.published
    _select(qtbot, page, first, second)
    # the detail shows the last one clicked
    qtbot.waitUntil(
        lambda: (
            page.detail.current is not None and page.detail.current.summary.attempt_id == second
        ),
        timeout=WAIT_MS,
    )
    dialog = _open_dialog(qtbot, page)
    assert dialog.selected_choice.isChecked()
    assert dialog.selected_choice.text() == "The selected results (2)"
    assert "REVIEW-1, attempt 1" in dialog.selection.text()
    assert "EXPORT-2, attempt 1" in dialog.selection.text()
    assert dialog.formats() == list(DEFAULT_FORMATS)  # csv and c3d until a choice is kept
    target = tmp_path / "exports"

    _export(qtbot, dialog, target, ("csv", "c3d"))

    [bundle] = _bundles(target)
    said = dialog.outcome.toPlainText()
    assert said.startswith("Exported 2 results") and str(bundle) in said
    assert "sha256sum -c --strict SHA256SUMS" in said
    manifest = json.loads((bundle / "manifest.json").read_text())
    folders = [bundle / r["folder"] for r in manifest["results"]]
    assert len(folders) == 2 and manifest["formats"] == ["csv", "c3d"]
    sums = (bundle / "SHA256SUMS").read_text()
    for folder in folders:
        for name in ("markers-tidy.csv", "markers.c3d"):
            assert (folder / name).is_file()
            assert f"  {(folder / name).relative_to(bundle).as_posix()}\n" in sums
    check = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=bundle, capture_output=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert not any(p.name.endswith(".partial") for p in target.iterdir())
    assert dialog.export_button.isEnabled()  # another export may follow


def test_the_selection_of_several_stays_when_the_list_is_read_again(
    qtbot: QtBot, page: ResultsPage, export_template: Template
) -> None:
    first, second = export_template.published
    _select(qtbot, page, second)
    qtbot.keyClick(page.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    [below] = [r.attempt_id for r in page.selected_rows() if r.attempt_id != second]
    # the detail follows the keyboard's current row
    qtbot.waitUntil(lambda: _shown(page) == below, timeout=WAIT_MS)
    _select(qtbot, page, first, second)
    qtbot.waitUntil(lambda: _shown(page) == second, timeout=WAIT_MS)

    page.refresh()
    qtbot.waitUntil(lambda: not page.reading, timeout=WAIT_MS)

    assert {r.attempt_id for r in page.selected_rows()} == {first, second}
    assert page.selected_key() == second and _shown(page) == second


def _shown(page: ResultsPage) -> str | None:
    return None if page.detail.current is None else page.detail.current.summary.attempt_id


def test_a_blocked_result_selected_is_named_as_not_exportable_and_everything_exports_the_rest(
    qtbot: QtBot, page: ResultsPage, export_template: Template, tmp_path: Path
) -> None:
    _select(qtbot, page, export_template.published[0], export_template.blocked)
    dialog = _open_dialog(qtbot, page)
    assert dialog.selected_choice.text() == "The selected results (1)"
    assert dialog.not_exportable.isVisible()
    assert dialog.not_exportable.text() == (
        "Not exportable (only published results can be): REVIEW-1, attempt 2 (blocked)"
    )
    # the blocked one alone: only every published result is offered
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    _select(qtbot, page, export_template.blocked)
    dialog = _open_dialog(qtbot, page)
    assert not dialog.selected_choice.isEnabled() and dialog.everything_choice.isChecked()
    assert dialog.export_button.isEnabled()

    _export(qtbot, dialog, tmp_path / "all", ("csv",))

    [bundle] = _bundles(tmp_path / "all")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert len(manifest["results"]) == 2 and manifest["formats"] == ["csv"]
    assert dialog.outcome.toPlainText().startswith("Exported 2 results")
    # the choice is kept for the next export
    assert kept_formats() == ("csv",)


def test_cancel_during_the_overlay_video_stops_the_export_and_leaves_nothing(
    qtbot: QtBot,
    page: ResultsPage,
    export_template: Template,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reached, go = threading.Event(), threading.Event()
    partial_seen: list[bool] = []
    target = tmp_path / "exports"
    report = TaskControl.progress

    def progress(self: TaskControl, fraction: float, message: str = "") -> None:
        """The export thread waits at its first video frame until the test has clicked Cancel."""
        report(self, fraction, message)
        if "overlay video" in message and not reached.is_set():
            partial_seen.append(any(p.name.endswith(".partial") for p in target.iterdir()))
            reached.set()
            go.wait(WAIT_MS / 1000)

    monkeypatch.setattr(TaskControl, "progress", progress)
    _select(qtbot, page, export_template.published[0])
    dialog = _open_dialog(qtbot, page)
    for fmt, box in dialog.format_boxes.items():
        box.setChecked(fmt in ("csv", "video"))
    dialog.folder.setText(str(target))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(reached.is_set, timeout=WAIT_MS)
    assert dialog.task_bar.shown and not dialog.export_button.isEnabled()
    # closed, the dialog's export goes on; Export… shows it again
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible() and dialog.running
    assert _open_dialog(qtbot, page) is dialog and dialog.task_bar.shown

    qtbot.mouseClick(dialog.task_bar.cancel_button, Qt.MouseButton.LeftButton)
    go.set()
    qtbot.waitUntil(lambda: not dialog.running, timeout=WAIT_MS)

    assert partial_seen == [True]  # it was under way, in its hidden folder
    assert dialog.outcome.toPlainText() == (
        "Export cancelled at your request: nothing was kept of the unfinished bundle."
    )
    assert list(target.iterdir()) == []  # no bundle, no .partial folder
    assert not dialog.task_bar.shown and dialog.export_button.isEnabled()


def test_trc_of_a_result_in_pixels_is_refused_with_its_code_and_nothing_is_written(
    qtbot: QtBot, page: ResultsPage, export_template: Template, tmp_path: Path
) -> None:
    _select(qtbot, page, export_template.published[0])
    dialog = _open_dialog(qtbot, page)
    target = tmp_path / "exports"

    _export(qtbot, dialog, target, ("csv", "trc"))

    said = dialog.outcome.toPlainText()
    assert said.startswith("Not exported: Result ")
    assert "is measured in pixels" in said and "leave trc out of the formats" in said
    assert said.endswith("Error code: LABRIG_FORMAT_NEEDS_CALIBRATION")
    assert _bundles(target) == [] and (not target.exists() or list(target.iterdir()) == [])


def test_a_technician_is_refused_the_export_with_the_role_code(
    qtbot: QtBot, store: Store, export_template: Template, bridge: EventBridge, tmp_path: Path
) -> None:
    staff(store)  # roles are enforced: tom is a technician, and exporting needs a reviewer
    technician_services = bootstrap(store=store, access=as_user(store, "tom"))
    page = ResultsPage(
        technician_services.governance.reviewed, lambda: technician_services.export, bridge
    )
    qtbot.addWidget(page)
    page.show()
    try:
        qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=WAIT_MS)
        click_row(qtbot, page.table, page.model.row_of(export_template.published[0]) or 0)
        dialog = _open_dialog(qtbot, page)
        _export(qtbot, dialog, tmp_path / "exports", ("csv",))
        assert dialog.outcome.toPlainText().endswith("Error code: LABRIG_ROLE_REQUIRED")
        assert _bundles(tmp_path / "exports") == []
    finally:
        page.shut_down(5000)
        technician_services.close()


def test_the_dialog_fits_a_1280x800_screen_with_every_line_whole(
    qtbot: QtBot, page: ResultsPage, export_template: Template
) -> None:
    assert set(FORMAT_WORDS) == set(FORMATS)  # each format is offered, with its explanation
    _select(qtbot, page, *export_template.published, export_template.blocked)
    dialog = _open_dialog(qtbot, page)
    dialog.task_bar.begin("Exporting into a folder")  # the progress and the outcome on show
    dialog.outcome.setPlainText(
        "Exported 2 results (61 files) into:\n/home/technician/Documents/exports/"
        + "labrig-export-20261201T101010Z-abc123/" * 3
    )
    QApplication.processEvents()

    try:
        available = dialog.screen().availableGeometry()
        assert (available.width(), available.height()) == SCREEN
        assert dialog.minimumSizeHint().width() <= SCREEN[0]
        assert dialog.frameGeometry().width() <= SCREEN[0]
        assert dialog.frameGeometry().height() <= SCREEN[1]
        for widget in dialog.findChildren(QWidget):
            if widget.isVisible() and isinstance(widget, QLabel | QAbstractButton):
                _assert_whole(widget)
    finally:
        dialog.task_bar.end()


def _assert_whole(widget: QLabel | QAbstractButton) -> None:
    """No part of its text is cut off: wide enough for it on one line, or (wrapped) tall enough."""
    text = widget.text()
    if isinstance(widget, QLabel) and widget.wordWrap():
        assert widget.height() >= widget.heightForWidth(widget.width()), text
    elif widget.objectName() != "exportTaskMessage":  # the task bar elides, with a tooltip
        assert widget.width() >= widget.sizeHint().width(), text
        assert widget.height() >= widget.sizeHint().height(), text
