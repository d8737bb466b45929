"""Recording from a device into committed, content-addressed media: the happy path and the bad
days."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from labrig.capture.commit import count_frames
from labrig.capture.recorder import Recorder, RecorderState, provisional_root
from labrig.capture.sink import SteadyClock
from labrig.capture.virtual import VirtualCamera
from labrig.events import events_after
from labrig.fsutil import sha256_file
from labrig.store import Store
from labrig.store.blobs import BlobStore
from labrig.store.models import Blob, Capture, CaptureSegment
from tests.integration.recording.conftest import (
    SMALL,
    VIRTUAL,
    FailingSink,
    StallingCamera,
    wait_for_frames,
)


def _segments(store: Store, capture_id: str) -> list[CaptureSegment]:
    with store.read() as s:
        return list(
            s.scalars(
                select(CaptureSegment)
                .where(CaptureSegment.capture_id == capture_id)
                .order_by(CaptureSegment.position)
            )
        )


def test_a_recording_is_committed_segment_by_segment_into_the_media_store(store: Store) -> None:
    # stamped as the camera's frames are due: a busy machine drops nothing here
    recorder = Recorder(
        store,
        VirtualCamera("markers"),
        VIRTUAL,
        SMALL,
        segment_seconds=0.5,
        clock=SteadyClock(SMALL.fps),
    )
    capture_id = recorder.start()
    # before the first frame
    assert (provisional_root(store) / capture_id / "manifest.json").exists()
    wait_for_frames(recorder, 48)  # 1.6 s of the camera
    result = recorder.stop()
    assert recorder.status().state is RecorderState.COMMITTED
    assert 40 <= result.frame_count <= 56 and result.dropped_frames == 0
    segments = _segments(store, capture_id)
    assert len(segments) == result.segments >= 3
    blobs = BlobStore(store.media_dir)
    for seg in segments:
        path = blobs.path(seg.media_sha256, ".avi")
        assert sha256_file(path)[0] == seg.media_sha256 and count_frames(path) == seg.frames
    assert sum(s.frames for s in segments) == result.frame_count
    manifest = json.loads(blobs.path(result.manifest_sha256, ".json").read_bytes())
    assert [s["sha256"] for s in manifest["segments"]] == [s.media_sha256 for s in segments]
    assert manifest["schema"] == "labrig.manifest/1" and manifest["open_segment"] is None
    with store.read() as s:
        row = s.get(Capture, capture_id)
        assert (
            row is not None
            and row.state == "committed"
            and row.manifest_sha256 == result.manifest_sha256
        )
        assert s.get(Blob, result.manifest_sha256) is not None
    names = [e.name for e in events_after(store, 0)]
    assert names == ["capture.started", "capture.committed"]
    assert not (provisional_root(store) / capture_id).exists()


def test_timestamps_are_stored_per_frame(store: Store) -> None:
    recorder = Recorder(store, VirtualCamera("markers"), VIRTUAL, SMALL, segment_seconds=10)
    recorder.start()
    recorder.wait(0.5)
    result = recorder.stop()
    [seg] = _segments(store, result.capture_id)
    assert seg.timestamps_sha256 is not None
    lines = BlobStore(store.media_dir).path(seg.timestamps_sha256, ".csv").read_text().splitlines()
    assert lines[0] == "frame,mono_ns,utc_ns" and len(lines) - 1 == seg.frames
    mono = [int(line.split(",")[1]) for line in lines[1:]]
    assert mono == sorted(mono) and mono[0] == seg.first_mono_ns and mono[-1] == seg.last_mono_ns


def test_a_device_pulled_mid_recording_ends_it_and_keeps_every_frame(store: Store) -> None:
    camera = VirtualCamera("markers", fail_after=25)
    recorder = Recorder(store, camera, VIRTUAL, SMALL, segment_seconds=0.5)
    recorder.start()
    recorder.wait(10)  # returns as soon as the recording ends by itself
    status = recorder.status()
    assert "stopped sending frames" in status.stop_reason
    result = recorder.stop()
    assert result.frame_count == 25
    with store.read() as s:
        row = s.get(Capture, result.capture_id)
        assert row is not None and "stopped sending frames" in (row.report or "")


def test_frames_the_device_skipped_are_counted_as_dropped(store: Store) -> None:
    camera = StallingCamera(stall_every=10, stall_s=0.2)  # each stall loses ~5 frames at 30 fps
    recorder = Recorder(store, camera, VIRTUAL, SMALL)
    recorder.start()
    recorder.wait(1.5)
    result = recorder.stop()
    assert result.dropped_frames >= 4
    assert (
        json.loads(_capture(store, result.capture_id).report or "{}")["gap_drops"]
        == result.dropped_frames
    )


def test_a_disk_that_cannot_keep_up_drops_frames_visibly_never_silently(store: Store) -> None:
    camera = VirtualCamera("markers", paced=False, frames_limit=400)  # as fast as it renders
    # a 3-frame queue; the drops here are the full queue's, not a busy machine's late grabs
    recorder = Recorder(
        store, camera, VIRTUAL, SMALL, queue_seconds=0.1, clock=SteadyClock(SMALL.fps)
    )
    recorder.start()
    recorder.wait(30)
    result = recorder.stop()
    report = json.loads(_capture(store, result.capture_id).report or "{}")
    assert result.frame_count + report["overflow_drops"] == 400
    assert report["overflow_drops"] == result.dropped_frames


def test_a_write_failure_stops_cleanly_and_commits_what_was_written(store: Store) -> None:
    class Failing(Recorder):
        sink_class = FailingSink

    recorder = Failing(store, VirtualCamera("markers"), VIRTUAL, SMALL, segment_seconds=0.3)
    recorder.start()
    recorder.wait(10)
    result = recorder.stop()
    assert result.frame_count == 20
    report = json.loads(_capture(store, result.capture_id).report or "{}")
    assert (
        report["error_code"] == "LABRIG_CAPTURE_WRITE_FAILED"
        and "No space left" in report["stop_reason"]
    )


def _capture(store: Store, capture_id: str) -> Capture:
    with store.read() as s:
        row = s.get(Capture, capture_id)
        assert row is not None
        return row


def test_a_provisional_capture_whose_folder_vanished_is_marked_abandoned(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    from labrig.capture.recovery import recover
    from labrig.store import open_store

    root = tmp_path / "store"
    child = [
        sys.executable,
        "-m",
        "tests.integration.recording.record_child",
        str(root),
        "--kill-at-rename",
        "3",
    ]
    # dies mid-recording
    subprocess.run(child, cwd=Path(__file__).resolve().parents[3], check=False, timeout=60)
    store = open_store(root)
    [folder] = list(provisional_root(store).iterdir())
    shutil.rmtree(folder)  # someone deleted it by hand before Labrig started again
    [item] = recover(store).items
    assert (item.capture_id, item.outcome) == (folder.name, "abandoned")
    assert _capture(store, folder.name).state == "abandoned"
    store.close()


def test_a_timestamp_sidecar_cut_by_a_crash_yields_only_whole_values(tmp_path: Path) -> None:
    from labrig.capture.sink import read_timestamps

    sidecar = tmp_path / "seg-00000.ts.csv"
    sidecar.write_text("frame,mono_ns,utc_ns\n0,1000,5000\n1,2000,6000\n2,30")  # killed mid-value
    assert read_timestamps(sidecar) == [1000, 2000]
