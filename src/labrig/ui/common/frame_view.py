"""One camera's frame in the review player, scaled to fit with its aspect kept, and the tracks
drawn over it (see :mod:`labrig.ui.common.player`).

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from labrig.review import Overlay

TRAIL = 15  # frames of trail drawn before and after the current one
GREY = QColor(150, 150, 150)


class FrameView(QWidget):
    """One camera's frame, scaled to fit with its aspect kept, and the overlays over it."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.image: QImage | None = None
        self.index: int | None = None
        self.overlays: Sequence[Overlay] = ()
        self.setMinimumSize(240, 180)  # a marker and its id stay legible
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

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
            near = (track.frames >= self.index - TRAIL) & (track.frames <= self.index + TRAIL)
            path = QPainterPath()
            for n, xy in enumerate(track.xy[near]):
                path.moveTo(at(xy)) if n == 0 else path.lineTo(at(xy))
            trail = QColor(colour)
            trail.setAlpha(140)
            painter.setPen(QPen(trail, 1.5))
            painter.drawPath(path)
            here = track.at(self.index)
            if here is not None:
                pen = QPen(colour, 2.0)
                if self.index in track.filled:
                    pen.setStyle(Qt.PenStyle.DashLine)
                painter.setPen(pen)
                painter.drawEllipse(at(here), 9.0, 9.0)
                painter.drawText(at(here) + QPointF(11, -11), overlay.track_id)
        automatic = overlay.automatic.at(self.index)
        effective = None if track is None else track.at(self.index)
        if automatic is not None and (effective is None or np.any(automatic != effective)):
            painter.setPen(QPen(GREY, 1.5))
            p = at(automatic)
            painter.drawLine(p + QPointF(-5, -5), p + QPointF(5, 5))
            painter.drawLine(p + QPointF(-5, 5), p + QPointF(5, -5))
