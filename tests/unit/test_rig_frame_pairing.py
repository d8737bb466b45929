"""Pairing a rig recording's frames by time for a rig calibration."""

from __future__ import annotations

from labrig.calibration.rig_captures import pair_frames

PERIOD = 33_333_333  # ns at 30 fps


def test_each_camera_gives_its_nearest_frame_and_instants_it_lacks_are_left_out() -> None:
    first = [k * PERIOD for k in range(12)]
    late = [k * PERIOD + 4_000_000 for k in range(12)]  # 4 ms behind: still the same instants
    # a camera that started one frame late and missed frames 6 and 7
    gappy = [k * PERIOD - 2_000_000 for k in range(1, 12) if k not in (6, 7)]
    pairs = pair_frames([first, late, gappy], [30.0, 30.0, 30.0], every=2)
    # instants at the first camera's frames 0, 2, 4, 6, 8, 10: 0 and 6 have no frame from the third
    assert pairs[0] == [2, 4, 8, 10]
    assert pairs[1] == [2, 4, 8, 10]
    assert [gappy[i] + 2_000_000 for i in pairs[2]] == [first[k] for k in pairs[0]]


def test_a_camera_with_no_frames_leaves_no_instant() -> None:
    assert pair_frames([[0, PERIOD], []], [30.0, 30.0], every=1) == [[], []]
