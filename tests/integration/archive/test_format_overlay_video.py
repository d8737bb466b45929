"""The overlay video of a real result (30 frames of the virtual camera, each carrying its index in
its corner, recorded and analysed through the queue), decoded back with OpenCV: every recorded
frame once, in order, at its size, with each marker in force drawn where its track puts it, in its
colour, its label and trail beside it, and a caption; a rig's reprojections as diamonds."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from labrig.bootstrap import Services, bootstrap
from labrig.capture.frame_tags import read_frame_tag
from labrig.domain.corrections import Track, parse_operation
from labrig.domain.palette import SERIES_BGR
from labrig.export.formats.overlay_video import (
    VideoWriterError,
    video_codec,
    write_overlay_video,
)
from labrig.review import Overlay, ResultMedia
from labrig.store import open_store
from tests.support.results import TemplateResults, copy_store, make_results

Image = npt.NDArray[np.uint8]
Array = npt.NDArray[np.float64]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("overlay-video-template") / "store"
    return root, make_results(root)


@pytest.fixture
def result(
    template: tuple[Path, TemplateResults], tmp_path: Path
) -> Iterator[tuple[Services, str]]:
    store = open_store(copy_store(template[0], tmp_path / "store"))
    yield bootstrap(store=store), template[1].published_id
    store.close()


def written(media: ResultMedia, path: Path, fourcc: str | None = None) -> list[Image]:
    """``media``'s first camera written as an overlay video, decoded back."""
    codec = fourcc or video_codec()[0]
    assert write_overlay_video(media, 0, path, codec) == media.cameras[0].frame_count
    return decoded(path)


def decoded(path: Path) -> list[Image]:
    capture = cv2.VideoCapture(str(path))
    frames: list[Image] = []
    while (got := capture.read())[0]:
        frames.append(np.asarray(got[1], dtype=np.uint8))
    capture.release()
    return frames


def distance(image: Image, xy: npt.ArrayLike, bgr: tuple[int, int, int], r: int = 1) -> float:
    """The colour distance from ``bgr`` of the closest pixel within ``r`` px of ``xy``."""
    x, y = (round(float(v)) for v in np.asarray(xy))
    box = image[y - r : y + r + 1, x - r : x + r + 1].reshape(-1, 3).astype(float)
    return float(np.min(np.linalg.norm(box - np.asarray(bgr, float), axis=1)))


def at(track: Track | None, frame: int) -> Array:
    """``track``'s position at ``frame``, which it has."""
    assert track is not None
    xy = track.at(frame)
    assert xy is not None, frame
    return xy


def bgr(rgb: tuple[int, int, int] | None) -> tuple[int, int, int]:
    assert rgb is not None
    return rgb[2], rgb[1], rgb[0]


def test_the_codec_chosen_is_one_opencv_reads_back(tmp_path: Path) -> None:
    fourcc, ext = video_codec()
    assert (fourcc, ext) in {("avc1", ".mp4"), ("MJPG", ".avi")}
    assert video_codec() == (fourcc, ext)  # probed once
    path = tmp_path / f"probe{ext}"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), 30.0, (160, 120))
    assert writer.isOpened()
    for k in range(12):
        writer.write(np.full((120, 160, 3), 20 * k, np.uint8))
    writer.release()
    back = decoded(path)
    assert len(back) == 12 and back[0].shape == (120, 160, 3)
    assert abs(float(back[6].mean()) - 120) < 8


@pytest.mark.slow
def test_every_frame_is_written_in_order_with_the_markers_drawn_in_their_colours(
    result: tuple[Services, str], tmp_path: Path
) -> None:
    services, result_id = result
    media = services.governance.reviewed.media(result_id)
    camera = media.cameras[0]
    steps: list[tuple[int, int]] = []
    path = tmp_path / f"camera-overlay{video_codec()[1]}"
    n = write_overlay_video(
        media, 0, path, video_codec()[0], step=lambda done, total: steps.append((done, total))
    )
    video = decoded(path)
    original = list(media.media[0].frames())
    assert n == len(video) == len(original) == camera.frame_count == 30
    assert video[0].shape == (camera.height, camera.width, 3) == original[0].shape
    assert [read_frame_tag(f) for f in video] == list(range(30))  # each frame once, in order
    assert steps == [(10, 30), (20, 30), (30, 30)]
    assert len(media.overlays) == 3
    for k in (0, 12, 29):
        for overlay in media.overlays:
            xy = at(overlay.effective, k)
            assert distance(video[k], xy, bgr(overlay.colour_rgb)) < 40, (k, overlay.track_id)
            # its label, up and right of it, is drawn over what was recorded there
            x, y = (round(float(v)) for v in xy)
            box = np.s_[max(y - 24, 0) : y - 8, x + 8 : x + 30]
            change = np.abs(video[k][box].astype(int) - original[k][box].astype(int)).sum(axis=2)
            assert change.max() > 200, (k, overlay.track_id)
        # the caption, in the bottom-left corner, inside the picture
        corner = np.s_[camera.height - 28 : camera.height - 4, 6:130]
        assert (video[k][corner] > 200).all(axis=2).sum() > 40
        assert (original[k][corner] > 200).all(axis=2).sum() == 0


