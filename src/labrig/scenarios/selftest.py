"""``labrig --self-test``: does this installation work, in source or frozen form?

One line per check, PASS / WARN / FAIL / SKIP, and a non-zero exit on any FAIL:

* ``qt``: a QApplication on the offscreen platform (or ``$QT_QPA_PLATFORM`` when set) renders a
  widget and grabs it, in a child process, because a missing platform plugin aborts the process;
* ``qt-xcb`` (Linux): the window's platform plugin and its libraries load (a WARN only: a headless
  worker never opens a window);
* ``opencv``: an MJPG/AVI encode and decode round trip (the recording format);
* ``resources``: the device inventory and the named boards shipped in ``labrig.resources``;
* ``usb``: the libusb library that lists USB instruments (shipped by libusb-package);
* ``migrations``: every Alembic migration applied to a new store;
* ``recording``: the virtual camera records one second into a committed capture;
* ``pipeline``: the default analysis pipeline runs on it through the job queue and publishes;
* ``export``: that result exported as tidy CSV, C3D, NWB and an overlay video, each read back by its
  own library, and a TRC and a MOT of known values (:mod:`labrig.scenarios.selftest_formats`).

Everything happens in a scratch folder that is removed afterwards: the self-test never opens the
user's data folder, ``--store`` or ``$LABRIG_STORE``. Qt is never imported in this process.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from sqlalchemy import select

from labrig import __version__
from labrig.bootstrap import bootstrap
from labrig.calibration import load_boards
from labrig.capture import (
    DEFAULT_MODE,
    Recorder,
    VirtualCamera,
    create_session,
    discover_virtual,
    load_inventory,
)
from labrig.health import Check, Status, check_database, check_opencv, check_qt, check_qt_plugin
from labrig.jobs import ThreadExecutor
from labrig.pipeline import save_attempt
from labrig.store.models import AnalysisResultRecord

RECORD_FRAMES = 30  # one second of the virtual camera at 30 fps
RECORD_TIMEOUT_S = 60.0
Say = Callable[[str], None]
LABELS = {Status.OK: "PASS", Status.WARN: "WARN", Status.FAIL: "FAIL", Status.SKIP: "SKIP"}


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    """Run ``check``; an exception becomes its FAIL line instead of ending the self-test."""
    started = time.monotonic()
    try:
        result = check()
    except Exception as exc:  # noqa: BLE001 - every failure is reported as a line, with its type and message
        result = Check(
            name,
            Status.FAIL,
            f"{type(exc).__name__}: {exc}",
            "report this with the full output of 'labrig --self-test'",
        )
    return replace(
        result, name=name, detail=f"{result.detail} ({time.monotonic() - started:.1f} s)"
    )


def _check_resources() -> Check:
    inventory, boards = load_inventory(), load_boards()
    return Check(
        "resources",
        Status.OK,
        f"{len(inventory.entries)} devices in {inventory.source}, {len(boards)} named boards",
    )


def _check_usb() -> Check:
    import libusb_package

    library = libusb_package.get_library_path() or "the system's libusb"
    if libusb_package.get_libusb1_backend() is None:
        return Check(
            "usb",
            Status.FAIL,
            "no libusb library was found: USB instruments cannot be listed",
            "reinstall Labrig (the bundle ships libusb inside libusb_package/)",
        )
    return Check("usb", Status.OK, f"libusb backend from {library}")


def _check_migrations(root: Path) -> Check:
    check = check_database(root)
    if check.status is Status.FAIL:
        return check
    return replace(check, detail=f"all migrations applied to a new store: {check.detail}")


class _Scratch:
    """The recording and pipeline checks, on services bootstrapped over a scratch store."""

    def __init__(self, root: Path) -> None:
        self.services = bootstrap(root)
        self.session_id = self.capture_id = self.result_id = ""

    def record(self) -> Check:
        [device] = [d for d in discover_virtual() if d.address == "markers"]
        self.session_id = create_session(self.services.queue, "SELF-TEST", "self-test", "labrig")
        camera = VirtualCamera("markers", frames_limit=RECORD_FRAMES)
        recorder = Recorder(
            self.services.store, camera, device, DEFAULT_MODE, session_id=self.session_id
        )
        recorder.start()
        recorder.wait(RECORD_TIMEOUT_S)
        result = recorder.stop()
        if result.state != "committed" or result.frame_count < RECORD_FRAMES // 2:
            return Check(
                "recording",
                Status.FAIL,
                f"capture {result.state} with {result.frame_count} of {RECORD_FRAMES} frames",
                "run 'labrig doctor'; check free space and CPU load",
            )
        self.capture_id = result.capture_id
        return Check(
            "recording",
            Status.OK,
            f"virtual camera {DEFAULT_MODE.label()}: {result.frame_count} frames "
            f"({result.dropped_frames} dropped) committed in {result.segments} segment(s)",
        )

    def analyse(self) -> Check:
        services = self.services
        attempt_id = save_attempt(services.queue, self.session_id, [self.capture_id])
        ThreadExecutor(services.queue, workers=2).run(drain=True)
        services.dispatcher.dispatch_all()
        with services.store.read() as session:
            row = session.scalars(
                select(AnalysisResultRecord).where(AnalysisResultRecord.attempt_id == attempt_id)
            ).one_or_none()
        stages = ", ".join(f"{j.stage_id} {j.state.value}" for j in services.queue.jobs())
        if row is None:
            return Check(
                "pipeline",
                Status.FAIL,
                f"no result was published; jobs: {stages}",
                "run 'labrig --store DIR jobs incidents' on a copy of this test, or report it",
            )
        document = json.loads(row.document)
        if document["status"] != "published" or not document["metrics"]:
            return Check(
                "pipeline",
                Status.FAIL,
                f"result {document['status']}: {'; '.join(document['reasons'])}",
            )
        units = document["units"] or {}
        self.result_id = row.id
        return Check(
            "pipeline",
            Status.OK,
            f"{stages}; result published with {len(document['metrics'])} tracks "
            f"in {units.get('length')}/{units.get('time')} (uncalibrated, as expected)",
        )

    def export(self, folder: Path) -> Check:
        from labrig.scenarios.selftest_formats import check_formats

        folder.mkdir()
        return check_formats(self.services, self.result_id, folder)

    def close(self) -> None:
        self.services.close()


def _checks(scratch: Path) -> Iterator[Check]:
    platform = os.environ.get("QT_QPA_PLATFORM") or "offscreen"
    yield _guarded("qt", lambda: check_qt(grab=True, platform=platform))
    if sys.platform.startswith("linux"):
        yield _guarded("qt-xcb", lambda: check_qt_plugin("xcb"))
    yield _guarded("opencv", check_opencv)
    yield _guarded("resources", _check_resources)
    yield _guarded("usb", _check_usb)
    migrations = _guarded("migrations", lambda: _check_migrations(scratch / "store"))
    yield migrations
    if migrations.status is Status.FAIL:
        yield from (
            Check(n, Status.SKIP, "not run: the store did not open")
            for n in ("recording", "pipeline", "export")
        )
        return
    try:
        services = _Scratch(scratch / "store")
    except Exception as exc:  # noqa: BLE001 - reported as the recording's FAIL line
        yield Check(
            "recording", Status.FAIL, f"the services did not start: {type(exc).__name__}: {exc}"
        )
        yield Check("pipeline", Status.SKIP, "not run: no recording")
        yield Check("export", Status.SKIP, "not run: no recording")
        return
    try:
        recording = _guarded("recording", services.record)
        yield recording
        pipeline = (
            _guarded("pipeline", services.analyse)
            if recording.status is Status.OK
            else Check("pipeline", Status.SKIP, "not run: no recording")
        )
        yield pipeline
        yield (
            _guarded("export", lambda: services.export(scratch / "export"))
            if pipeline.status is Status.OK
            else Check("export", Status.SKIP, "not run: no published result")
        )
    finally:
        services.close()


def describe_installation() -> str:
    if getattr(sys, "frozen", False):
        return f"frozen bundle in {Path(sys.executable).parent}"
    return f"source, Python {sys.version.split()[0]} at {sys.executable}"


def run_self_test(say: Say = print) -> int:
    """Run every check in a scratch folder, printing each line as it completes;
    0 when none failed."""
    say(f"Labrig {__version__} self-test ({describe_installation()})")
    with tempfile.TemporaryDirectory(prefix="labrig-selftest-") as tmp:
        checks = []
        for check in _checks(Path(tmp)):
            checks.append(check)
            say(f"  {LABELS[check.status]:<4}  {check.name:<10}  {check.detail}")
            if check.fix and check.status is not Status.OK:
                say(f"        {'':<11} what to do: {check.fix}")
    failed = [c.name for c in checks if c.status in (Status.FAIL, Status.SKIP)]
    if failed:
        say(f"Self-test FAILED: {', '.join(failed)} ({len(failed)} of {len(checks)} checks).")
        return 1
    say(f"Self-test passed: {len(checks)} checks.")
    return 0
