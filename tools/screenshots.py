"""Screenshots of every screen, for docs/ and the README, taken offscreen on real data.

    .venv/bin/python tools/screenshots.py [--out docs/screenshots]

Builds a fresh store in a temporary folder and fills it the way ``labrig demo``
does (the virtual camera verified, calibrated from a board recording, two
attempts recorded, analysed through the queue and published, one value revised
by a reviewer), and ``labrig demo --rig virtual`` (the virtual rig calibrated
from its board recordings, one attempt analysed in 3-D), then opens the
window built the app's way with ``QT_QPA_PLATFORM=offscreen``, shows each page,
waits for its data and saves ``<out>/<page>.png``. The Capture page is shot
while it records from the virtual camera. Nothing is faked: every figure on the
screenshots comes from the analysis of those recordings.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from PySide6.QtCore import QEventLoop, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from labrig.bootstrap import bootstrap  # noqa: E402
from labrig.capture import DEFAULT_MODE  # noqa: E402
from labrig.capture.rigs import DeviceSpec  # noqa: E402
from labrig.capture.sources import Mode  # noqa: E402
from labrig.domain.corrections import parse_operation  # noqa: E402
from labrig.scenarios import run_demo, run_rig_demo  # noqa: E402
from labrig.ui.app import build_main_window  # noqa: E402
from labrig.ui.calibration.screen import CalibrationScreen  # noqa: E402
from labrig.ui.capture.instrument_tile import InstrumentTile  # noqa: E402
from labrig.ui.capture.page import CapturePage, Phase  # noqa: E402
from labrig.ui.results.export_dialog import ExportDialog  # noqa: E402
from labrig.ui.results.page import ResultsPage  # noqa: E402
from labrig.ui.review.page import ReviewPage  # noqa: E402

RIG_MODE = Mode(1280, 720, 30.0, "any")

SIZE = (1280, 800)


def spin(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        spin(50)


def select_first_row(page: QWidget) -> None:
    table = getattr(page, "table", None)
    if table is not None and table.model() is not None:
        wait_until(lambda: table.model().rowCount() > 0, 20)
        if table.model().rowCount():
            table.selectRow(0)


def shoot_rig(page: CapturePage, window: QWidget, path: Path, rig: str = "virtual") -> Path:
    """The Capture page recording a rig (the built-in virtual rig's four cameras, or one with the
    force plate), shot while it records, then stopped and saved."""
    page.device_tabs.setCurrentIndex(1)
    chooser = page.rig_flow.chooser
    wait_until(lambda: chooser.combo.findText(rig, Qt.MatchFlag.MatchStartsWith) >= 0)
    chooser.combo.setCurrentIndex(chooser.combo.findText(rig, Qt.MatchFlag.MatchStartsWith))
    wait_until(page.record_button.isEnabled)
    page.record_button.click()
    wait_until(lambda: page.phase is Phase.RECORDING, 60)
    grid = page.rig_flow.grid
    wait_until(
        lambda: all(
            t.points() > 1000 if isinstance(t, InstrumentTile) else t.view.frames_shown > 10
            for t in grid.tiles
        )
    )
    spin(2000)
    window.grab().save(str(path))
    page.stop_button.click()
    wait_until(lambda: page.phase is Phase.READY, 60)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    scratch = Path(tempfile.mkdtemp(prefix="labrig-shots-"))
    # the window as it first opens: no size or splitter kept from the user's own runs
    QSettings.setPath(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(scratch / "config")
    )
    services = bootstrap(scratch / "store")
    print(
        f"Qt platform {app.platformName()}; filling a fresh store the way `labrig demo` does "
        "(about a minute)…"
    )
    # the rig's 3-D demo first: the single camera's attempts are then the newest, the first rows
    rig_summary = run_rig_demo(
        services, attempts=1, seconds=4.0, say=lambda line: print("  " + line)
    )
    summary = run_demo(services, attempts=2, seconds=3.0, say=lambda line: print("  " + line))
    # a reviewer's correction, as the Review screen records it: the automatic value stays beside it
    newest = summary.results[-1]
    metric = newest["metrics"][0]
    services.governance.revisions.revise(
        newest["result_id"],
        {f"track:{metric['track_id']}.peak_speed": round(metric["peak_speed"] * 0.97, 2)},
        "peak frame blurred by motion; value read from the neighbouring frames",
    )
    # and a correction of its tracked data: a marker moved at one frame, drawn over the video
    source, _ = services.governance.revisions.effective(newest["result_id"])
    track, frame = sorted(source.tracks)[0], 20
    x, y = source.tracks[track].at(frame)
    services.governance.revisions.correct(
        newest["result_id"],
        [parse_operation("move", f"{track}@{frame}={x + 30:.1f},{y - 20:.1f}")],
        "marker mistracked onto a reflection at this frame",
    )
    # and signed off, as the Review screen's Sign off tab records it
    services.governance.revisions.sign_off(newest["result_id"], "approved", "checked on video")
    # a rig of three virtual cameras and the force plate, as 'labrig rigs add' makes it
    services.capture.add_rig(
        "jump",
        [DeviceSpec(f"virtual:rig-{n}", RIG_MODE) for n in (1, 2, 3)]
        + [DeviceSpec("virtual:plate-1")],
    )
    gui = build_main_window(services)
    window = gui.window
    window.resize(*SIZE)
    window.show()
    services.start()
    window.refresh_status()
    spin(500)

    saved = []
    # the Capture page last: the attempt it records stays pending, and Results should open on
    # published ones
    for key in sorted(window.page_keys, key=lambda k: k == "capture"):
        window.show_page(key)
        page = window.pages.currentWidget()
        if isinstance(page, CapturePage):
            for edit, text in zip(page.form.edits, ("S-001", "reach", "ana"), strict=True):
                edit.setText(text)
            page.form.button.click()
            wait_until(lambda p=page: p.picker.row_of("virtual:markers") is not None)  # type: ignore[misc]
            page.picker.table.selectRow(page.picker.row_of("virtual:markers"))  # type: ignore[arg-type]
            # the mode the demo calibrated, as the Capture screen's "use that mode" link picks it
            wait_until(lambda p=page: p.picker.choose_mode(DEFAULT_MODE.label()))  # type: ignore[misc]
            wait_until(lambda p=page: "results in mm" in p.setup.calibration.text())  # type: ignore[misc]
            wait_until(lambda p=page: p.record_button.isEnabled() and p.preview.running)  # type: ignore[misc]
            page.record_button.click()
            wait_until(lambda p=page: p.phase is Phase.RECORDING)  # type: ignore[misc]
            spin(2500)
        else:
            select_first_row(page.camera if isinstance(page, CalibrationScreen) else page)
            spin(1500)
            wait_until(
                lambda p=page: not getattr(p, "reading", False) and not getattr(p, "busy", False),
                20,
            )
            spin(300)
        path = args.out / f"{key}.png"
        window.grab().save(str(path))
        saved.append(path)
        if isinstance(page, CapturePage):
            page.stop_button.click()
            wait_until(lambda p=page: p.phase is Phase.READY, 60)  # type: ignore[misc]
            saved.append(shoot_rig(page, window, args.out / "capture-rig.png"))
            saved.append(shoot_rig(page, window, args.out / "capture-rig-plate.png", "jump"))

    # the Review screen's player at the corrected frame: the corrected marker beside the grey
    # cross where the tracker had it
    window.show_page("review")
    review = window.pages.currentWidget()
    assert isinstance(review, ReviewPage)
    wait_until(lambda: review.player.shown_index is not None and not review.player.busy, 20)
    review.player.seek(frame)
    wait_until(lambda: review.player.shown_index == frame and not review.player.busy, 20)
    spin(400)
    path = args.out / "review-correction.png"
    window.grab().save(str(path))
    saved.append(path)

    # the Results screen's recording of the same attempt, at the same frame
    window.show_page("results")
    results = window.pages.currentWidget()
    assert isinstance(results, ResultsPage)
    attempt = newest["attempt_id"]
    wait_until(lambda: results.model.row_of(attempt) is not None, 20)
    results.table.selectRow(results.model.row_of(attempt) or 0)
    wait_until(lambda: results.player.media is not None and not results.player.busy, 20)
    results.detail.tabs.setCurrentWidget(results.player)
    results.player.seek(frame)
    wait_until(lambda: results.player.shown_index == frame and not results.player.busy, 20)
    spin(400)
    path = args.out / "results-recording.png"
    window.grab().save(str(path))
    saved.append(path)

    # the Calibration screen's rig mode on the demo's rig calibration: its cameras, then where
    # they stand
    window.show_page("calibration")
    calibration = window.pages.currentWidget()
    assert isinstance(calibration, CalibrationScreen)
    calibration.modes.setCurrentWidget(calibration.rig)
    rig_page = calibration.rig
    select_first_row(rig_page)
    wait_until(lambda: rig_page.detail.current is not None and not rig_page.busy, 30)
    for name, index in (("calibration-rig", 0), ("calibration-rig-positions", 1)):
        rig_page.detail.tabs.setCurrentIndex(index)
        spin(600)
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        saved.append(path)
    calibration.modes.setCurrentWidget(calibration.camera)

    # a rig's 3-D result: the three views and the speed, then its reconstruction tab
    window.show_page("results")
    rig_attempt = rig_summary.results[-1]["attempt_id"]
    wait_until(lambda: results.model.row_of(rig_attempt) is not None, 20)
    results.table.selectRow(results.model.row_of(rig_attempt) or 0)
    wait_until(
        lambda: (
            results.detail.current is not None
            and results.detail.current.summary.attempt_id == rig_attempt
        ),
        20,
    )
    spin(800)
    for name, tab in (
        ("results-3d", results.detail.metrics),
        ("results-3d-reconstruction", results.detail.reconstruction),
    ):
        results.detail.tabs.setCurrentWidget(tab)
        spin(400)
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        saved.append(path)

    # the export dialog on the rig's result, every format ticked
    results.export_button.click()
    dialog = results.findChild(ExportDialog, "exportDialog")
    assert dialog is not None
    for box in dialog.format_boxes.values():
        box.setChecked(True)
    spin(400)
    path = args.out / "export-dialog.png"
    dialog.grab().save(str(path))
    saved.append(path)
    dialog.close()

    window.close()
    gui.executor.shutdown(10_000)
    services.close()
    for path in saved:
        print(f"saved {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
