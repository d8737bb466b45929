"""The picture of a solved rig: both views drawn, each camera where it stands."""

from __future__ import annotations

import json

import cv2
import numpy as np

from labrig.calibration.rig import RigCalibration
from labrig.calibration.rig_plot import COLOURS, PANEL_H, PANEL_W, rig_views_png


def test_the_rig_is_drawn_from_above_and_from_the_side_the_same_every_time(
    solved: RigCalibration,
) -> None:
    png = rig_views_png(solved.to_json())
    # the same from the document as stored (through JSON), as the Calibration screen draws it
    assert png == rig_views_png(json.loads(json.dumps(solved.to_json())))
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (PANEL_H, 2 * PANEL_W, 3)
    for n, _ in enumerate(solved.cameras):
        mask = np.all(image == np.array(COLOURS[n]), axis=2)
        assert mask[:, :PANEL_W].sum() > 50  # each camera drawn in its colour, from above
    # from the side, front and back stand on one spot (x 0, z 1.8 m): right and left do not
    for n in (1, 3):
        assert np.all(image[:, PANEL_W:] == np.array(COLOURS[n]), axis=2).sum() > 50

    # from above, front (y −2.8 m) is drawn below back (y +2.8 m); from the side they are level
    def centroid(n: int, side: int) -> np.ndarray:
        mask = np.all(image == np.array(COLOURS[n]), axis=2)
        ys, xs = np.nonzero(mask[:, side * PANEL_W : (side + 1) * PANEL_W])
        return np.array([xs.mean(), ys.mean()])

    front, right, back, left = 0, 1, 2, 3
    assert centroid(front, 0)[1] > centroid(back, 0)[1] + 200
    assert centroid(right, 0)[0] > centroid(left, 0)[0] + 200
    assert abs(centroid(right, 1)[1] - centroid(left, 1)[1]) < 60
    # the board's positions are drawn too
    assert len(solved.checks.board_length.positions_mm) == solved.checks.board_length.samples
