"""The self-test's ``export`` check: each interchange format written and read back by its own
library, so a frozen bundle that lost a format library's compiled part or data files (ezc3d's
``libezc3d.so``, pynwb's and hdmf's schema YAML, ndx-pose's spec, FFmpeg's encoders) fails here and
not in a user's export.

The self-test's result is uncalibrated (px), which TRC cannot hold: its CSV, C3D, NWB and overlay
video are exported from it through the export service, and a TRC and a MOT are written from a small
3-D table of known positions and read back as text.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from labrig.bootstrap import Services
from labrig.export.tables import AnalogTable, Channel, Marker, PointTable, ResultTables
from labrig.health import Check, Status

EXPORTED = ("csv", "c3d", "nwb", "video")


def check_formats(services: Services, result_id: str, scratch: Path) -> Check:
    """Export ``result_id`` in :data:`EXPORTED` into ``scratch`` and read every file back, then
    write and read a TRC and a MOT."""
    report = services.export.export([result_id], scratch, formats=EXPORTED)
    [entry] = report.results
    files = {fmt: [report.bundle / f for f in names] for fmt, names in entry["formats"].items()}
    missing = [f for f in EXPORTED if not files.get(f)]
    if missing:
        return Check("export", Status.FAIL, f"no {', '.join(missing)} file was written")
    found = [
        _read_csv(files["csv"][0]),
        _read_c3d(files["c3d"][0]),
        _read_nwb(files["nwb"][0]),
        _read_video(files["video"][0]),
        _trc_and_mot(scratch),
    ]
    return Check("export", Status.OK, "; ".join(found))


def _read_csv(path: Path) -> str:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = sum(1 for _ in csv.DictReader(fh))
    return f"tidy CSV {rows} rows"


def _read_c3d(path: Path) -> str:
    import ezc3d

    c3d = ezc3d.c3d(str(path))
    points = c3d["data"]["points"]
    return f"C3D {points.shape[1]} markers × {points.shape[2]} frames"


def _read_nwb(path: Path) -> str:
    from pynwb import NWBHDF5IO

    with NWBHDF5IO(str(path), "r", load_namespaces=True) as io:
        nwb = io.read()
        behavior = nwb.processing["behavior"].data_interfaces.values()
        series = sum(len(getattr(p, "pose_estimation_series", ())) for p in behavior)
    return f"NWB {series} pose series"


def _read_video(path: Path) -> str:
    import cv2

    capture = cv2.VideoCapture(str(path))
    frames = 0
    while capture.read()[0]:
        frames += 1
    capture.release()
    if not frames:
        raise RuntimeError(f"{path.name} has no frame OpenCV can decode")
    return f"video {frames} frames ({path.suffix})"


def _trc_and_mot(scratch: Path) -> str:
    from labrig.export.formats.opensim import write_mot, write_trc

    tables = _known_tables()
    trc, mot = scratch / "known.trc", scratch / "known.mot"
    write_trc(tables, trc)
    write_mot(tables.analog[0], mot)
    rows = [line.split("\t") for line in trc.read_text(encoding="utf-8").splitlines()]
    header = dict(zip(rows[1], rows[2], strict=False))
    values = [float(v) for v in rows[6][2:5]]
    if int(header["NumFrames"]) != 3 or not np.allclose(values, tables.points.automatic[0, 0]):
        raise RuntimeError(f"the TRC file reads back as {header} and {values}")
    lines = mot.read_text(encoding="utf-8").splitlines()
    data = lines[lines.index("endheader") + 2 :]
    if len(data) != 4 or float(data[1].split("\t")[1]) != 2.0:
        raise RuntimeError(f"the MOT file reads back as {data}")
    return "TRC 3 frames and MOT 4 samples read back"


def _known_tables() -> ResultTables:
    xyz = np.arange(9, dtype=np.float64).reshape(3, 1, 3) + 100.0
    points = PointTable(
        kind="3d",
        camera=None,
        units="mm",
        rate_hz=30.0,
        frames=np.arange(3, dtype=np.int64),
        times_s=np.arange(3) / 30.0,
        markers=(Marker("M0", 0, None, "a known marker"),),
        automatic=xyz,
    )
    analog = AnalogTable(
        "plate",
        "self-test",
        100.0,
        np.arange(4) / 100.0,
        (Channel("Fz", "N"),),
        np.arange(4, dtype=np.float64).reshape(4, 1) * 2.0,
    )
    return ResultTables("self-test", "self-test", 1, {}, "", points, (), (), (analog,))
