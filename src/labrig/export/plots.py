"""Line plots as PNG, drawn with OpenCV: trajectories and speed against time, for exports.

Qt-free and without matplotlib (not a dependency): axes with round-number ticks, one coloured
polyline per track, a legend, and labels that carry the result's units. The same data always
gives the same bytes (PNG encoding is deterministic), so two exports of one result have
identical plot digests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from labrig.domain.palette import SERIES_BGR

WIDTH, HEIGHT = 900, 640
LEFT, RIGHT, TOP, BOTTOM = 90, 30, 50, 70
FONT = cv2.FONT_HERSHEY_SIMPLEX
INK, GRID, WHITE = (40, 40, 40), (225, 225, 225), (255, 255, 255)
# the series colours (tab10), in BGR
PALETTE = SERIES_BGR
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Curve:
    label: str
    x: Sequence[float]
    y: Sequence[float]


@dataclass(frozen=True)
class Axis:
    low: float
    high: float
    ticks: tuple[float, ...]


def nice_axis(values: Sequence[float], count: int = 6) -> Axis:
    """An axis covering ``values`` with about ``count`` ticks at 1, 2 or 5 × 10^k."""
    finite = [v for v in values if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if high - low <= 1e-9 * max(1.0, abs(low), abs(high)):  # one value: a band around it
        pad = max(1.0, abs(low) * 0.05)
        low, high = low - pad, high + pad
    raw = (high - low) / max(count - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start, stop = math.floor(low / step) * step, math.ceil(high / step) * step
    ticks = tuple(round(start + i * step, 10) for i in range(round((stop - start) / step) + 1))
    return Axis(start, stop, ticks)


def _label(value: float) -> str:
    return f"{value:.6g}"


def _to_px(axis: Axis, value: float, start: int, length: int, flip: bool) -> int:
    frac = (value - axis.low) / (axis.high - axis.low)
    return round(start + (1.0 - frac if flip else frac) * length)


def _vertical_text(image: Image, text: str, x: int, y_center: int) -> None:
    (w, h), base = cv2.getTextSize(text, FONT, 0.55, 1)
    strip = np.full((h + base + 4, w + 4, 3), 255, np.uint8)
    cv2.putText(strip, text, (2, h + 2), FONT, 0.55, INK, 1, cv2.LINE_AA)
    rotated = cv2.rotate(strip, cv2.ROTATE_90_COUNTERCLOCKWISE)
    top = max(0, y_center - rotated.shape[0] // 2)
    image[top : top + rotated.shape[0], x : x + rotated.shape[1]] = rotated[: HEIGHT - top]


def _frame(image: Image, xa: Axis, ya: Axis, flip_y: bool) -> None:
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    for tick in xa.ticks:
        x = _to_px(xa, tick, LEFT, pw, False)
        cv2.line(image, (x, TOP), (x, TOP + ph), GRID, 1)
        (w, _), _ = cv2.getTextSize(_label(tick), FONT, 0.45, 1)
        cv2.putText(
            image, _label(tick), (x - w // 2, TOP + ph + 20), FONT, 0.45, INK, 1, cv2.LINE_AA
        )
    for tick in ya.ticks:
        y = _to_px(ya, tick, TOP, ph, not flip_y)
        cv2.line(image, (LEFT, y), (LEFT + pw, y), GRID, 1)
        (w, h), _ = cv2.getTextSize(_label(tick), FONT, 0.45, 1)
        cv2.putText(
            image, _label(tick), (LEFT - w - 8, y + h // 2), FONT, 0.45, INK, 1, cv2.LINE_AA
        )
    cv2.rectangle(image, (LEFT, TOP), (LEFT + pw, TOP + ph), INK, 1)


def _legend(image: Image, curves: Sequence[Curve]) -> None:
    for n, curve in enumerate(curves):
        y = TOP + 20 + 20 * n
        x = WIDTH - RIGHT - 150
        cv2.line(image, (x, y - 4), (x + 24, y - 4), PALETTE[n % len(PALETTE)], 2, cv2.LINE_AA)
        cv2.putText(image, curve.label[:18], (x + 30, y), FONT, 0.45, INK, 1, cv2.LINE_AA)


def line_plot(
    curves: Sequence[Curve], title: str, xlabel: str, ylabel: str, *, flip_y: bool = False
) -> bytes:
    """A PNG of ``curves`` (non-finite points left out); ``flip_y`` puts y's origin at the
    top, as in images."""
    image: Image = np.full((HEIGHT, WIDTH, 3), WHITE, np.uint8)
    xa = nice_axis([v for c in curves for v in c.x])
    ya = nice_axis([v for c in curves for v in c.y])
    _frame(image, xa, ya, flip_y)
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    for n, curve in enumerate(curves):
        points = [
            (_to_px(xa, x, LEFT, pw, False), _to_px(ya, y, TOP, ph, not flip_y))
            for x, y in zip(curve.x, curve.y, strict=False)
            if math.isfinite(x) and math.isfinite(y)
        ]
        if points:
            cv2.polylines(
                image,
                [np.array(points, np.int32)],
                False,
                PALETTE[n % len(PALETTE)],
                2,
                cv2.LINE_AA,
            )
    if not curves:
        cv2.putText(
            image, "no data", (LEFT + pw // 2 - 40, TOP + ph // 2), FONT, 0.7, INK, 1, cv2.LINE_AA
        )
    _legend(image, curves)
    cv2.putText(image, title, (LEFT, TOP - 18), FONT, 0.7, INK, 1, cv2.LINE_AA)
    (w, _), _ = cv2.getTextSize(xlabel, FONT, 0.55, 1)
    cv2.putText(
        image, xlabel, (LEFT + pw // 2 - w // 2, HEIGHT - 20), FONT, 0.55, INK, 1, cv2.LINE_AA
    )
    _vertical_text(image, ylabel, 8, TOP + ph // 2)
    ok, png = cv2.imencode(".png", image)
    if not ok:  # pragma: no cover - OpenCV always encodes a valid uint8 image
        raise RuntimeError("OpenCV could not encode the plot as PNG")
    return bytes(png.tobytes())
