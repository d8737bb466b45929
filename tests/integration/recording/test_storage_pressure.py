"""Storage pressure gates capture: refused before it starts, stopped cleanly when the disk fills."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from labrig.capture.recorder import Recorder
from labrig.capture.sources import Mode
from labrig.capture.virtual import VirtualCamera
from labrig.domain.storage import GIB, PressureLevel, PressurePolicy
from labrig.events import events_after
from labrig.storage import DiskUsage, StorageInsufficientError, StorageMonitor
from labrig.store import Store, open_store
from labrig.store.models import Capture
from tests.integration.recording.conftest import SMALL, VIRTUAL, wait_for_frames


class Disk:
    """The volume's free space as the test decides it (the monitor's measuring function)."""

    def __init__(self, free: int) -> None:
        self.free = free

    def __call__(self, _path: Path) -> DiskUsage:
        return DiskUsage(1000 * GIB, 1000 * GIB - self.free, self.free)


def test_level_changes_are_recorded_once_and_remembered(store: Store) -> None:
    disk = Disk(100 * GIB)
    monitor = StorageMonitor(store, disk_usage=disk)
    assert monitor.sample().level is PressureLevel.NORMAL and not monitor.sample().changed
    disk.free = 10 * GIB
    reading = monitor.sample()
    assert reading.changed and reading.level is PressureLevel.HIGH
    [event] = [e for e in events_after(store, 0) if e.name == "storage.pressure.changed"]
    assert event.payload | {"volume": "-"} == {
        "volume": "-",
        "previous_level": "normal",
        "level": "high",
        "free_bytes": 10 * GIB,
        "minutes_left": None,
    }
    again = StorageMonitor(store, disk_usage=disk)  # a restart
    assert again.level is PressureLevel.HIGH and not again.sample().changed
    assert again.heavy_jobs_paused()


def test_a_capture_that_cannot_fit_is_refused_before_it_starts(store: Store) -> None:
    monitor = StorageMonitor(store, disk_usage=Disk(6 * GIB))
    with pytest.raises(StorageInsufficientError) as info:
        monitor.check_capture(Mode(1920, 1080, 60).bytes_per_second(), planned_seconds=3600)
    assert (
        info.value.code == "LABRIG_STORAGE_INSUFFICIENT" and "record shorter" in info.value.message
    )
    # a short one fits
    monitor.check_capture(Mode(640, 480, 30).bytes_per_second(), planned_seconds=10)


def test_recording_stops_cleanly_after_a_segment_when_pressure_turns_critical(store: Store) -> None:
    disk = Disk(100 * GIB)
    monitor = StorageMonitor(store, disk_usage=disk)
    recorder = Recorder(
        store, VirtualCamera("markers"), VIRTUAL, SMALL, segment_seconds=0.3, monitor=monitor
    )
    recorder.start()
    wait_for_frames(recorder, 21)  # 0.7 s of the camera: two segments closed
    disk.free = 1 * GIB  # another program filled the disk
    recorder.wait(10)
    assert "nearly full" in recorder.status().stop_reason
    result = recorder.stop()
    assert result.frame_count > 0
    with store.read() as s:
        assert s.get(Capture, result.capture_id).state == "committed"  # type: ignore[union-attr]
    assert monitor.level is PressureLevel.CRITICAL


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    """A real 24 MB filesystem (tmpfs), mounted for the test; needs root, as CI has."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_real_small_disk_fills_and_the_recording_ends_committed(small_volume: Path) -> None:
    store = open_store(small_volume / "store")
    policy = PressurePolicy(
        elevated_free=16 << 20,
        high_free=12 << 20,
        critical_free=8 << 20,
        elevated_minutes=0,
        high_minutes=0,
        critical_minutes=0,
    )
    monitor = StorageMonitor(store, policy)
    # noisy frames compress badly: the disk fills fast
    camera = VirtualCamera("board", paced=False, noise=8.0)
    recorder = Recorder(
        store, camera, VIRTUAL, Mode(1280, 720, 30.0), segment_seconds=0.2, monitor=monitor
    )
    recorder.start()
    recorder.wait(60)
    assert "nearly full" in recorder.status().stop_reason
    result = recorder.stop()
    assert result.frame_count > 0 and monitor.free_bytes() > 0
    with store.read() as s:
        assert (
            s.scalar(select(func.count()).select_from(Capture).where(Capture.state == "committed"))
            == 1
        )
    store.close()
