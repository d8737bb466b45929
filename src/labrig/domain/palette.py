"""The colours Labrig draws series in (cameras, tracks, curves), in order: matplotlib's tab10, as
OpenCV's BGR, so every picture Labrig draws uses the same ten."""

from __future__ import annotations

SERIES_BGR: tuple[tuple[int, int, int], ...] = (
    (180, 119, 31),
    (14, 127, 255),
    (44, 160, 44),
    (40, 39, 214),
    (189, 103, 148),
    (75, 86, 140),
    (194, 119, 227),
    (127, 127, 127),
    (34, 189, 188),
    (207, 190, 23),
)
