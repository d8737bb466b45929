"""Matching markers across the rig's cameras by epipolar distance: tracks that broke in one camera
stay one marker, a track no other camera sees is left out (one view gives no depth), and no marker
is ever made of two tracks one camera saw at the same instant."""

from __future__ import annotations

import numpy as np

from labrig.calibration import CalibratedCamera, Pose
from labrig.capture.rig_world import marker_positions, rig_camera
from labrig.pipeline.reconstruction import CameraTracks, reconstruct
from labrig.pipeline.tracking import Track

INSTANTS = 90
TIMES = np.arange(INSTANTS) / 30


def camera(index: int) -> CalibratedCamera:
    spec = rig_camera(index)
    m = spec.model
    return CalibratedCamera(
        spec.place,
        f"dev{index}",
        "",
        (1280, 720),
        m.matrix(),
        m.dist(),
        Pose.of(spec.rvec, spec.tvec),
    )


def pixels(cam: CalibratedCamera, points: np.ndarray) -> np.ndarray:
    """Undistorted image px, as tracking gives them."""
    x = points @ cam.pose.rotation.T + cam.pose.translation_mm
    h = (x / x[:, 2:3]) @ cam.matrix.T
    return h[:, :2]


def tracks_of(
    cam: CalibratedCamera,
    paths: np.ndarray,
    pieces: dict[int, list[range]],
    noise: float,
    seed: int,
) -> list[Track]:
    """Each marker's track(s) as the camera saw it: ``pieces[marker]`` are the instants of each."""
    rng = np.random.default_rng(seed)
    out = []
    for marker, spans in pieces.items():
        for span in spans:
            frames = np.asarray(list(span), dtype=np.int64)
            xy = pixels(cam, paths[frames, marker]) + rng.normal(0, noise, (len(frames), 2))
            out.append(Track(len(out), frames, xy))
    rng.shuffle(out)  # track ids say nothing about identity across cameras
    return [Track(i, t.frames, t.xy) for i, t in enumerate(out)]


def test_markers_are_matched_across_cameras_and_located_where_they_are() -> None:
    paths = np.stack([marker_positions(t, 5) for t in TIMES])  # instants×markers×3
    whole = {m: [range(INSTANTS)] for m in range(5)}
    broken = whole | {1: [range(0, 40), range(46, INSTANTS)]}  # hidden for 6 instants
    cams = [camera(i) for i in range(4)]
    inputs = [
        CameraTracks(
            cam, tracks_of(cam, paths, broken if k == 0 else whole, 0.1, k), np.arange(INSTANTS)
        )
        for k, cam in enumerate(cams)
    ]
    # a reflection only the left camera sees, and a frame the back camera dropped
    stray = Track(99, np.arange(INSTANTS), np.tile([[30.0, 40.0]], (INSTANTS, 1)))
    inputs[3] = CameraTracks(cams[3], [*inputs[3].tracks, stray], np.arange(INSTANTS))
    dropped = np.arange(INSTANTS)
    dropped[10] = -1
    inputs[2] = CameraTracks(cams[2], inputs[2].tracks, dropped)

    result = reconstruct(inputs)
    assert len(result.markers) == 5
    assert result.unmatched == ((3, 99, INSTANTS),)
    for marker in result.markers:
        d = np.linalg.norm(paths[marker.instants] - marker.xyz[:, None, :], axis=2)
        truth = int(np.bincount(d.argmin(axis=1)).argmax())
        assert np.sqrt(np.mean(d[:, truth] ** 2)) < 1.0
        assert len(marker.instants) == INSTANTS and not marker.gap_spans()
        # one camera never gives one marker two tracks at once
        per_camera = [k for k, _ in marker.members]
        if truth == 1:
            assert per_camera.count(0) == 2  # both pieces of the broken track
            assert marker.cameras[40:46].tolist() == [3] * 6
        assert marker.cameras[10] == 3  # the back camera had no frame then
    assert set(result.to_json()["markers"][0]) >= {"instants", "xyz", "error_px", "views", "gaps"}


def test_a_marker_only_one_camera_sees_at_a_time_is_a_gap_not_a_guess() -> None:
    paths = np.stack([marker_positions(t, 3) for t in TIMES])
    cams = [camera(i) for i in range(2)]
    first = {0: [range(INSTANTS)], 1: [range(INSTANTS)], 2: [range(INSTANTS)]}
    second = first | {2: [range(0, 30), range(60, INSTANTS)]}  # hidden from the second meanwhile
    inputs = [
        CameraTracks(cams[0], tracks_of(cams[0], paths, first, 0.05, 0), np.arange(INSTANTS)),
        CameraTracks(cams[1], tracks_of(cams[1], paths, second, 0.05, 1), np.arange(INSTANTS)),
    ]
    result = reconstruct(inputs)
    assert len(result.markers) == 3
    hidden = [m for m in result.markers if m.gap_spans()]
    assert len(hidden) == 1 and hidden[0].gap_spans() == [(30, 59)]
    assert len(hidden[0].instants) == INSTANTS - 30 and hidden[0].two_camera_share == 1.0


def test_tracks_of_different_markers_are_never_one_marker() -> None:
    paths = np.stack([marker_positions(t, 4) for t in TIMES])
    cams = [camera(i) for i in range(3)]
    # each camera sees a different pair of the markers: no two cameras share a marker in 0 and 1
    seen = [{0: [range(INSTANTS)]}, {1: [range(INSTANTS)]}, {2: [range(INSTANTS)]}]
    inputs = [
        CameraTracks(cam, tracks_of(cam, paths, s, 0.05, k), np.arange(INSTANTS))
        for k, (cam, s) in enumerate(zip(cams, seen, strict=True))
    ]
    result = reconstruct(inputs)
    assert result.markers == () and len(result.unmatched) == 3


def test_two_markers_on_one_epipolar_plane_are_never_merged_into_one() -> None:
    # the front and back cameras stand on one line (x = 0, 1.8 m high): two markers kept on one
    # plane through it lie on each other's epipolar lines, and match each other's tracks alike
    y = 300 * np.sin(TIMES)
    a = np.column_stack([np.full(INSTANTS, 300.0), y, np.full(INSTANTS, 1200.0)])
    b = np.column_stack([np.full(INSTANTS, 600.0), y + 100, np.full(INSTANTS, 600.0)])
    paths = np.stack([a, b], axis=1)
    cams = [camera(0), camera(2)]
    both = {0: [range(INSTANTS)], 1: [range(INSTANTS)]}
    inputs = [
        CameraTracks(cam, tracks_of(cam, paths, both, 0.05, k), np.arange(INSTANTS))
        for k, cam in enumerate(cams)
    ]
    result = reconstruct(inputs)
    assert len(result.markers) == 2
    for marker in result.markers:
        assert sorted(k for k, _ in marker.members) == [0, 1]
