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

import numpy as np

from labrig.export.tables import PointTable, ResultTables

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


def _number(value: float) -> str:
    return "" if not np.isfinite(value) else repr(round(float(value), 6))


def _rows(table: PointTable, view: str) -> Iterator[list[str]]:
    auto, force = table.automatic, table.in_force
    dims = table.dims
    for i, (frame, t) in enumerate(zip(table.frames, table.times_s, strict=True)):
        for m, marker in enumerate(table.markers):
            a, e = auto[i, m], force[i, m]
            same = (np.isnan(a) & np.isnan(e)) | (a == e)
            residual = table.residual_px[i, m] if table.residual_px is not None else np.nan
            filled = table.filled is not None and bool(table.filled[i, m])
            yield [
                view,
                table.camera or "",
                str(int(frame)),
                repr(round(float(t), 9)),
                marker.label,
                str(marker.track_id),
                table.units,
                *(_number(a[d]) if d < dims else "" for d in range(3)),
                *(_number(e[d]) if d < dims else "" for d in range(3)),
                "0" if bool(same.all()) else "1",
                "1" if filled else "0",
                _number(residual),
            ]


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