@pytest.mark.slow
def test_palette_colours_trails_gaps_and_fills_follow_the_tracks_in_force(
    result: tuple[Services, str], tmp_path: Path
) -> None:
    services, result_id = result
    services.governance.revisions.correct(
        result_id,
        [
            parse_operation("occlude", "0@8-11"),
            parse_operation("fill", "0@8-11:linear"),
            parse_operation("occlude", "2@10-13"),
        ],
        "a hand over markers 0 and 2; 0 filled",
    )
    media = services.governance.reviewed.media(result_id)
    uncoloured = [dataclasses.replace(o, colour_rgb=None) for o in media.overlays]
    media = dataclasses.replace(media, overlays=uncoloured)
    video = written(media, tmp_path / "overlay.avi", "MJPG")
    original = list(media.media[0].frames())
    tracks = {o.track_id: o.effective for o in media.overlays}
    colour = {o.track_id: SERIES_BGR[k] for k, o in enumerate(media.overlays)}
    for name, track in tracks.items():
        now = at(track, 20)
        assert distance(video[20], now, colour[name]) < 40, name
        assert distance(original[20], now, colour[name]) > 100, name  # not the scene's colour
        # the trail: where the marker was 6 frames before
        assert distance(video[20], at(track, 14), colour[name]) < 60, name
        assert distance(original[20], at(track, 14), colour[name]) > 100, name
    # marker 2 unseen at frames 10 to 13: at 15 its trail is broken there
    two = tracks["2"]
    assert two is not None and two.at(11) is None
    gap = (at(two, 9) + at(two, 14)) / 2
    assert distance(video[15], gap, colour["2"], r=2) > 100
    # marker 0's filled frames 8 to 11: a thin dashed line, the tracked ones a solid line
    zero = tracks["0"]
    assert zero is not None and zero.filled == frozenset({8, 9, 10, 11})
    assert coverage(video[25], zero, 8, 12, colour["0"]) < 0.7
    assert coverage(video[25], zero, 1, 6, colour["0"]) > 0.9


def coverage(image: Image, track: Track, first: int, last: int, bgr: tuple[int, int, int]) -> float:
    """The share of points along ``track`` from frame ``first`` to ``last`` drawn in ``bgr``."""
    points = [at(track, f) for f in range(first, last + 1)]
    samples = [a + (b - a) * t for a, b in itertools.pairwise(points) for t in (0.25, 0.5, 0.75)]
    return float(np.mean([distance(image, p, bgr, r=0) < 60 for p in samples]))


@pytest.mark.slow
def test_a_rigs_reprojections_are_drawn_as_diamonds_beside_the_detections(
    result: tuple[Services, str], tmp_path: Path
) -> None:
    services, result_id = result
    media = services.governance.reviewed.media(result_id)
    shift = np.array([0.0, 30.0])  # below: clear of each marker's trail and label
    markers = [
        Overlay(
            o.track_id,
            o.colour_rgb,
            o.automatic,
            o.automatic,
            Track(o.automatic.frames, o.automatic.xy + shift),
        )
        for o in media.overlays
    ]
    rig = dataclasses.replace(media, overlays=[], rig_overlays=[markers])
    video = written(rig, tmp_path / "rig.avi", "MJPG")
    for overlay in markers:
        detected = at(overlay.automatic, 16)
        assert distance(video[16], detected, bgr(overlay.colour_rgb)) < 40
        # the diamond (half diagonal 6 px): its upper-right edge, and hollow inside
        projected = detected + shift
        assert distance(video[16], projected + np.array([3, -3]), bgr(overlay.colour_rgb)) < 60
        inside = projected + np.array([3, 0])
        assert distance(video[16], inside, bgr(overlay.colour_rgb), r=0) > 100


@pytest.mark.slow
def test_a_writer_that_cannot_open_and_a_cancel_are_refused(
    result: tuple[Services, str], tmp_path: Path
) -> None:
    services, result_id = result
    media = services.governance.reviewed.media(result_id)
    with pytest.raises(VideoWriterError, match="cannot write"):
        write_overlay_video(media, 0, tmp_path / "missing" / "video.avi", "MJPG")

    class CancelledError(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        raise CancelledError

    with pytest.raises(CancelledError):
        write_overlay_video(media, 0, tmp_path / "cancelled.avi", "MJPG", step=cancel)
    assert len(decoded(tmp_path / "cancelled.avi")) == 10
