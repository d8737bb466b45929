"""``markers-tidy.csv``: a result's marker positions in long ("tidy") form, one row per frame ×
marker × view, the automatic position beside the one in force. A statistics package or a data
frame reads it as it is (``pandas.read_csv``, R's ``read.csv``), with no header rows to skip and
no wide column names to parse.

The views: the result's points (``3d`` for a rig's reconstruction, ``plane`` for a camera's tracks
on its calibrated plane, ``image`` for a camera's tracks in px with no calibration), then each
camera's picture (``image``, px as recorded) unless the points are already that camera's picture.
Every frame of every view has a row for every marker, seen or not, so the grid is complete; an
empty cell is a position that is not there. Columns are documented in docs/export-sync.md.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import numpy as np

from labrig.export.tables import Array, PointTable, ResultTables

COLUMNS = (
    "view",
    "camera",
    "frame",
    "time_s",
    "marker",
    "track_id",
    "units",
    "x_automatic",
    "y_automatic",
    "z_automatic",
    "x_effective",
    "y_effective",
    "z_effective",
    "corrected",
    "filled",
    "residual_px",
)


def _numbers(values: Array) -> Any:
    """Each value rounded to 6 decimals (as Python floats, which the csv module writes as their
    shortest repr), ``""`` where there is none."""
    out = np.round(values, 6).astype(object)
    out[~np.isfinite(values)] = ""
    return out.tolist()


def _rows(table: PointTable, view: str) -> Iterator[tuple[Any, ...]]:
    """One row per frame × marker of ``table``, built a column at a time."""
    n, m = table.automatic.shape[:2]
    rows, dims = n * m, table.dims
    auto = table.automatic.reshape(rows, dims)
    force = table.in_force.reshape(rows, dims)
    same = ((np.isnan(auto) & np.isnan(force)) | (auto == force)).all(axis=1)
    filled = np.zeros(rows, bool) if table.filled is None else table.filled.reshape(rows)
    residual = (
        np.full(rows, np.nan) if table.residual_px is None else table.residual_px.reshape(rows)
    )
    blank = [""] * rows
    times = [repr(round(t, 9)) for t in np.asarray(table.times_s, dtype=np.float64).tolist()]
    columns = [
        [view] * rows,
        [table.camera or ""] * rows,
        np.repeat(table.frames, m).tolist(),
        [t for t in times for _ in range(m)],
        [marker.label for marker in table.markers] * n,
        [str(marker.track_id) for marker in table.markers] * n,
        [table.units] * rows,
        *(_numbers(auto[:, d]) if d < dims else blank for d in range(3)),
        *(_numbers(force[:, d]) if d < dims else blank for d in range(3)),
        np.where(same, "0", "1").tolist(),
        np.where(filled, "1", "0").tolist(),
        _numbers(residual),
    ]
    return zip(*columns, strict=True)


def tidy_csv(tables: ResultTables) -> bytes:
    """The result's marker positions, one row per frame × marker × view (:data:`COLUMNS`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    points = tables.points
    writer.writerows(_rows(points, points.kind))
    for view in tables.views:
        if points.kind == "image" and view.camera == points.camera:
            continue  # the points are this camera's picture already
        writer.writerows(_rows(view, "image"))
    return buffer.getvalue().encode()
