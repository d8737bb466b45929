"""Watch-folder ingest: only complete files, exactly once, bad files refused without
stopping the watch."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from labrig.capture.watch import WatchFolderIngestor
from labrig.store import Store


def _video_bytes(tmp: Path, frames: int = 30) -> bytes:
    path = tmp / "src.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 25.0, (160, 120))
    for i in range(frames):
        writer.write(np.full((120, 160, 3), (i * 8) % 255, dtype=np.uint8))
    writer.release()
    data = path.read_bytes()
    path.unlink()
    return data


def _wait(predicate: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert predicate()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "drop"
    path.mkdir()
    return path


def test_a_file_written_with_a_long_pause_is_ingested_only_when_complete(
    store: Store, folder: Path, tmp_path: Path
) -> None:
    data = _video_bytes(tmp_path)
    watcher = WatchFolderIngestor(store, folder, stable_seconds=1.0)
    watcher.start()
    try:
        with open(folder / "trial-01.avi", "wb") as fh:
            fh.write(data[: len(data) // 2])
            fh.flush()
            time.sleep(1.5)  # the device software pauses mid-write, longer than any quiet period
            assert watcher.results == []
            fh.write(data[len(data) // 2 :])
        _wait(lambda: len(watcher.results) == 1)
    finally:
        watcher.stop()
    [done] = watcher.results
    assert done.capture_id is not None and done.message == "30 frames"


def test_files_moved_in_and_files_already_there_are_ingested_once(
    store: Store, folder: Path, tmp_path: Path
) -> None:
    (folder / "before-start.avi").write_bytes(_video_bytes(tmp_path, 10))
    watcher = WatchFolderIngestor(store, folder, stable_seconds=0.5)
    watcher.start()
    try:
        staged = tmp_path / "staged.avi"
        staged.write_bytes(_video_bytes(tmp_path, 12))
        os.rename(staged, folder / "moved-in.avi")
        _wait(lambda: len(watcher.results) == 2)
        time.sleep(1.0)  # nothing is ingested twice
    finally:
        watcher.stop()
    assert sorted(r.message for r in watcher.results) == ["10 frames", "12 frames"]
    assert all(r.capture_id for r in watcher.results)


def test_a_file_that_is_not_media_is_refused_and_the_watch_goes_on(
    store: Store, folder: Path, tmp_path: Path
) -> None:
    watcher = WatchFolderIngestor(store, folder, stable_seconds=0.5)
    watcher.start()
    try:
        (folder / "export.mp4").write_bytes(b"this is a csv, misnamed\n" * 50)
        _wait(lambda: len(watcher.results) == 1)
        (folder / "good.avi").write_bytes(_video_bytes(tmp_path, 8))
        _wait(lambda: len(watcher.results) == 2)
    finally:
        watcher.stop()
    refused, good = watcher.results
    assert refused.code == "LABRIG_NOT_MEDIA" and refused.capture_id is None
    assert good.capture_id is not None


def test_polling_mode_waits_for_stability_and_a_whole_file(
    store: Store, folder: Path, tmp_path: Path
) -> None:
    data = _video_bytes(tmp_path)
    # as on a network share
    watcher = WatchFolderIngestor(store, folder, stable_seconds=0.6, polling=True)
    watcher.start()
    try:
        with open(folder / "slow.avi", "wb") as fh:
            for i in range(0, len(data), len(data) // 4):
                fh.write(data[i : i + len(data) // 4])
                fh.flush()
                time.sleep(0.3)
        _wait(lambda: len(watcher.results) == 1)
    finally:
        watcher.stop()
    assert watcher.results[0].message == "30 frames"
