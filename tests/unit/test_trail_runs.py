"""The player's trail of a marker: broken where the marker was not seen, dashed where a fill
interpolated it, one line otherwise."""

from __future__ import annotations

import numpy as np

from labrig.domain.corrections import Track, trail_runs


def _track(frames: list[int], filled: set[int] = frozenset()) -> Track:  # type: ignore[assignment]
    f = np.asarray(frames, dtype=np.int64)
    return Track(f, np.column_stack([f * 10.0, f * 1.0]), frozenset(filled))


def test_a_gap_breaks_the_trail_and_a_filled_stretch_is_a_dashed_run_of_its_own() -> None:
    track = _track([0, 1, 2, 3, 7, 8, 9, 10, 11], filled={8, 9})
    runs = [
        (filled, [int(xy[0] // 10) for xy in points])
        for filled, points in trail_runs(track, 5 - 15, 5 + 15)
    ]
    # 0-3 tracked; nothing from 4 to 6; 7 tracked, 8-9 filled (joined to 7), 10-11 tracked
    assert runs == [(False, [0, 1, 2, 3]), (False, [7]), (True, [7, 8, 9]), (False, [9, 10, 11])]


def test_only_the_frames_around_the_one_shown_are_drawn() -> None:
    track = _track(list(range(100)))
    [(filled, points)] = trail_runs(track, 50 - 15, 50 + 15)
    assert not filled and [int(p[0] // 10) for p in points] == list(range(35, 66))
