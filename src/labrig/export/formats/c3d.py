"""A result as one C3D file, written with ezc3d: its markers' positions in force, its instruments'
samples on the frames' clock, and where it came from.

- Points (``POINT``): one per marker (``LABELS`` its label, ``DESCRIPTIONS`` what it is), one
  frame per row of the result's table, in force (corrected where a reviewer corrected the tracks).
  ``UNITS`` is the table's: ``mm`` for a rig's 3-D points or a calibrated plane, ``px`` for a
  camera's picture (its axes: x right, y down); a 2-D table has z = 0. ``RATE`` is the frame rate.
  The header's first frame is the table's first frame + 1 (C3D counts from 1) when its frames are
  consecutive and fit C3D's 16-bit frame numbers; else 1.
- Missing points (not seen, no gap fill) are invalid, as C3D marks them: x = y = z = 0 and a
  residual of -1. ezc3d reads them as NaN with residual -1, the ``c3d`` package as residual -1.
- Residuals: for a rig's 3-D point that the cameras solved, its reprojection error rounded up to a
  whole px (1 to 255); 0 for a position no camera solved there (a reviewer's gap fill or
  correction) and for every seen 2-D point. Whole px because ezc3d writes a residual as one byte of
  ``|POINT:SCALE|``, which its header fixes at -1 (a scale the ``c3d`` package would refuse as
  inconsistent). ezc3d reads them back; readers following the C3D manual (the ``c3d`` package)
  read 0, as ezc3d 1.7 stores that byte where the manual has the camera mask (compare ezc3d #386).
- Analog (``ANALOG``), only when the attempt has instruments: C3D needs one rate for every
  channel, a whole multiple of the frame rate. ``RATE`` is frame rate × ⌈fastest instrument's rate
  / frame rate⌉, and every instrument's samples are linearly interpolated onto it: frame i's k-th
  sample at ``times_s[0] + (i + k/ratio) / frame rate``. Outside an instrument's recorded span
  (and where it has no sample) a channel holds 0: C3D analog has no missing value. ``LABELS`` are
  ``<instrument>_<channel>`` (letters, digits and ``_``, at most 30, unique), ``UNITS`` the
  channel's, ``DESCRIPTIONS`` the instrument, its own rate and span.
- ``LABRIG``: every provenance key (upper-cased), ``RESULT_ID``, ``ATTEMPT_ID``,
  ``ATTEMPT_NUMBER``, ``SUBJECT``, ``PROTOCOL``, ``DATA`` (``effective`` when a reviewer's
  corrections are in force, else ``automatic``), ``KIND``, ``CAMERA``, ``FIRST_FRAME`` (the
  table's, from 0), ``START_S`` (its first frame's time from the attempt's zero), ``ANALOG_RATES``
  (each instrument's own rate before resampling). Every value is text; one longer than a C3D
  string holds (255 bytes) is split into pieces, in order, to be joined. ``SUBJECTS`` names the
  subject, as Vicon's files do.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import ezc3d
import numpy as np

from labrig.export.tables import Array, PointTable, ResultTables, unique_names

TEXT_BYTES = 255  # a C3D string's length is one byte
LABEL_CHARS = 30  # as marker labels (labrig.export.tables.marker_label)
MAX_RESIDUAL = 255.0  # ezc3d writes a residual as one byte of |POINT:SCALE| (= 1)
MAX_FRAME = 0xFFFF  # the header's frame numbers are 16-bit words


@dataclass(frozen=True)
class _Analog:
    rate_hz: float
    values: Array  # C × N·ratio
    labels: list[str]
    units: list[str]
    descriptions: list[str]
    original_rates: str


def write_c3d(tables: ResultTables, path: Path) -> None:
    """``path``: the result's markers in force, its instruments resampled onto the frames' clock
    and its provenance (the ``LABRIG`` group), as one C3D file (see the module's notes)."""
    points = tables.points
    xyz = points.xyz_in_force()
    frames, markers = xyz.shape[0], xyz.shape[1]
    out = ezc3d.c3d()
    point = out["parameters"]["POINT"]
    point["RATE"]["value"] = [float(points.rate_hz)]
    point["UNITS"]["value"] = [points.units]
    point["LABELS"]["value"] = [m.label for m in points.markers]
    point["DESCRIPTIONS"]["value"] = [_fit(m.description) for m in points.markers]
    data = np.ones((4, markers, frames))
    data[:3] = xyz.transpose(2, 1, 0)
    out["data"]["points"] = data
    out["data"]["meta_points"]["residuals"] = _residuals(points, xyz).T[np.newaxis]
    numbers = np.asarray(points.frames, dtype=np.int64)
    if frames and bool(np.all(np.diff(numbers) == 1)) and 0 <= numbers[0] <= MAX_FRAME - frames:
        out["header"]["points"]["first_frame"] = int(numbers[0])  # ezc3d writes it + 1

    analog = _analog(tables, frames)
    if analog is not None:
        group = out["parameters"]["ANALOG"]
        group["RATE"]["value"] = [analog.rate_hz]
        group["LABELS"]["value"] = analog.labels
        group["UNITS"]["value"] = analog.units
        group["DESCRIPTIONS"]["value"] = analog.descriptions
        out["data"]["analogs"] = analog.values[np.newaxis]

    session = tables.session
    fields: dict[str, tuple[str, str]] = {
        _name(key): (str(value), "provenance") for key, value in tables.provenance.items()
    }
    fields.update(
        RESULT_ID=(tables.result_id, "the published result"),
        ATTEMPT_ID=(tables.attempt_id, "the attempt it analysed"),
        ATTEMPT_NUMBER=(str(tables.attempt_number), "the attempt's number in its session"),
        SUBJECT=(str(session.get("subject_code") or ""), "the session's subject code"),
        PROTOCOL=(str(session.get("protocol") or ""), "the session's protocol"),
        DATA=(
            "automatic" if points.effective is None else "effective",
            "effective: the tracks as a reviewer corrected them; automatic: as published",
        ),
        KIND=(points.kind, "3d: a rig's points; plane: a calibrated plane; image: picture px"),
        CAMERA=(points.camera or "", "the camera of a 2-D result"),
        FIRST_FRAME=(str(int(numbers[0])) if frames else "", "the first frame's index, from 0"),
        START_S=(
            f"{float(points.times_s[0]):.6f}" if frames else "",
            "the first frame's time (s) from the attempt's zero",
        ),
        ANALOG_RATES=(
            analog.original_rates if analog else "",
            "each instrument's own rate (Hz) before resampling to ANALOG:RATE",
        ),
    )
    for name, (value, description) in fields.items():
        out.add_parameter("LABRIG", name, _pieces(value), description)
    if session.get("subject_code"):
        out.add_parameter("SUBJECTS", "USED", 1)
        out.add_parameter("SUBJECTS", "NAMES", [_fit(str(session["subject_code"]))])
        out.add_parameter("SUBJECTS", "USES_PREFIXES", 0)
    _write(out, path)


def _residuals(points: PointTable, xyz: Array) -> Array:
    """N×M: -1 where missing (ezc3d writes a NaN point with a residual ≥ 0 as a valid NaN); a
    solved 3-D point's reprojection error rounded up to a whole px; else 0."""
    seen = ~np.isnan(xyz).any(axis=2)
    out = np.where(seen, 0.0, -1.0)
    if points.kind == "3d" and points.residual_px is not None:
        error = np.asarray(points.residual_px, dtype=np.float64)
        solved = seen & np.isfinite(error)
        if points.effective is not None:  # a reviewer's position is no camera's solution
            moved = ~np.isclose(points.effective, points.automatic, rtol=0.0, atol=1e-6)
            solved &= ~moved.any(axis=2)
        out[solved] = np.clip(np.ceil(error[solved]), 1.0, MAX_RESIDUAL)
    return out


def _analog(tables: ResultTables, frames: int) -> _Analog | None:
    """The instruments' channels interpolated onto one rate, a whole multiple of the frames'."""
    if not tables.analog:
        return None
    rate = float(tables.points.rate_hz)
    fastest = max(float(a.rate_hz) for a in tables.analog)
    ratio = max(1, math.ceil(fastest / rate - 1e-9))
    t0 = float(tables.points.times_s[0]) if frames else 0.0
    t = t0 + np.arange(frames * ratio) / ratio / rate
    rows: list[Array] = []
    names: list[str] = []
    units: list[str] = []
    descriptions: list[str] = []
    for a in tables.analog:
        times = np.asarray(a.times_s, dtype=np.float64)
        values = np.asarray(a.values, dtype=np.float64).reshape(len(times), len(a.channels))
        inside = (t >= times[0]) & (t <= times[-1]) if len(times) else np.zeros(t.shape, bool)
        span = f"{times[0]:.3f}-{times[-1]:.3f} s" if len(times) else "no samples"
        for k, channel in enumerate(a.channels):
            row = np.interp(t, times, values[:, k]) if len(times) else np.zeros(t.shape)
            row[~inside | np.isnan(row)] = 0.0
            rows.append(row)
            names.append(f"{a.name}_{channel.name}")
            units.append(_fit(channel.unit))
            descriptions.append(
                _fit(
                    f"{channel.name} of {a.device_id}, {a.rate_hz:g} Hz resampled linearly to "
                    f"{rate * ratio:g} Hz; 0 outside {span}"
                )
            )
    return _Analog(
        rate_hz=rate * ratio,
        values=np.array(rows).reshape(len(rows), len(t)),
        labels=_labels(names),
        units=units,
        descriptions=descriptions,
        original_rates="; ".join(f"{a.name}={a.rate_hz:g}" for a in tables.analog),
    )


def _labels(names: list[str]) -> list[str]:
    """Channel labels: letters, digits and ``_``, at most 30 characters, unique (a repeat ends
    in ``_2``, ``_3`` …)."""
    return unique_names(
        names, LABEL_CHARS, lambda name: re.sub(r"[^A-Za-z0-9_]", "_", name) or "channel", "_"
    )


def _name(key: str) -> str:
    """A parameter's name: upper case, letters, digits and ``_``."""
    return re.sub(r"[^A-Z0-9_]", "_", key.upper())[:LABEL_CHARS] or "VALUE"


def _fit(text: str) -> str:
    """One line of at most 255 bytes (UTF-8), as a C3D string holds it."""
    line = " ".join(text.split())
    while len(line.encode()) > TEXT_BYTES:
        line = line[:-1]
    return line


def _pieces(text: str) -> str | list[str]:
    """``text``, or (longer than a C3D string holds: ezc3d would write a file it cannot read) its
    pieces of at most 255 bytes, none ending in a space (C3D pads strings with spaces)."""
    if len(text.encode()) <= TEXT_BYTES:
        return text
    pieces: list[str] = []
    piece = ""
    for char in text:
        if len((piece + char).encode()) > TEXT_BYTES:
            kept = piece.rstrip(" ") or piece
            pieces.append(kept)
            piece = piece[len(kept) :]
        piece += char
    return [*pieces, piece][:TEXT_BYTES]  # a C3D array has at most 255 rows


def _write(out: ezc3d.c3d, path: Path) -> None:
    """Written beside ``path`` and renamed onto it: ezc3d appends ``.c3d`` to a name without it,
    and a failed write leaves nothing at ``path``."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.c3d")
    try:
        out.write(str(tmp))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
