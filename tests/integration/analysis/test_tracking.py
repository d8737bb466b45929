"""Marker tracking on real MJPG recordings of the virtual camera, checked against its ground
truth in plane mm.

The helpers here (recording the scene through the real segment sink, the true plane homography) are
shared by the kinematics and media-QC tests.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.manifest import SegmentV1
from labrig.capture.media import iter_frames, iter_luma
from labrig.capture.sink import SegmentSink
from labrig.capture.sources import Image, Mode
from labrig.capture.virtual import VirtualCamera
from labrig.capture.virtual_scenes import CameraModel, MarkersScene
from labrig.pipeline.kinematics import to_plane_mm
from labrig.pipeline.media_qc import media_qc
from labrig.pipeline.tracking import Tracks, detect_markers, track
from labrig.tasks import TaskCancelledError as Cancelled
from labrig.tasks import TaskControl

HD = Mode(1280, 720, 30.0)
SMALL = Mode(640, 480, 30.0)
NAMES = ("circle", "line", "lissajous")


@dataclass(frozen=True)
class Recording:
    """A recording of the markers scene as the sink writes it: segments, sidecars, and the
    camera for truth."""

    camera: VirtualCamera
    media: list[Path]
    timestamps: list[Path]
    frames: int

    def decoded(self) -> itertools.chain[Image]:
        return itertools.chain.from_iterable(iter_frames(p) for p in self.media)

    def luma(self) -> itertools.chain[Image]:
        """The frames as the tracking stage reads them: their grey plane."""
        return itertools.chain.from_iterable(iter_luma(p) for p in self.media)


def record_markers(
    folder: Path, mode: Mode = HD, frames: int = 120, segment_seconds: float = 2.0
) -> Recording:
    """Frames 0..frames-1 of the markers scene written through :class:`SegmentSink`, timestamps
    exactly 1/fps apart."""
    camera = VirtualCamera("markers", paced=False)
    camera.open(mode)
    closed: list[SegmentV1] = []
    sink = SegmentSink(folder, mode, segment_seconds, lambda segment, _next: closed.append(segment))
    sink.setup()
    for i in range(frames):
        mono = 10**9 + round(i * 1e9 / mode.fps)
        sink.append(camera.render(i), mono, 1_700_000_000 * 10**9 + mono)
    sink.close()
    return Recording(
        camera, [folder / s.name for s in closed], [folder / s.timestamps for s in closed], frames
    )


def plane_homography(model: CameraModel) -> np.ndarray:
    """The true map from undistorted image px to plane mm: known plane points projected
    with no distortion."""
    gx, gy = np.meshgrid(np.linspace(-600, 600, 5), np.linspace(-350, 350, 4))
    plane = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)])
    px, _ = cv2.projectPoints(
        plane, MarkersScene.plane_rvec, MarkersScene.plane_tvec, model.matrix(), np.zeros(5)
    )
    h, _ = cv2.findHomography(px.reshape(-1, 2), plane[:, :2])
    return np.asarray(h)


def truth_mm(camera: VirtualCamera, frames: np.ndarray, name: str) -> np.ndarray:
    index = NAMES.index(name)
    return np.array([camera.truth(int(f))["markers"][index]["plane_mm"] for f in frames])


def name_tracks(
    camera: VirtualCamera, tracks: Tracks, homography: np.ndarray
) -> dict[str, np.ndarray]:
    """Each track in plane mm, named after the marker nearest to its first position."""
    named = {}
    for t in tracks.tracks:
        mm = to_plane_mm(t.xy, homography)
        first = np.array([m["plane_mm"] for m in camera.truth(int(t.frames[0]))["markers"]])
        named[NAMES[int(np.argmin(np.linalg.norm(first - mm[0], axis=1)))]] = mm
    return named


def calibration(camera: VirtualCamera) -> tuple[np.ndarray, np.ndarray]:
    return camera.model.matrix(), camera.model.dist()


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record_markers(tmp_path_factory.mktemp("tracking"))


@pytest.mark.parametrize("read", ["bgr", "luma"])
def test_tracks_match_the_true_plane_trajectories_within_half_a_millimetre(
    recording: Recording, read: str
) -> None:
    progress: list[float] = []
    frames = recording.decoded() if read == "bgr" else recording.luma()
    tracks = track(
        frames,
        expected_markers=3,
        undistort=calibration(recording.camera),
        total_frames=recording.frames,
        task=TaskControl(lambda fraction, _message: progress.append(fraction)),
    )
    assert tracks.frames_processed == recording.frames and tracks.fraction_expected == 1.0
    assert len(tracks.tracks) == 3 and tracks.undistorted
    assert all(t.frames.tolist() == list(range(recording.frames)) for t in tracks.tracks)
    assert progress == sorted(progress) and progress[-1] == 1.0
    named = name_tracks(recording.camera, tracks, plane_homography(recording.camera.model))
    assert sorted(named) == sorted(NAMES)
    for name, mm in named.items():
        err = np.linalg.norm(
            mm - truth_mm(recording.camera, np.arange(recording.frames), name), axis=1
        )
        rmse = float(np.sqrt(np.mean(err**2)))
        print(
            f"tracking {name} ({read}): RMSE {rmse:.4f} mm, max {err.max():.4f} mm over {len(err)} "
            "frames"
        )
        assert rmse < 0.5


def test_without_undistortion_the_lens_shows_as_millimetres_of_error(recording: Recording) -> None:
    tracks = track(recording.decoded(), expected_markers=3)
    named = name_tracks(recording.camera, tracks, plane_homography(recording.camera.model))
    err = np.linalg.norm(
        named["circle"] - truth_mm(recording.camera, np.arange(recording.frames), "circle"), axis=1
    )
    # so the accuracy above is the calibration's doing
    assert not tracks.undistorted and err.max() > 2.0


def test_tracking_speed_against_a_plain_decode_loop(recording: Recording) -> None:
    start = time.perf_counter()
    decoded = sum(1 for _ in recording.decoded())
    decode_s = time.perf_counter() - start
    start = time.perf_counter()
    # as the stage reads them
    tracks = track(recording.luma(), undistort=calibration(recording.camera))
    track_s = time.perf_counter() - start
    start = time.perf_counter()
    media_qc(recording.media, list(recording.timestamps), recording.frames, HD.fps)
    qc_s = time.perf_counter() - start
    assert decoded == tracks.frames_processed == recording.frames
    print(
        f"1280x720 MJPG, {decoded} frames: decode {decoded / decode_s:.0f} fps, decode+track "
        f"{decoded / track_s:.0f} fps (ratio {decode_s / track_s:.2f}), media_qc "
        f"{decoded / qc_s:.0f} fps (ratio {decode_s / qc_s:.2f})"
    )


def blank(frame: Image, camera: VirtualCamera, index: int, name: str) -> Image:
    """The frame with one marker painted over in the background colour (an occlusion)."""
    x, y = camera.truth(index)["markers"][NAMES.index(name)]["image_px"]
    out = frame.copy()
    cv2.circle(out, (round(x), round(y)), 14, MarkersScene.background, -1)
    return out


def small_frames(count: int, hidden: dict[int, str]) -> list[Image]:
    camera = VirtualCamera("markers", paced=False)
    camera.open(SMALL)
    return [
        blank(camera.render(i), camera, i, hidden[i]) if i in hidden else camera.render(i)
        for i in range(count)
    ]


def test_a_marker_hidden_for_a_few_frames_keeps_its_track() -> None:
    # the line marker is the fastest: ~9 px/frame here
    hidden = {10: "circle"} | {i: "line" for i in range(20, 23)}
    tracks = track(small_frames(40, hidden), expected_markers=3)
    assert len(tracks.tracks) == 3
    assert tracks.frames_with_expected == 36 and tracks.fraction_expected == pytest.approx(0.9)
    seen = sorted(len(t.frames) for t in tracks.tracks)
    assert seen == [37, 39, 40]
    line = next(t for t in tracks.tracks if len(t.frames) == 37)
    assert not set(line.frames.tolist()) & {20, 21, 22}


def test_a_marker_gone_longer_than_max_gap_comes_back_as_a_new_track() -> None:
    tracks = track(small_frames(30, {i: "circle" for i in range(10, 20)}), max_gap=5)
    assert len(tracks.tracks) == 4
    assert [t.track_id for t in tracks.tracks] == [0, 1, 2, 3]
    last = tracks.tracks[-1]
    assert last.frames[0] == 20 and len(last.frames) == 10
    assert tracks.expected_markers == 3  # the most common count when not given


def test_detection_is_subpixel_and_can_pick_a_colour() -> None:
    camera = VirtualCamera("markers", paced=False, noise=0.0)
    camera.open(HD)
    frame, truth = camera.render(7), camera.truth(7)["markers"]
    found = detect_markers(frame)
    expected = np.array([m["image_px"] for m in truth])
    assert len(found) == 3
    assert np.linalg.norm(found[:, None] - expected[None], axis=2).min(axis=0).max() < 0.1
    # the line marker is (B,G,R) = (60, 230, 255): the blue plane alone leaves it below the
    # threshold
    assert len(detect_markers(frame, threshold=150, channel=0)) == 2
    assert detect_markers(np.zeros((48, 64), np.uint8)).shape == (0, 2)


def test_markers_of_one_hue_are_found_in_a_colour_frame() -> None:
    camera = VirtualCamera("markers", paced=False, noise=0.0)
    camera.open(HD)
    frame, truth = camera.render(7), camera.truth(7)["markers"]
    # (B,G,R) = (60, 230, 255) is a hue of ~52°, (255, 230, 60) ~188°; the white circle has none
    for hue, name in (((40, 65), "line"), ((175, 200), "lissajous")):
        found = detect_markers(frame, hue=hue)
        assert found.shape == (1, 2)
        assert np.linalg.norm(found[0] - truth[NAMES.index(name)]["image_px"]) < 0.1
    assert detect_markers(frame, hue=(340, 20)).shape == (0, 2)
    red = frame.copy()
    # hue 0°: a range through red wraps
    cv2.circle(red, (200, 600), 12, (40, 40, 230), -1, cv2.LINE_AA)
    assert np.abs(detect_markers(red, hue=(340, 20)) - [200, 600]).max() < 0.1
    with pytest.raises(ValueError, match="BGR frame"):
        detect_markers(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), hue=(40, 65))


def test_tracking_is_deterministic_json_and_cancellable() -> None:
    frames = small_frames(20, {})
    detect = functools.partial(detect_markers, threshold=90)
    first, second = track(frames, detect=detect), track(frames, detect=detect)
    assert json.dumps(first.to_json(), sort_keys=True) == json.dumps(
        second.to_json(), sort_keys=True
    )
    with pytest.raises(Cancelled) as stopped:
        cancelled = TaskControl()
        cancelled.cancel()
        track(frames, task=cancelled)
    assert stopped.value.code == "LABRIG_CANCELLED"
