"""OpenSim's text formats, written without OpenSim: a result's markers as a TRC file and an
instrument's samples as a storage file (``.mot``; the same writer serves ``.sto``).

- TRC (``PathFileType 4``, ``(X/Y/Z)``): the header (``DataRate``, ``CameraRate``, ``NumFrames``,
  ``NumMarkers``, ``Units``, ``OrigDataRate``, ``OrigDataStartFrame``, ``OrigNumFrames``), the
  marker-name row (``Frame#``, ``Time``, each label over its three columns), the ``X1 Y1 Z1 …``
  row, a blank line, then one row per frame: ``Frame#`` from 1, consecutive; ``Time`` in s from the
  attempt's zero; x, y, z of each marker in the table's units (mm) to 1e-5, in force (corrected
  where a reviewer corrected the tracks). A 2-D table on a calibrated plane has z = 0. Axes are the
  rig's (or the plane's) as measured: OpenSim's model frame (y up) is not imposed. A marker not
  seen in a frame has ``nan`` in its three fields. Lines end in CRLF, and (as OpenSim's own writer
  ends them) in a tab.
- MOT (storage ``version=1``): ``name``, ``version=1``, ``nRows``, ``nColumns`` (time included),
  ``inDegrees=no``, ``units=time:s Fx:N …`` (OpenSim's columns have no units: it keeps the line
  as the table's ``units`` metadata), ``endheader``; then ``time`` and the channel names, and one
  row per sample (time in s to 1 µs, values to 9 significant digits, ``nan`` where missing).

Why ``nan`` and CRLF in the TRC: OpenSim's ``TRCFileAdapter`` reads blank fields, ``nan`` and
``NaN`` alike as missing, and reads LF and CRLF; the ``trc-data-reader`` package splits rows on
whitespace, so blank fields would shift the next marker's values into the missing one, and it
splits the file on the platform's line end, so on Windows it cannot read an LF-only file.

In a MOT, OpenSim's ``TimeSeriesTable`` (``STOFileAdapter``) reads ``nan`` as NaN, but its older
``Storage`` class (external loads, the GUI's plotter) stops reading at the first row holding one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from labrig.errors import LabrigError
from labrig.export.tables import AnalogTable, ResultTables

TRC_HEADER = (
    "DataRate",
    "CameraRate",
    "NumFrames",
    "NumMarkers",
    "Units",
    "OrigDataRate",
    "OrigDataStartFrame",
    "OrigNumFrames",
)
TRC_EOL = "\r\n"  # what OpenSim and trc-data-reader both read on every platform
MOT_EOL = "\n"
POSITION = "%.5f"  # mm to 1e-5: well inside any tracker's precision, ~10 characters a value
TIME = "%.6f"  # s to 1 µs
VALUE = "%.9g"  # an instrument's values in its own units: 9 significant digits


class FormatUnitsError(LabrigError):
    """A result measured in pixels asked for as a format that holds lengths (TRC, for OpenSim)."""

    code = "LABRIG_FORMAT_NEEDS_CALIBRATION"


def write_trc(tables: ResultTables, path: Path) -> None:
    """``path``: the result's marker positions in force as an OpenSim TRC file. 3-D tables as
    they are (mm); a 2-D table on a calibrated plane with z = 0. Refused (:class:`FormatUnitsError`,
    before anything is written) when the positions are picture px."""
    points = tables.points
    if points.units == "px" or points.kind == "image":
        raise FormatUnitsError(
            f"result {tables.result_id} is measured in pixels (its camera has no plane or rig "
            "calibration), and a TRC file holds lengths for OpenSim. Calibrate the camera (plane "
            "or rig) and reprocess the attempt, or leave trc out of --format. Nothing was written"
        )
    xyz = points.xyz_in_force()
    frames, markers = xyz.shape[0], xyz.shape[1]
    rate = _short(points.rate_hz)
    values = (rate, rate, str(frames), str(markers), points.units, rate, "1", str(frames))
    labels = [m.label for m in points.markers]
    head = [
        f"PathFileType\t4\t(X/Y/Z)\t{_one_line(path.name)}",
        "\t".join(TRC_HEADER),
        "\t".join(values),
        "\t".join(["Frame#", "Time", *(f"{label}\t\t" for label in labels)]) + "\t",
        "\t".join(["", "", *(f"X{k}\tY{k}\tZ{k}" for k in range(1, markers + 1))]) + "\t",
        "",
    ]
    row = "\t".join(["%d", TIME, *([POSITION] * (3 * markers))]) + "\t" + TRC_EOL
    flat = xyz.reshape(frames, 3 * markers)
    times = np.asarray(points.times_s, dtype=np.float64)
    rows = (row % (i + 1, times[i], *flat[i].tolist()) for i in range(frames))
    _write(path, (line + TRC_EOL for line in head), rows)


def write_mot(analog: AnalogTable, path: Path, zero_s: float = 0.0) -> None:
    """``path``: one instrument's samples as an OpenSim storage file (``.mot`` or ``.sto``: OpenSim
    reads both alike), times ``analog.times_s - zero_s`` (with the default zero they share the TRC's
    time axis). Columns are named by channel; their units are on the header's ``units`` line."""
    times = np.asarray(analog.times_s, dtype=np.float64) - zero_s
    values = np.asarray(analog.values, dtype=np.float64).reshape(len(times), len(analog.channels))
    units = " ".join(["time:s", *(f"{c.name}:{_unit(c.unit)}" for c in analog.channels)])
    head = [
        _one_line(analog.name) or _one_line(analog.device_id) or "instrument",
        "version=1",
        f"nRows={len(times)}",
        f"nColumns={len(analog.channels) + 1}",
        "inDegrees=no",
        f"units={units}",
        "endheader",
        "\t".join(["time", *(c.name for c in analog.channels)]),
    ]
    row = "\t".join([TIME, *([VALUE] * len(analog.channels))]) + MOT_EOL
    rows = (row % (times[i], *values[i].tolist()) for i in range(len(times)))
    _write(path, (line + MOT_EOL for line in head), rows)


def _short(value: float) -> str:
    """A rate as few digits as hold it to 1e-6: ``30``, ``29.97003``."""
    return np.format_float_positional(float(value), precision=6, trim="-")


def _unit(text: str) -> str:
    return re.sub(r"\s+", "_", text.strip())


def _one_line(text: str) -> str:
    """A header field: no line breaks or tabs, and no ``=`` (OpenSim would read a key)."""
    return " ".join(str(text).replace("=", " ").split())


def _write(path: Path, head: Iterable[str], rows: Iterable[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.writelines(head)
        fh.writelines(rows)
