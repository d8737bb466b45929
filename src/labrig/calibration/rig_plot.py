"""A picture of a solved rig: where each camera stands and looks, from above and from the side,
with where the board was carried (the volume the calibration saw).

Drawn with OpenCV as a PNG (Qt-free, no matplotlib), at one scale in both views so distances
compare; a scale bar gives the metres. The same calibration always gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from labrig.domain.palette import SERIES_BGR

PANEL_W, PANEL_H, MARGIN, TITLE = 620, 520, 64, 36
FONT = cv2.FONT_HERSHEY_SIMPLEX
INK, GRID, BOARD, WHITE = (40, 40, 40), (215, 215, 215), (170, 170, 170), (255, 255, 255)
# tab10 in BGR: the cameras, in order
COLOURS = SERIES_BGR
AXIS_MM = 600.0  # length of the drawn optical axes
Image = npt.NDArray[np.uint8]


def _scale_bar_mm(span_mm: float) -> float:
    """A round length (1, 2 or 5 × 10^k mm) about a fifth of ``span_mm``."""
    raw = max(span_mm / 5, 1.0)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _bar_label(mm: float) -> str:
    return f"{mm / 1000:g} m" if mm >= 1000 else f"{mm:g} mm"


def _free_box(
    placed: list[tuple[int, int, int, int]],
    x: int,
    y: int,
    w: int,
    h: int,
    below: bool,
    panel_h: int = PANEL_H,
) -> tuple[int, int, int, int]:
    """A label box of ``w`` × ``h`` near the mark at height ``y``, clear of the boxes placed: on
    the side the camera's arrow does not go (``below`` or above), further away in turn (cameras
    drawn on one spot, as two facing each other are from the side, get their names one over the
    other), else the other side."""
    for step in range(12):
        away = 12 + (step % 6) * (h + 6)
        under = (step < 6) == below
        bottom = y + away + h if under else y - away
        box = (x, bottom - h, x + w, bottom)
        inside = box[1] > TITLE + 4 and box[3] < panel_h - 28
        clear = all(
            box[2] < p[0] or p[2] < box[0] or box[3] < p[1] or p[3] < box[1] for p in placed
        )
        if inside and clear:
            return box
    return (x, y - 12 - h, x + w, y - 12)


def rig_views_png(
    document: Mapping[str, Any], panel: tuple[int, int] = (PANEL_W, PANEL_H)
) -> bytes:
    """:func:`rig_views_image` as PNG."""
    ok, png = cv2.imencode(".png", rig_views_image(document, panel))
    assert ok
    return bytes(png.tobytes())


def rig_views_image(
    document: Mapping[str, Any], panel: tuple[int, int] = (PANEL_W, PANEL_H)
) -> Image:
    """The top view (x right, y up) and the side view (x right, z up) side by side, each ``panel``
    (width, height) px, as a BGR image, of a rig calibration's document
    (``RigCalibration.to_json()``, as stored). The lettering keeps its size whatever the panel's
    (the screen draws it to the room it has)."""
    panel_w, panel_h = max(panel[0], 4 * MARGIN), max(panel[1], 3 * MARGIN + TITLE)
    cameras = document["cameras"]
    names = [str(c["name"]) for c in cameras]
    centres = np.array([c["centre_mm"] for c in cameras], dtype=np.float64).reshape(-1, 3)
    axes = np.array([c["optical_axis"] for c in cameras], dtype=np.float64).reshape(-1, 3)
    tips = centres + AXIS_MM * axes
    positions = document.get("board_length", {}).get("positions_mm", [])
    boards = np.array(positions, dtype=np.float64).reshape(-1, 3)
    pts = np.vstack([centres, tips, boards, np.zeros((1, 3))])
    low, high = pts.min(axis=0), pts.max(axis=0)
    usable_w, usable_h = panel_w - 2 * MARGIN, panel_h - 2 * MARGIN - TITLE
    span = np.maximum(high - low, 1.0)
    # one scale for both views: the larger of what x, y and z need
    scale = min(usable_w / span[0], usable_h / span[1], usable_h / span[2])
    image: Image = np.full((panel_h, 2 * panel_w, 3), WHITE, np.uint8)
    for side, (axis, title) in enumerate(
        ((1, "From above (x right, y up)"), (2, "From the side (x right, z up)"))
    ):
        ox = side * panel_w

        def px(p: npt.NDArray[np.float64], ox: int = ox, axis: int = axis) -> tuple[int, int]:
            x = ox + MARGIN + (p[0] - low[0]) * scale + (usable_w - span[0] * scale) / 2
            v = (p[axis] - low[axis]) * scale + (usable_h - span[axis] * scale) / 2
            return round(x), round(panel_h - MARGIN - v)

        size = 0.6  # smaller in a narrow panel, so the title fits it
        while size > 0.35 and cv2.getTextSize(title, FONT, size, 1)[0][0] > panel_w - MARGIN:
            size -= 0.05
        cv2.putText(image, title, (ox + MARGIN // 2, 26), FONT, size, INK, 1, cv2.LINE_AA)
        cv2.rectangle(
            image, (ox + MARGIN // 2, TITLE), (ox + panel_w - MARGIN // 2, panel_h - 8), GRID, 1
        )
        origin = px(np.zeros(3))
        if axis == 2 and document.get("world") == "floor":  # the floor, z = 0, seen edge on
            left, right = ox + MARGIN // 2, ox + panel_w - MARGIN // 2
            cv2.line(image, (left, origin[1]), (right, origin[1]), GRID, 2)
        cv2.drawMarker(image, origin, INK, cv2.MARKER_CROSS, 14, 1, cv2.LINE_AA)
        for b in boards:
            cv2.circle(image, px(b), 3, BOARD, -1, cv2.LINE_AA)
        placed: list[tuple[int, int, int, int]] = []  # label boxes: x0, y0, x1, y1
        for n, centre in enumerate(centres):
            colour = COLOURS[n % len(COLOURS)]
            at = px(centre)
            cv2.arrowedLine(image, at, px(tips[n]), colour, 2, cv2.LINE_AA, tipLength=0.2)
            cv2.circle(image, at, 6, colour, -1, cv2.LINE_AA)
        for n, name in enumerate(names):  # after every mark, so none is drawn over one
            at = px(centres[n])
            (w, h), _ = cv2.getTextSize(name, FONT, 0.5, 1)
            tx = min(max(at[0] - w // 2, ox + 4), ox + panel_w - w - 4)
            box = _free_box(placed, tx, at[1], w, h, px(tips[n])[1] < at[1], panel_h)
            placed.append(box)
            cv2.putText(image, name, (box[0], box[3]), FONT, 0.5, INK, 1, cv2.LINE_AA)
        bar = _scale_bar_mm(float(span.max()))
        y = panel_h - 18
        x0 = ox + panel_w - MARGIN - round(bar * scale)
        cv2.line(image, (x0, y), (ox + panel_w - MARGIN, y), INK, 2)
        cv2.putText(image, _bar_label(bar), (x0, y - 6), FONT, 0.45, INK, 1, cv2.LINE_AA)
    return image
