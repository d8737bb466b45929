"""GUI responsiveness: the event loop's lateness while recording 720p60 and analysing,
against an idle window.

    .venv/bin/python tests/benchmarks/bench_gui_latency.py [--quick] [--seconds N]

A precise 10 ms QTimer runs on the GUI thread; each time it fires, its lateness is
the time since the previous firing minus 10 ms. That is how long any click or
repaint would have waited. Two phases, in the same run, on the real window built
the app's way (offscreen), with the real services on a fresh store:

- peer (idle): the window on the Capture page, a session open, nothing previewing,
  no job running;
- load: the technician's flow on the Capture page, by its widgets: the virtual
  camera in 1280x720@60, preview on, recording; at the same time the GUI's job
  executor (2 workers) analyses attempts recorded beforehand (media.qc, tracking,
  kinematics on 720p captures).

Printed: p50, p99 and max lateness of each phase, frames recorded and dropped,
jobs finished during the load. The last line is ``gui_p99_ms=X`` (target <= 50).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from labrig.bootstrap import Services, bootstrap  # noqa: E402
from labrig.capture.devices import DeviceInfo, DeviceKind  # noqa: E402
from labrig.capture.recorder import Recorder  # noqa: E402
from labrig.capture.sessions import create_attempt, create_session  # noqa: E402
from labrig.capture.sources import Mode  # noqa: E402
from labrig.capture.virtual import VirtualCamera  # noqa: E402
from labrig.domain.jobs import JobState  # noqa: E402
from labrig.pipeline.attempts import attempt_pipeline  # noqa: E402
from labrig.ui.app import build_main_window  # noqa: E402
from labrig.ui.capture.page import CapturePage, Phase  # noqa: E402

TICK_MS = 10
MODE = Mode(1280, 720, 60.0)
DEVICE_ID = "virtual:markers"


class LatencyProbe:
    """A precise timer on the GUI thread recording how late each firing was (ms)."""

    def __init__(self) -> None:
        self.lateness: list[float] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0

    def start(self) -> None:
        self.lateness.clear()
        self._clock.start()
        self._last = self._clock.nsecsElapsed()
        self._timer.start()

    def stop(self) -> list[float]:
        self._timer.stop()
        return list(self.lateness)

    def _tick(self) -> None:
        now = self._clock.nsecsElapsed()
        self.lateness.append(max(0.0, (now - self._last) / 1e6 - TICK_MS))
        self._last = now


def spin(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(
    condition: object, timeout_s: float, what: str, page: CapturePage | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            said = f"; the page says: {page.message.text()!r}" if page is not None else ""
            raise SystemExit(f"timed out waiting for {what}{said}")
        spin(20)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return (
        ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]
        if ordered
        else float("nan")
    )


def prerecord_attempts(services: Services, count: int, seconds: float) -> list[str]:
    """Attempts on 720p captures of the virtual camera, their analysis queued (it runs
    during the load)."""
    session_id = create_session(services.queue, "BENCH-PRE", "latency", "bench")
    device = DeviceInfo(DEVICE_ID, DeviceKind.VIRTUAL, "Labrig virtual camera", "markers")
    attempts = []
    for _ in range(count):
        camera = VirtualCamera("markers", frames_limit=int(seconds * 30))
        recorder = Recorder(
            services.store, camera, device, Mode(1280, 720, 30.0), session_id=session_id
        )
        recorder.start()
        recorder.wait(120)
        capture_id = recorder.stop().capture_id
        attempts.append(
            create_attempt(
                services.queue,
                session_id,
                [capture_id],
                attempt_pipeline(services.store, capture_id),
            )
        )
    return attempts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 s phases, 2 attempts to analyse")
    parser.add_argument(
        "--seconds", type=float, default=None, help="length of each phase (default 8, --quick 3)"
    )
    args = parser.parse_args(argv)
    seconds = args.seconds or (3.0 if args.quick else 8.0)
    attempts_to_analyse = 2 if args.quick else 8

    app = QApplication.instance() or QApplication(sys.argv[:1])
    root = Path(tempfile.mkdtemp(prefix="bench-gui-"))
    services = bootstrap(root / "store")
    gui = build_main_window(services)
    window = gui.window
    window.resize(1280, 800)
    window.show()
    services.start()
    print(f"# {os.cpu_count()} cpus, Qt platform {app.platformName()}, store {root}")
    print(
        f"# recording {MODE.label()} from the virtual camera; analysing {attempts_to_analyse} "
        f"prerecorded 720p attempts with the GUI's executor ({gui.executor.workers} workers); "
        f"timer {TICK_MS} ms"
    )
    attempts = prerecord_attempts(services, attempts_to_analyse, seconds=2.0)

    window.show_page("capture")
    page = window.pages.currentWidget()
    assert isinstance(page, CapturePage)
    for edit, text in zip(page.form.edits, ("BENCH-1", "latency", "bench"), strict=True):
        edit.setText(text)
    page.form.button.click()
    wait_until(lambda: page.session is not None, 10, "the session")

    probe = LatencyProbe()
    spin(500)
    probe.start()
    spin(int(seconds * 1000))
    idle = probe.stop()

    picker = page.picker
    wait_until(lambda: picker.row_of(DEVICE_ID) is not None, 20, "discovery")
    picker.table.selectRow(picker.row_of(DEVICE_ID))  # type: ignore[arg-type]
    index = next(
        i for i in range(picker.mode_combo.count()) if picker.mode_combo.itemData(i) == MODE
    )
    picker.mode_combo.setCurrentIndex(index)
    picker.mode_combo.activated.emit(index)
    wait_until(
        lambda: page.record_button.isEnabled() and page.preview.running,
        30,
        "the preview in 720p60",
        page,
    )

    gui.executor.start()
    # Record verifies the camera again: under load it may measure short of 60 fps
    for click in range(1, 4):
        wait_until(page.record_button.isEnabled, 30, "the Record button", page)
        # the page is STARTING now; it ends RECORDING, or READY if refused
        page.record_button.click()
        wait_until(lambda: page.phase in (Phase.RECORDING, Phase.READY), 30, "recording", page)
        if page.phase is Phase.RECORDING:
            break
        print(f"# Record click {click} refused: {page.message.text()}")
    else:
        raise SystemExit("recording was refused three times")
    probe.start()
    spin(int(seconds * 1000))
    loaded = probe.stop()
    status = page.recording_status
    page.stop_button.click()
    wait_until(lambda: page.phase is Phase.READY, 60, "the recording to be saved")
    done = sum(
        1
        for j in services.queue.jobs()
        if j.attempt_id in attempts and j.state in (JobState.SUCCEEDED, JobState.SUCCEEDED_DEGRADED)
    )

    window.close()
    gui.executor.shutdown(10_000)
    services.close()

    for name, values in (
        ("peer: idle window", idle),
        ("load: 720p60 preview + recording + analysis", loaded),
    ):
        print(
            f"{name:46s} n={len(values):5d}  p50 {percentile(values, 50):6.2f} ms  p99 "
            f"{percentile(values, 99):6.2f} ms  max {max(values):7.2f} ms  mean "
            f"{statistics.fmean(values):5.2f} ms"
        )
    if status is not None:
        print(
            f"recording during the load: {status.frames} frames in {status.elapsed_s:.1f} s "
            f"({status.fps:.1f} fps), {status.dropped} dropped"
        )
    print(f"analysis jobs finished by the end of the load (of {3 * len(attempts)}): {done}")
    p99 = percentile(loaded, 99)
    print(f"target p99 <= 50 ms: {'met' if p99 <= 50 else 'NOT met'}")
    print(f"gui_p99_ms={p99:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
