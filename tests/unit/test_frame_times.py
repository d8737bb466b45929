"""The recorded frame at a time: the nearest, the earlier of two at the same distance."""

from __future__ import annotations

import numpy as np

from labrig.domain.frame_times import nearest_frames

TIMES = [0.0, 0.033, 0.066, 0.1, 0.2]  # a frame dropped before the last


def test_each_time_gets_its_nearest_frame_and_a_tie_goes_to_the_earlier() -> None:
    at = [-1.0, 0.0, 0.016, 0.0165, 0.017, 0.15, 0.151, 9.0]
    assert nearest_frames(TIMES, at).tolist() == [0, 0, 0, 0, 1, 3, 4, 4]
    assert int(nearest_frames(TIMES, 0.09)) == 3  # one time in, one index out


def test_a_single_frame_is_the_frame_at_every_time() -> None:
    assert nearest_frames([5.0], [0.0, 5.0, 10.0]).tolist() == [0, 0, 0]
    assert nearest_frames(np.array(TIMES), np.array([])).tolist() == []
