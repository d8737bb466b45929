"""One camera's frame in the review player, scaled to fit with its aspect kept, and the tracks
drawn over it (see :mod:`labrig.ui.common.player`; a rig's 3-D markers, detection beside
reprojection: :mod:`labrig.ui.common.marks`).

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from labrig.review import Overlay
from labrig.ui.common.marks import draw_reprojection, draw_trail

TRAIL = 15  # frames of trail drawn before and after the current one
GREY = QColor(150, 150, 150)
GRAB_PX = 14.0  # on screen: how near a marker a press picks it up


def picture(bgr: np.ndarray) -> tuple[np.ndarray, QImage]:
    """A decoded frame (BGR) and its own copy as a QImage to draw (made on the decoding thread)."""
    h, w = bgr.shape[:2]
    return bgr, QImage(bgr.data, w, h, bgr.strides[0], QImage.Format.Format_BGR888).copy()


class FrameView(QWidget):
    """One camera's frame, scaled to fit with its aspect kept, and the overlays over it. When
    :attr:`editable`, a marker (a 2-D track's, never a rig's 3-D marker) is dragged with the
    mouse: :attr:`dragged` then says which track, at which frame, and where it was dropped
    (picture px)."""

    dragged = Signal(str, int, float, float)  # track id, frame, x, y (picture px)

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.image: QImage | None = None
        self.index: int | None = None
        self.overlays: Sequence[Overlay] = ()
        self.editable = False
        self._drag: tuple[str, int] | None = None  # the track and frame being dragged
        self._drag_at = QPointF()  # where the mouse is, widget px
        self.setMinimumSize(240, 180)  # a marker and its id stay legible
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)  # the cursor says where a marker can be picked up

    def show_frame(self, image: QImage | None, index: int | None) -> None:
        self.image, self.index = image, index
        self.update()

    def target(self) -> QRectF:
        """Where the picture is drawn (fitted, centred)."""
        if self.image is None or self.image.width() == 0:
            return QRectF(self.rect())
        scale = min(self.width() / self.image.width(), self.height() / self.image.height())
        w, h = self.image.width() * scale, self.image.height() * scale
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def screen_point(self, xy: Any) -> QPointF:
        """A picture px position on the widget (a pixel's centre)."""
        area = self.target()
        scale = area.width() / self.image.width() if self.image is not None else 1.0
        return QPointF(area.left() + (xy[0] + 0.5) * scale, area.top() + (xy[1] + 0.5) * scale)

    def picture_point(self, point: QPointF) -> tuple[float, float]:
        """A widget position in picture px (inverse of :meth:`screen_point`)."""
        area = self.target()
        scale = area.width() / self.image.width() if self.image is not None else 1.0
        return (point.x() - area.left()) / scale - 0.5, (point.y() - area.top()) / scale - 0.5

    def marker_near(self, point: QPointF) -> str | None:
        """The track whose marker at the frame shown is nearest ``point``, within
        :data:`GRAB_PX`."""
        if self.image is None or self.index is None:
            return None
        best: tuple[float, str] | None = None
        for overlay in self.overlays:
            if overlay.reprojected is not None:
                continue  # a rig's 3-D marker: not corrected by hand
            here = None if overlay.effective is None else overlay.effective.at(self.index)
            if here is None:
                continue
            p = self.screen_point(here)
            distance = float(np.hypot(p.x() - point.x(), p.y() - point.y()))
            if distance <= GRAB_PX and (best is None or distance < best[0]):
                best = (distance, overlay.track_id)
        return None if best is None else best[1]

    def mousePressEvent(self, event: QMouseEvent) -> None:
        track = self.marker_near(event.position()) if self.editable else None
        if track is None or self.index is None or event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        self._drag, self._drag_at = (track, self.index), event.position()
        self.setCursor(Qt.CursorShape.ClosedHandCursor)
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag is not None:
            self._drag_at = event.position()
            self.update()
        elif self.editable:
            near = self.marker_near(event.position()) is not None
            self.setCursor(Qt.CursorShape.OpenHandCursor if near else Qt.CursorShape.ArrowCursor)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        drag, self._drag = self._drag, None
        if drag is None:
            super().mouseReleaseEvent(event)
            return
        self.setCursor(Qt.CursorShape.ArrowCursor)
        self.update()
        x, y = self.picture_point(event.position())
        if self.image is not None and 0 <= x < self.image.width() and 0 <= y < self.image.height():
            self.dragged.emit(drag[0], drag[1], x, y)
        event.accept()

    def paintEvent(self, event: Any) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(20, 20, 20))
        if self.image is None:
            painter.setPen(GREY)
            text = f"{self.name}: no frame at this time" if self.index is None else self.name
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, text)
            return
        area = self.target()
        painter.drawImage(area, self.image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        scale = area.width() / self.image.width()
        for overlay in self.overlays:
            self._draw(painter, overlay, area, scale)
        if self._drag is not None:  # where the marker would go
            painter.setPen(QPen(QColor(255, 255, 255), 1.5, Qt.PenStyle.DashLine))
            painter.drawEllipse(self._drag_at, 9.0, 9.0)
            painter.drawText(self._drag_at + QPointF(11, -11), f"{self._drag[0]} →")
        painter.setPen(QColor(255, 255, 255))
        painter.drawText(
            area.adjusted(6, 4, -6, -4),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
            f"{self.name} · frame {self.index}",
        )

    def _draw(self, painter: QPainter, overlay: Overlay, area: QRectF, scale: float) -> None:
        if self.index is None:
            return
        colour = QColor(*(overlay.colour_rgb or (255, 200, 0)))

        def at(xy: Any) -> QPointF:
            return QPointF(area.left() + (xy[0] + 0.5) * scale, area.top() + (xy[1] + 0.5) * scale)

        track = overlay.effective
        if track is not None and len(track.frames):
            draw_trail(painter, track, self.index, TRAIL, colour, at)
        if overlay.reprojected is not None:
            draw_reprojection(painter, overlay, self.index, colour, at)
            return
        effective = None if track is None else track.at(self.index)
        if track is not None and effective is not None:
            pen = QPen(colour, 2.0)
            if self.index in track.filled:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawEllipse(at(effective), 9.0, 9.0)
            painter.drawText(at(effective) + QPointF(11, -11), overlay.track_id)
        automatic = overlay.automatic.at(self.index)
        if automatic is not None and (effective is None or np.any(automatic != effective)):
            painter.setPen(QPen(GREY, 1.5))
            p = at(automatic)
            painter.drawLine(p + QPointF(-5, -5), p + QPointF(5, 5))
            painter.drawLine(p + QPointF(-5, 5), p + QPointF(5, -5))
