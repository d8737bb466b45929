"""Recording a rig: the virtual rig's cameras, each on its own pacing thread and clock, recorded
together into one attempt, with the sync measured against what the cameras were told to do."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.capture import create_session, iter_frames, load_capture
from labrig.capture.frame_tags import read_frame_tag
from labrig.capture.recorder import DeviceBusyError
from labrig.capture.rig_camera import CameraTiming
from labrig.capture.rig_recorder import RigCaptureOutcome, RigDeviceError, RigRecording
from labrig.capture.rig_sync import SyncFigures
from labrig.capture.rigs import DeviceSpec, RigExistsError, RigInvalidError
from labrig.capture.sink import read_sidecar
from labrig.capture.sources import Mode
from labrig.capture.verify import DeviceRefusedError
from labrig.domain.recordings import RecordingPurpose
from labrig.jobs.runner import ANALYSIS_NICENESS, yield_to_recording
from labrig.pipeline import save_rig_attempt
from labrig.store import Store
from labrig.store.models import Attempt, AttemptCapture, Capture, DeviceRecord, Job
from labrig.store.models import RigRecording as Row

SMALL = Mode(640, 360, 30.0)


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    yield bootstrap(store=store)


def small_rig(services: Services, name: str = "bench", cameras: int = 4) -> None:
    services.capture.add_rig(
        name,
        [
            DeviceSpec(f"virtual:rig-{n}", Mode(640, 360, 30.0, "any"))
            for n in range(1, cameras + 1)
        ],
    )


def record_frames(recording: RigRecording, frames: int, timeout_s: float = 60.0) -> None:
    """Until every camera still recording has written ``frames`` (a length in frames: a busy
    machine gets the cameras' frames later, never fewer)."""
    deadline = time.monotonic() + timeout_s
    while any(
        c.status.frames < frames and not c.status.stop_reason for c in recording.status().cameras
    ):
        assert time.monotonic() < deadline, recording.status()
        time.sleep(0.02)


def test_a_rig_is_recorded_into_one_attempt_with_every_capture_and_its_sync(
    services: Services,
) -> None:
    small_rig(services)
    session = create_session(services.queue, "RIG-1", "gait", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 45)
    live = recording.status()
    result = recording.stop()
    attempt_id = save_rig_attempt(services.queue, result)

    # every camera committed, none dropped a frame, and they began at one instant
    assert [c.place for c in result.captures] == ["front", "right", "back", "left"]
    assert all(c.commit and c.commit.state == "committed" for c in result.captures)
    assert all(c.commit and c.commit.dropped_frames == 0 for c in result.captures)
    assert live.spread_p99_ms is not None and live.spread_p99_ms < 1.0
    firsts = []
    for c in result.captures:
        assert c.commit is not None
        media = load_capture(services.store, c.commit.manifest_sha256)
        rows = [r for p in media.timestamps if p is not None for r in read_sidecar(p)]
        firsts.append(rows[0][1])
        # the frame index each camera drew in its corner is the one its sidecar keeps, frame for
        # frame: read back from the recorded (MJPEG) pixels
        tags = [read_frame_tag(img) for path in media.segments for img in iter_frames(path)]
        assert tags == [r[3] for r in rows] and tags == list(range(tags[0], tags[0] + len(tags)))
    assert max(firsts) - min(firsts) < 1e9 / 30 / 2

    # one attempt, its captures in the rig's order, the sync stored with it and rig.sync queued
    with services.store.read() as db:
        linked = list(
            db.scalars(
                select(AttemptCapture.capture_id)
                .where(AttemptCapture.attempt_id == attempt_id)
                .order_by(AttemptCapture.position)
            )
        )
        row = db.scalars(select(Row).where(Row.attempt_id == attempt_id)).one()
        stages = set(db.scalars(select(Job.stage_id).where(Job.attempt_id == attempt_id)))
    assert linked == [c.capture_id for c in result.captures]
    assert row.state == "saved" and row.rig_name == "bench"
    figures = SyncFigures.from_json(json.loads(row.sync or "{}"))
    assert figures.cameras == ["front", "right", "back", "left"]
    assert figures.frame_sets >= 44 and figures.unmatched == dict.fromkeys(figures.cameras, 0)
    assert figures.spread_ms is not None and figures.spread_ms["p99"] < 0.01  # one world clock
    assert stages == {"rig.sync", "media.qc", "tracking.markers", "kinematics"}


def test_the_sync_figures_are_the_offsets_drift_and_drops_the_cameras_were_given(
    services: Services,
) -> None:
    small_rig(services, cameras=3)
    services.capture.virtual_rig.timing = {
        1: CameraTiming(offset_ms=4.0, jitter_ms=0.3),
        2: CameraTiming(drift_ppm=400.0, drop_probability=0.08),
    }
    session = create_session(services.queue, "RIG-2", "gait", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 90)
    result = recording.stop()
    figures = result.sync
    assert figures is not None and figures.spread_ms is not None
    # the offset of 4 ms is the spread, give or take the jitter
    assert 3.0 < figures.spread_ms["p50"] < 5.0
    # camera 3's clock runs 400 ppm against the others'
    assert figures.drift_ppm["front"] == 0.0
    assert figures.drift_ppm["back"] == pytest.approx(400.0, abs=20.0)
    # the frames camera 3 dropped are exactly those the rig says it dropped, and unmatched
    back = result.captures[2]
    assert back.commit is not None
    frames = {c.place: frame_numbers(services, c) for c in result.captures}
    span = range(min(frames["back"]), max(frames["back"]) + 1)
    rig = services.capture.virtual_rig
    truly_dropped = {n for n in span if rig.dropped(2, n)}
    assert truly_dropped, "with 8 % over 90 frames, some frames are dropped"
    assert frames["back"] == set(span) - truly_dropped
    assert back.commit.dropped_frames == len(truly_dropped)
    # the cameras stop one by one: an instant at either end another camera has a frame for is
    # unmatched too (a busy machine may stop a camera a frame before the others)
    instants = set().union(*frames.values())
    for place in ("front", "right"):
        ran = range(min(frames[place]), max(frames[place]) + 1)
        assert frames[place] == set(ran), f"{place} dropped no frame"
    assert figures.unmatched == {k: len(instants - v) for k, v in frames.items()}
    assert figures.unmatched["back"] >= len(truly_dropped)


def frame_numbers(services: Services, capture: RigCaptureOutcome) -> set[int]:
    """The rig's frame numbers a camera's committed capture holds."""
    assert capture.commit is not None
    media = load_capture(services.store, capture.commit.manifest_sha256)
    return {row[3] for p in media.timestamps if p is not None for row in read_sidecar(p)}


def test_a_camera_that_stops_mid_recording_leaves_the_others_recording(
    services: Services,
) -> None:
    small_rig(services, cameras=3)
    services.capture.virtual_rig.timing = {1: CameraTiming(fail_after_s=1.2)}
    session = create_session(services.queue, "RIG-3", "gait", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 90)
    assert recording.status().cameras[1].status.stop_reason
    result = recording.stop()
    attempt_id = save_rig_attempt(services.queue, result)
    frames = [c.commit.frame_count if c.commit else 0 for c in result.captures]
    assert frames[0] >= 90 and frames[2] >= 90
    assert 0 < frames[1] < 45  # committed up to the failure
    right = result.captures[1]
    assert right.stopped is not None and "stopped sending frames" in right.stopped["reason"]
    with services.store.read() as db:
        row = db.scalars(select(Row).where(Row.attempt_id == attempt_id)).one()
        note = db.get(Capture, right.capture_id)
        stored = json.loads(row.devices)
    assert note is not None and note.state == "committed"
    assert stored[1]["stopped"]["reason"] == right.stopped["reason"]
    assert "right (virtual:rig-2) stopped after" in result.note
    # the instants after it stopped are unmatched for it, so the gate will say so
    assert result.sync is not None and result.sync.unmatched["right"] > 40


def test_a_rig_naming_a_device_that_is_not_connected_is_refused_and_nothing_is_recorded(
    services: Services,
) -> None:
    small_rig(services, cameras=2)
    with services.store.write() as db:  # the rig's second camera, as if unplugged since
        from labrig.store.models import RigDeviceRecord

        device = db.scalars(select(RigDeviceRecord).where(RigDeviceRecord.position == 1)).one()
        device.device_id = "uvc:046d:082d:HD Pro Webcam C920:/dev/video7"
    session = create_session(services.queue, "RIG-4", "gait", "ana")
    with pytest.raises(RigDeviceError) as refused:
        services.capture.start_rig_recording("bench", session)
    assert refused.value.code == "LABRIG_RIG_DEVICE_UNAVAILABLE"
    assert "not connected: right (uvc:046d:082d" in refused.value.message
    with services.store.read() as db:
        assert not list(db.scalars(select(Capture))) and not list(db.scalars(select(Row)))


def test_two_rigs_sharing_a_device_cannot_record_at_once(services: Services) -> None:
    small_rig(services, "one", cameras=2)
    # its first device is free: it is opened and streams before the second is found busy
    services.capture.add_rig(
        "two", [DeviceSpec("virtual:rig-3", SMALL), DeviceSpec("virtual:rig-2", SMALL)]
    )
    session = create_session(services.queue, "RIG-5", "gait", "ana")
    first = services.capture.start_rig_recording("one", session)
    with pytest.raises(DeviceBusyError) as busy:
        services.capture.start_rig_recording("two", session)
    assert busy.value.code == "LABRIG_DEVICE_BUSY" and "virtual:rig-2" in busy.value.message
    record_frames(first, 20)  # the first rig goes on recording, untouched
    result = first.stop()
    assert all(c.commit and c.commit.frame_count >= 20 for c in result.captures)
    with services.store.read() as db:  # the refused rig left no capture behind it
        states = sorted(c.state for c in db.scalars(select(Capture)))
        refused = db.scalars(select(Row).where(Row.rig_name == "two")).one()
    assert states == ["committed", "committed"] and refused.state == "failed"
    assert not any((services.store.root / "captures" / "provisional").iterdir())
    # once the first has stopped, the second records
    second = services.capture.start_rig_recording("two", session)
    record_frames(second, 5)
    assert all(c.commit for c in second.stop().captures)


def test_rigs_are_made_of_verified_devices_and_bad_ones_are_refused(services: Services) -> None:
    with pytest.raises(DeviceRefusedError) as mode:
        services.capture.add_rig(
            "odd",
            [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec("virtual:rig-2", Mode(800, 600, 25.0))],
        )
    assert mode.value.code == "LABRIG_MODE_UNSUPPORTED"
    assert "right (virtual:rig-2)" in mode.value.message and "800x600@25" in mode.value.message
    with pytest.raises(RigInvalidError, match="2 to 16 devices"):
        services.capture.add_rig("solo", [DeviceSpec("virtual:rig-1")])
    with pytest.raises(RigInvalidError, match="named twice"):
        services.capture.add_rig(
            "twice", [DeviceSpec("virtual:rig-1"), DeviceSpec("virtual:rig-1")]
        )
    with pytest.raises(RigExistsError):
        services.capture.add_rig(
            "virtual", [DeviceSpec("virtual:rig-1"), DeviceSpec("virtual:rig-2")]
        )
    assert [r.name for r in services.capture.rigs()] == ["virtual"]  # nothing was stored
    small_rig(services, cameras=2)
    rigs = {r.name: r for r in services.capture.rigs()}
    assert [d.place for d in rigs["bench"].devices] == ["front", "right"]
    assert [d.mode.label() for d in rigs["bench"].devices] == ["640x360@30 BGR"] * 2
    with services.store.read() as db:  # each device's verdict is stored, as for one device
        verdicts = {r.device_id: r.verified for r in db.scalars(select(DeviceRecord))}
    assert verdicts["virtual:rig-1"] and verdicts["virtual:rig-2"]
    with pytest.raises(RigExistsError):
        small_rig(services, cameras=2)
    services.capture.remove_rig("bench")
    assert [r.name for r in services.capture.rigs()] == ["virtual"]


def test_analysis_waits_while_the_workstation_records_and_runs_below_it(
    services: Services,
) -> None:
    small_rig(services, cameras=2)
    session = create_session(services.queue, "RIG-6", "gait", "ana")
    first = services.capture.start_rig_recording("bench", session)
    record_frames(first, 10)
    save_rig_attempt(services.queue, first.stop())  # an attempt whose analysis is Ready
    recording = services.capture.start_rig_recording("bench", session)
    assert services.queue.claim(4) == []  # recording comes first: nothing is started
    record_frames(recording, 10)
    save_rig_attempt(services.queue, recording.stop())
    claims = services.queue.claim(4)  # resumed once the recording is saved
    assert {c.stage_id for c in claims} == {"rig.sync"}

    # the thread that runs a stage runs below the recording's threads
    niceness: list[int] = []

    def stage_thread() -> None:
        yield_to_recording()
        niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    worker = threading.Thread(target=stage_thread)
    worker.start()
    worker.join()
    assert niceness == [max(ANALYSIS_NICENESS, os.getpriority(os.PRIO_PROCESS, 0))]
    # (the test thread itself is never lowered: only job threads are)


def test_a_replaying_camera_shows_its_first_frames_again_as_they_are() -> None:
    from labrig.capture.rig_camera import VirtualRig

    rig = VirtualRig(replay=10)
    camera = rig.camera(0)
    camera.open(SMALL)
    first, again = camera.render(3), camera.render(13)
    # frame 3 again, tag and all, the very array (read only, so no frame in flight changes)
    assert read_frame_tag(again) == 3 and again is first and not again.flags.writeable
    # rendered once for every opening of the camera: its probe's and its recording's
    other = rig.camera(0)
    other.open(SMALL)
    assert other.render(3) is first
    live = VirtualRig().camera(0)
    live.open(SMALL)
    assert read_frame_tag(live.render(13)) == 13
    assert not (live.render(3)[40:] == live.render(13)[40:]).all()


def test_recovery_leaves_a_rig_that_is_still_recording_alone(services: Services) -> None:
    small_rig(services, cameras=2)
    session = create_session(services.queue, "RIG-7", "gait", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 10)
    # another window starting on the same data folder runs its recovery now
    other = bootstrap(store=services.store)
    report = other.recover()
    assert report.items == []
    with services.store.read() as db:
        assert db.scalars(select(Row)).one().state == "recording"
    attempt_id = save_rig_attempt(services.queue, recording.stop())
    assert other.recover().items == []  # and once saved, there is nothing to make of it
    with services.store.read() as db:
        row = db.scalars(select(Row)).one()
    assert row.state == "saved" and row.attempt_id == attempt_id


def test_a_board_recording_by_a_rig_is_kept_for_its_calibration_and_not_analysed(
    services: Services,
) -> None:
    small_rig(services, cameras=2)
    services.capture.virtual_rig.scene = "board"
    session = create_session(services.queue, "RIG-B", "calibration", "ana")
    recording = services.capture.start_rig_recording("bench", session)
    record_frames(recording, 10)
    attempt_id = save_rig_attempt(services.queue, recording.stop(), purpose=RecordingPurpose.BOARD)
    with services.store.read() as db:
        jobs = list(db.scalars(select(Job).where(Job.attempt_id == attempt_id)))
        row = db.scalars(select(Row).where(Row.attempt_id == attempt_id)).one()
        note = db.get(Attempt, attempt_id).note  # type: ignore[union-attr]
    assert jobs == [] and row.state == "saved"
    assert "Board recording for rig calibration: not analysed" in (note or "")
    assert "labrig calibrate-rig --capture-attempt" in (note or "")
