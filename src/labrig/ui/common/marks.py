"""What the review player draws of one marker over a camera's frame (see
:mod:`labrig.ui.common.frame_view`): its trail, and for a rig's 3-D marker its detection beside
its 3-D position reprojected into the camera.

A rig's marker at a frame: the detection as a circle in the marker's colour with its id; the
reprojected 3-D point as a small diamond in the same colour, joined to the detection by a thin
line, with the distance (px, as the reconstruction measures it), when the two are more than
:data:`JOIN_PX` apart on the picture. Where the camera has no detection the diamond is drawn
dashed with the id beside it; where there is no 3-D position the circle's id says so.

Threading contract: GUI thread only (it paints).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF

from labrig.domain.corrections import Track, trail_runs
from labrig.review import Overlay

JOIN_PX = 1.0  # picture px: a detection and its reprojection further apart than this are joined
DIAMOND = 6.0  # screen px: half the reprojection mark's diagonal

At = Callable[[Any], QPointF]  # a picture px position on the widget


def draw_trail(
    painter: QPainter, track: Track, index: int, frames: int, colour: QColor, at: At
) -> None:
    """``track``'s trail (:func:`~labrig.domain.corrections.trail_runs`): solid where tracked,
    dashed where filled, broken where the marker was not seen."""
    trail = QColor(colour)
    trail.setAlpha(140)
    for filled, points in trail_runs(track, index - frames, index + frames):
        if len(points) < 2:
            continue
        path = QPainterPath()
        path.moveTo(at(points[0]))
        for xy in points[1:]:
            path.lineTo(at(xy))
        painter.setPen(QPen(trail, 1.5, Qt.PenStyle.DashLine if filled else Qt.PenStyle.SolidLine))
        painter.drawPath(path)


def draw_reprojection(
    painter: QPainter, overlay: Overlay, index: int, colour: QColor, at: At
) -> None:
    """A rig's marker at the camera's frame ``index`` (the module docstring)."""
    detected = None if overlay.effective is None else overlay.effective.at(index)
    reprojected = overlay.reprojected
    k = -1 if reprojected is None else int(np.searchsorted(reprojected.frames, index))
    projected = None
    if reprojected is not None and k < len(reprojected.frames) and reprojected.frames[k] == index:
        projected = reprojected.xy[k]
    if detected is not None:
        painter.setPen(QPen(colour, 2.0))
        painter.drawEllipse(at(detected), 9.0, 9.0)
        label = overlay.track_id if projected is not None else f"{overlay.track_id} · no 3-D"
        painter.drawText(at(detected) + QPointF(11, -11), label)
    if projected is None:
        return
    p = at(projected)
    style = Qt.PenStyle.SolidLine if detected is not None else Qt.PenStyle.DashLine
    painter.setPen(QPen(colour, 1.5, style))
    corners = ((0, -DIAMOND), (DIAMOND, 0), (0, DIAMOND), (-DIAMOND, 0))
    painter.drawPolygon(QPolygonF([p + QPointF(dx, dy) for dx, dy in corners]))
    if detected is None:
        painter.drawText(p + QPointF(DIAMOND + 3, -DIAMOND), f"{overlay.track_id} · 3-D only")
        return
    if float(np.hypot(*(np.asarray(detected) - projected))) > JOIN_PX:
        painter.setPen(QPen(colour, 1.0))
        painter.drawLine(at(detected), p)
        error = None if overlay.view_error_px is None else float(overlay.view_error_px[k])
        if error is not None and np.isfinite(error):
            painter.drawText(at(detected) + QPointF(11, 5), f"{error:.1f} px")  # under the id
