"""Health checks of this workstation, shared by ``labrig doctor``, ``labrig
--self-test`` and the GUI.

Each check returns a :class:`Check` instead of raising, so a report can list
every problem at once; a failing check names what to do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from labrig.domain.storage import PressureLevel, pressure_level
from labrig.errors import CatalogDamagedError, LabrigError
from labrig.store import Store, damage, migrate, open_store, paths
from labrig.store.dialects.sqlite import PageCheck

QT_PROBE_TIMEOUT_S = 60


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # not run, because a check it needs failed


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def module_command(module: str) -> list[str]:
    """The command that runs ``python -m module`` with this installation's Python.

    Frozen, ``sys.executable`` is the bundle's ``labrig``, whose launcher (``app/labrig_app.py``)
    accepts the same ``-m labrig.…`` arguments, so one command serves both forms.
    """
    return [sys.executable, "-m", module]


def check_qt(*, grab: bool = False, platform: str | None = None) -> Check:
    """Start Qt in a child process: a missing platform plugin aborts the process that tries.

    ``grab``: also build a QApplication, render a widget and grab it (fonts, raster paint).
    ``platform``: the Qt platform plugin to ask for; default ``$QT_QPA_PLATFORM``, else
    Qt's own choice.
    """
    return QtCheck(grab=grab, platform=platform).result()


class QtCheck:
    """:func:`check_qt` begun: the child process starts at once, and :meth:`result` waits for its
    answer, so the window's start goes on (loading the services' modules) while Qt is tried."""

    def __init__(self, *, grab: bool = False, platform: str | None = None) -> None:
        env = os.environ.copy()
        if platform:
            env["QT_QPA_PLATFORM"] = platform
        self._grab = grab
        self._proc = subprocess.Popen(
            module_command("labrig.ui.shell.probe") + (["--grab"] if grab else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def result(self) -> Check:
        proc = self._proc
        try:
            stdout, stderr = proc.communicate(timeout=QT_PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Check(
                "qt",
                Status.FAIL,
                f"Qt did not start within {QT_PROBE_TIMEOUT_S} s",
                "check the display connection, or set QT_QPA_PLATFORM=offscreen for headless use",
            )
        if proc.returncode != 0:
            return Check(
                "qt",
                Status.FAIL,
                f"Qt could not start its platform plugin: {_qt_failure(stderr)}",
                "install Qt's runtime libraries (docs/install.md), or reinstall Labrig if its Qt "
                "plugins are missing; on a machine with no screen (a server, ssh) set "
                "QT_QPA_PLATFORM=offscreen",
            )
        facts = json.loads(stdout.strip().splitlines()[-1])
        grabbed = f"; widget grab {facts['grab']}" if self._grab else ""
        return Check(
            "qt",
            Status.OK,
            f"Qt {facts['qt']} (PySide6 {facts['pyside']}), platform plugin "
            f"'{facts['platform']}'{grabbed}",
        )


def check_qt_plugin(name: str) -> Check:
    """Load (without starting) the platform plugin ``name`` in a child process: are its
    libraries installed?

    Needs no display, so a headless self-test can tell whether the window's plugin (``xcb`` on a
    Linux desktop) would load there. A WARN, not a FAIL: a headless worker never opens a window.
    """
    check = f"qt-{name}"
    try:
        proc = subprocess.run(
            [*module_command("labrig.ui.shell.probe"), "--plugin", name],
            capture_output=True,
            text=True,
            timeout=QT_PROBE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return Check(
            check, Status.WARN, f"loading Qt's '{name}' plugin took over {QT_PROBE_TIMEOUT_S} s"
        )
    if proc.returncode != 0:
        return Check(
            check,
            Status.WARN,
            f"the window's platform plugin '{name}' does not load: {_qt_failure(proc.stderr)}",
            "install the Qt runtime libraries listed in docs/install.md "
            "(the .deb's dependencies pull them); headless commands work without them",
        )
    return Check(
        check,
        Status.OK,
        f"the window's platform plugin '{name}' loads (its libraries are installed)",
    )


def _qt_failure(stderr: str) -> str:
    """Qt's own words: the line naming the plugin it could not load, and the plugins it has."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [
        line
        for line in lines
        if "could not" in line.lower() or line.startswith("Available platform plugins")
    ]
    return " ".join(said or lines[-1:]) or "no message"


