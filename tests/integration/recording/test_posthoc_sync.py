"""Post-hoc sync on videos of the virtual rig recorded as separate devices would, started at known
instants: the offsets found from a flash and from motion, against the truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from labrig.capture.posthoc_sync import PostHocSyncError, estimate_offsets
from labrig.capture.rig_camera import VirtualRig
from labrig.scenarios.rig_videos import write_rig_videos

STARTS = (0.3137, 0.7021, 0.5555)  # world seconds: cameras 2 and 3 start 388.4 and 241.8 ms late
FRAME_S = 1 / 30


@pytest.fixture(scope="module")
def flash_videos(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    # 3.5 s each: all three see the lamp come on at world 1.0 s, and only then
    return write_rig_videos(tmp_path_factory.mktemp("flash"), STARTS, 3.5, scene="flash")


def test_the_offsets_from_a_flash_are_within_half_a_frame(flash_videos: list[Path]) -> None:
    # the ground truth: each video sees the lamp come on once, at world 1.0 s
    for start in STARTS:
        assert VirtualRig().flashes(start, start + 3.5) == [1.0]
    named = [(f"cam{k + 1}", p, 30.0) for k, p in enumerate(flash_videos)]
    sync = estimate_offsets(named, "flash")
    assert sync.trustworthy, sync.summary()
    for camera, start in zip(sync.cameras, STARTS, strict=True):
        truth = start - STARTS[0]
        assert abs(camera.offset_s - truth) <= 0.5 * FRAME_S, (camera, truth)
    # sub-frame: the starts are not whole frames apart, and the estimate says so
    assert abs(sync.cameras[1].offset_s - 0.3884) < 0.25 * FRAME_S


def test_the_offsets_from_motion_are_within_one_frame(tmp_path: Path) -> None:
    videos = write_rig_videos(tmp_path, STARTS, 6.0, scene="markers")
    named = [(f"cam{k + 1}", p, 30.0) for k, p in enumerate(videos)]
    sync = estimate_offsets(named, "motion")
    assert sync.trustworthy, sync.summary()
    for camera, start in zip(sync.cameras, STARTS, strict=True):
        assert abs(camera.offset_s - (start - STARTS[0])) <= FRAME_S, camera


def test_motion_that_repeats_within_the_search_is_not_trusted(tmp_path: Path) -> None:
    # the only marker moving up and down ("lift") does so every 4 s: searched over ±5 s, two
    # offsets match it as well, and the estimate says so
    videos = write_rig_videos(tmp_path / "long", STARTS[:2], 14.0, scene="markers")
    sync = estimate_offsets([("a", videos[0], 30.0), ("b", videos[1], 30.0)], "motion", max_lag_s=5)
    assert not sync.trustworthy and "movement repeats within ±5 s" in sync.summary()
    with pytest.raises(PostHocSyncError, match="too short"):
        short = write_rig_videos(tmp_path / "short", (0.0, 0.4), 1.0, scene="markers")
        estimate_offsets([("a", short[0], 30.0), ("b", short[1], 30.0)], "motion")


def test_a_video_without_the_flash_is_refused_and_a_faint_flash_is_not_trusted(
    tmp_path: Path,
) -> None:
    # the markers scene has no lamp: a flash cannot be found in it
    dark = write_rig_videos(tmp_path / "dark", STARTS[:2], 2.0, scene="markers")
    with pytest.raises(PostHocSyncError, match="no flash was found in cam1"):
        estimate_offsets([(f"cam{k + 1}", p, 30.0) for k, p in enumerate(dark)], "flash")
    # a faint flash (a lamp far off, or the sun): found, but not trusted, and said why
    rig_dim = write_rig_videos(tmp_path / "dim", STARTS[:2], 3.0, scene="flash", gain=6.0)
    sync = estimate_offsets([(f"cam{k + 1}", p, 30.0) for k, p in enumerate(rig_dim)], "flash")
    assert not sync.trustworthy and "the flash is faint" in sync.summary()
