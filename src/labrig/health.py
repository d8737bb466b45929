"""Health checks of this workstation, shared by ``labrig doctor`` and the GUI.

Each check returns a :class:`Check` instead of raising, so a report can list
every problem at once; a failing check names what to do.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from labrig.domain.storage import PressureLevel, pressure_level
from labrig.errors import LabrigError
from labrig.store import migrate, open_store, paths


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


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
        return Check("opencv", Status.FAIL, f"OpenCV {cv2.__version__} wrote 5 MJPG frames and read back {frames}",
                     "reinstall opencv-python-headless (only one cv2 package may be installed)")
    return Check("opencv", Status.OK, f"OpenCV {cv2.__version__}; MJPG/AVI write+read ok; "
                 f"video back ends: {', '.join(backends)}")


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
        return Check("database", Status.FAIL, f"schema at {revision}, expected {migrate.head_revision()}",
                     "restart Labrig so it migrates the database")
    return Check("database", Status.OK, f"{root / paths.DB_FILENAME} (schema {revision}, WAL, synchronous=FULL)")


def check_free_space(root: Path) -> Check:
    free = shutil.disk_usage(root).free
    level = pressure_level(free)
    detail = f"{free / 1024**3:.1f} GiB free on the data volume (pressure: {level.label})"
    if level is PressureLevel.CRITICAL:
        return Check("space", Status.FAIL, detail, "free disk space or move the data folder with --store")
    if level >= PressureLevel.ELEVATED:
        return Check("space", Status.WARN, detail, "free disk space soon; recordings stop when it runs out")
    return Check("space", Status.OK, detail)
