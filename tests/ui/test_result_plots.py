"""Track pens: the marker's colour, outlined only where it would vanish on the white plot."""

from __future__ import annotations

import numpy as np
import pytest

from labrig.results import TrackSeries
from labrig.ui.common.result_plots import contrast, track_pens

NONE = np.zeros(0)


def _track(rgb: tuple[int, int, int] | None) -> TrackSeries:
    return TrackSeries(0, NONE, NONE, NONE, None, rgb)


def test_contrast_is_wcags_ratio() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((255, 255, 255), (255, 255, 255)) == pytest.approx(1.0)


def test_a_dark_marker_needs_no_outline_and_a_light_one_gets_one() -> None:
    pen, outline = track_pens(_track((20, 40, 160)), 0, 3)
    assert pen.color().getRgb()[:3] == (20, 40, 160) and outline is None
    pen, outline = track_pens(_track((252, 230, 58)), 0, 3)  # the yellow marker
    assert pen.color().getRgb()[:3] == (252, 230, 58) and outline is not None
    assert contrast(outline.color().getRgb()[:3], (255, 255, 255)) >= 3
    pen, outline = track_pens(_track(None), 1, 3)  # a result from before colours were read
    assert outline is None and pen.color().getRgb()[:3] != (0, 0, 0)