def check_opencv() -> Check:
    """OpenCV's video back ends, and a real MJPG/AVI write and read-back (the recording format)."""
    import cv2
    import numpy as np

    backends = [cv2.videoio_registry.getBackendName(b) for b in cv2.videoio_registry.getBackends()]
    with tempfile.TemporaryDirectory(prefix="labrig-doctor-") as tmp:
        target = str(Path(tmp) / "probe.avi")
        writer = cv2.VideoWriter(target, cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (64, 48))
        for i in range(5):
            writer.write(np.full((48, 64, 3), i * 40, dtype=np.uint8))
        writer.release()
        reader = cv2.VideoCapture(target)
        frames = 0
        while reader.read()[0]:
            frames += 1
        reader.release()
    if frames != 5:
        return Check(
            "opencv",
            Status.FAIL,
            f"OpenCV {cv2.__version__} wrote 5 MJPG frames and read back {frames}",
            "reinstall opencv-python-headless (only one cv2 package may be installed)",
        )
    return Check(
        "opencv",
        Status.OK,
        f"OpenCV {cv2.__version__}; MJPG/AVI write+read ok; video back ends: {', '.join(backends)}",
    )


def check_store_path(root: Path) -> Check:
    try:
        paths.ensure_writable(root)
    except LabrigError as exc:
        return Check("store", Status.FAIL, f"{exc.code}: {exc.message}")
    return Check("store", Status.OK, f"{root} is writable")


def check_database(root: Path) -> Check:
    try:
        store = open_store(root)
    except LabrigError as exc:
        return Check("database", Status.FAIL, f"{exc.code}: {exc.message}")
    try:
        revision = store.revision()
    finally:
        store.close()
    if revision != migrate.head_revision():
        return Check(
            "database",
            Status.FAIL,
            f"schema at {revision}, expected {migrate.head_revision()}",
            "restart Labrig so it migrates the database",
        )
    return Check(
        "database",
        Status.OK,
        f"{root / paths.DB_FILENAME} (schema {revision}, WAL, synchronous=FULL)",
    )


def check_catalog_pages(root: Path) -> Check:
    """SQLite's integrity check of the catalog's pages: damage found is recorded
    (``labrig.db.damaged``, so every command that writes refuses); a check that passes removes a
    record of earlier damage (the catalog was restored). PostgreSQL checks its own pages."""
    try:
        store = open_store(root)
    except LabrigError as exc:
        return Check("pages", Status.FAIL, f"{exc.code}: {exc.message}")
    try:
        if store.dialect != "sqlite":
            return Check(
                "pages",
                Status.OK,
                "the PostgreSQL server checks its own pages (data checksums, when the cluster has "
                "them; its optional amcheck extension verifies indexes)",
            )
        findings = PageCheck(store.db_path).run()  # run while the store is open: no -wal is left
        if findings:
            return _damaged(damage_found(store, "labrig doctor", findings))
        cleared = damage.forget(root)
    except LabrigError as exc:  # the check could not read the file, or the marker stays
        return Check("pages", Status.FAIL, f"{exc.code}: {exc.message}")
    finally:
        store.close()
    detail = f"SQLite's integrity_check finds {store.db_path} whole"
    if cleared is not None:
        detail += (
            f"; the damage recorded{f' at {cleared.found_at}' if cleared.found_at else ''} is "
            f"gone, so {damage.MARKER_NAME} was removed and writing is allowed again"
        )
    return Check("pages", Status.OK, detail)


def damage_found(store: Store, found_by: str, findings: list[str]) -> damage.DamageV1:
    """Record damage that ``found_by`` found in the catalog of ``store``: from now on every write
    to it is refused, here and in every later process (stop this process's own writers first, so
    none of them meets the refusal halfway through)."""
    record = damage.remember(
        store.root,
        database=store.db_path,
        store_id=store.store_id,
        findings=findings,
        found_by=found_by,
    )
    store.recheck_damage()
    return record


def page_check(store: Store) -> PageCheck | None:
    """The integrity check of the catalog of ``store``, to run in the background (it reads the
    whole file); None on PostgreSQL, which checks its own pages."""
    return PageCheck(store.db_path) if store.dialect == "sqlite" else None


def _damaged(record: damage.DamageV1) -> Check:
    shown = "; ".join(record.findings[:3])
    more = f" (and {len(record.findings) - 3} more)" if len(record.findings) > 3 else ""
    return Check(
        "pages",
        Status.FAIL,
        f"{CatalogDamagedError.code}: SQLite's integrity_check found damage in {record.database}: "
        f"{shown}{more}. Every command that writes is refused until it is repaired; reading, "
        "'labrig verify' and export still work",
        damage.REPAIR,
    )


def check_free_space(root: Path) -> Check:
    free = shutil.disk_usage(root).free
    level = pressure_level(free)
    detail = f"{free / 1024**3:.1f} GiB free on the data volume (pressure: {level.label})"
    if level is PressureLevel.CRITICAL:
        return Check(
            "space", Status.FAIL, detail, "free disk space or move the data folder with --store"
        )
    if level >= PressureLevel.ELEVATED:
        return Check(
            "space", Status.WARN, detail, "free disk space soon; recordings stop when it runs out"
        )
    return Check("space", Status.OK, detail)
