"""Instruments in a rig: the virtual force plate and a USB instrument (through pyusb, down to a
backend test double) recorded with the cameras, on the host's one clock, in chunks that go
through the provisional manifest → verified hash → commit, and part of the attempt."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import numpy as np
import pytest
from sqlalchemy import select

from labrig.bootstrap import Services, bootstrap
from labrig.capture import create_session, iter_frames, load_capture
from labrig.capture.rig_camera import CameraTiming
from labrig.capture.rig_recorder import RigDeviceError
from labrig.capture.rig_world import FLASH_LENGTH_S, flash_instants
from labrig.capture.rigs import DeviceSpec
from labrig.capture.samples import read_chunk
from labrig.capture.sink import read_sidecar
from labrig.capture.sources import Mode
from labrig.capture.verify import DeviceRefusedError
from labrig.capture.virtual_instrument import (
    LANDING_N,
    NOISE_N,
    WEIGHT_N,
    VirtualForcePlate,
    plate_truth,
)
from labrig.pipeline import save_rig_attempt
from labrig.store import Store
from labrig.store.models import AttemptCapture, Capture
from tests.support.usb_instrument import InstrumentBackend, ReferenceInstrument, signal

SMALL = Mode(640, 360, 30.0, "any")


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    yield bootstrap(store=store)


def wait_until(done: object, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def world_now(services: Services) -> float:
    return (time.monotonic_ns() - services.capture.virtual_rig.epoch_ns) / 1e9


def test_the_force_plate_lands_on_the_flash_frames_on_one_clock(services: Services) -> None:
    rig = services.capture.virtual_rig
    rig.scene = "flash"
    rig.plate_timing = CameraTiming(drift_ppm=150.0)
    services.capture.add_rig(
        "plate",
        [
            DeviceSpec("virtual:rig-1", SMALL, "front"),
            DeviceSpec("virtual:rig-2", SMALL, "right"),
            DeviceSpec("virtual:plate-1"),
        ],
    )
    session = create_session(services.queue, "RIG-P", "jump", "ana")
    recording = services.capture.start_rig_recording("plate", session)
    # until a landing (the flash) is well inside the recording, however busy the machine
    landing_at = flash_instants(world_now(services) + 0.2, world_now(services) + 10)[0]
    wait_until(lambda: world_now(services) > landing_at + FLASH_LENGTH_S + 0.5)
    result = recording.stop()
    attempt_id = save_rig_attempt(services.queue, result)

    plate = next(c for c in result.captures if c.instrument)
    assert (plate.place, plate.device_id, plate.mode) == (
        "plate",
        "virtual:plate-1",
        "6 ch @ 1000 Hz",
    )
    assert plate.commit is not None and plate.commit.state == "committed"
    assert plate.commit.dropped_frames == 0
    media = load_capture(services.store, plate.commit.manifest_sha256)
    chunks = [read_chunk(p) for p in media.segments]
    index = np.concatenate([c.index for c in chunks])
    mono = np.concatenate([c.mono_ns for c in chunks])
    values = np.concatenate([c.values for c in chunks])
    assert chunks[0].channels == ("Fx (N)", "Fy (N)", "Fz (N)", "Mx (Nm)", "My (Nm)", "Mz (Nm)")
    assert plate.commit.frame_count == len(index) and list(index) == list(
        range(index[0], index[0] + len(index))
    ), "every sample, in order, none lost"
    # the values are the plate's truth at each sample's instant, give or take its sensor noise
    source = VirtualForcePlate(rig)
    truth = plate_truth(source.world_time(index.astype(np.float64)))
    assert np.abs(values - truth).max() <= NOISE_N + 1e-3

    # the landing's first sample is stamped at the flash's instant on the host clock (±1 sample)
    flash_ns = rig.epoch_ns + landing_at * 1e9
    onset = mono[np.argmax(values[:, 2] > WEIGHT_N + LANDING_N / 2)]
    assert abs(onset - flash_ns) <= 1.5e6 * (1 + 150e-6 * landing_at)
    # and the first lit frame of each camera is exposed within one frame of it: the flash is on
    # the frame sets' clock where the plate's landing is
    for camera in result.cameras:
        assert camera.commit is not None
        cam = load_capture(services.store, camera.commit.manifest_sha256)
        stamps = [r[1] for p in cam.timestamps if p is not None for r in read_sidecar(p)]
        brightness = [float(img.mean()) for path in cam.segments for img in iter_frames(path)]
        lit = int(np.argmax(np.diff(brightness) > 40)) + 1
        assert abs(stamps[lit] - onset) <= 1e9 / 30 + 2e6

    # the sync figures name the plate's clock: its samples, none lost, its drift given
    assert result.sync is not None
    figures = result.sync.instruments["plate"]
    assert figures["samples"] == len(index) and figures["lost"] == 0
    assert figures["drift_ppm"] == pytest.approx(150.0, abs=15.0)
    assert figures["rate_hz"] == pytest.approx(1000 / (1 + 150e-6), abs=0.5)
    assert abs(figures["start_ms"]) < 1e3 / 30 and abs(figures["end_ms"]) < 1e3 / 30
    assert "plate" not in result.sync.cameras and result.sync.unmatched.keys() == {"front", "right"}

    # the attempt holds the cameras' captures, then the plate's
    with services.store.read() as db:
        linked = list(
            db.scalars(
                select(AttemptCapture.capture_id)
                .where(AttemptCapture.attempt_id == attempt_id)
                .order_by(AttemptCapture.position)
            )
        )
        row = db.get(Capture, plate.capture_id)
        assert row is not None
        assert json.loads(row.mode)["kind"] == "samples"
    assert linked == [*result.committed_ids] and linked[-1] == plate.capture_id


def usb_services(store: Store, instrument: ReferenceInstrument) -> Services:
    services = bootstrap(store=store)
    services.capture.usb_backend = InstrumentBackend([instrument])
    return services


def test_a_usb_instrument_is_recorded_through_pyusb_sample_for_sample(store: Store) -> None:
    instrument = ReferenceInstrument(drift_ppm=-80.0, late_every=5)
    services = usb_services(store, instrument)
    rig = services.capture.add_rig(
        "emg",
        [
            DeviceSpec("virtual:rig-1", SMALL, "front"),
            DeviceSpec(instrument.device_id, place="emg"),
        ],
    )
    assert rig.devices[1].mode.label() == "3 ch @ 2000 Hz"
    session = create_session(services.queue, "RIG-U", "emg", "ana")
    recording = services.capture.start_rig_recording("emg", session)
    wait_until(lambda: recording.status().cameras[1].status.frames >= 3000)
    live = recording.status().cameras[1]
    assert live.instrument and live.status.dropped == 0
    result = recording.stop()
    emg = result.captures[1]
    assert emg.commit is not None and emg.commit.dropped_frames == 0
    chunk = [read_chunk(p) for p in load_capture(store, emg.commit.manifest_sha256).segments]
    index = np.concatenate([c.index for c in chunk])
    values = np.concatenate([c.values for c in chunk])
    mono = np.concatenate([c.mono_ns for c in chunk])
    assert chunk[0].channels == ("EMG1 (mV)", "EMG2 (mV)", "Trig (V)")
    # what the instrument measured, sample for sample, as float32 sent it
    np.testing.assert_array_equal(values.astype(np.float32), signal(int(index[0]), len(index)))
    # stamped on the host's clock: the samples' span is the instrument's (its drift included)
    span_s = (mono[-1] - mono[0]) / 1e9
    assert span_s == pytest.approx((len(index) - 1) / 2000 * (1 - 80e-6), abs=3e-3)
    # every fifth transfer came 3 ms late, yet the samples are evenly stamped: the transfer's
    # latency is taken at its least, its jitter filtered out (unfiltered, a late transfer would
    # move its samples by 3 ms). The least delay is taken over the last second, so on a busy
    # machine a second whose every transfer was slow moves the stamps once by its least delay:
    # a fraction of a sample period (0.1 ms was seen beside a full test run), never the 3 ms
    steps = np.diff(mono) / 1e6
    assert np.abs(steps - 0.5 * (1 - 80e-6)).max() < 0.25
    assert result.sync is None  # one camera: no frame sets to measure


def test_a_pulled_usb_instrument_stops_alone_and_keeps_what_it_sent(store: Store) -> None:
    instrument = ReferenceInstrument(unplug_after_s=None)
    services = usb_services(store, instrument)
    services.capture.add_rig(
        "emg",
        [
            DeviceSpec("virtual:rig-1", SMALL, "front"),
            DeviceSpec("virtual:rig-2", SMALL, "right"),
            DeviceSpec(instrument.device_id, place="emg"),
        ],
    )
    session = create_session(services.queue, "RIG-U", "emg", "ana")
    recording = services.capture.start_rig_recording("emg", session)
    wait_until(lambda: recording.status().cameras[2].status.frames >= 1000)
    instrument.unplug_after_s = 0.0  # the cable is pulled now
    wait_until(lambda: bool(recording.status().cameras[2].status.stop_reason))
    front_then = recording.status().cameras[0].status.frames
    wait_until(lambda: recording.status().cameras[0].status.frames >= front_then + 15)
    result = recording.stop()
    emg = result.captures[2]
    assert emg.commit is not None and emg.commit.frame_count >= 1000
    assert emg.stopped is not None and "stopped sending samples" in emg.stopped["reason"]
    assert "emg" in result.note
    # the cameras went on recording after it
    assert all(c.commit and c.commit.frame_count > 0 and not c.stopped for c in result.cameras)


def test_an_instrument_that_breaks_the_protocol_is_refused_by_name(store: Store) -> None:
    services = usb_services(store, ReferenceInstrument(bad_info=True))
    with pytest.raises(DeviceRefusedError) as refused:
        services.capture.add_rig(
            "emg",
            [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec("usb:1209:0003:LBR-0001", place="emg")],
        )
    assert refused.value.code == "LABRIG_INSTRUMENT_PROTOCOL"
    assert "emg" in refused.value.message and "LBI1" in refused.value.message


def test_an_instrument_labrig_may_not_open_says_how_to_grant_access(store: Store) -> None:
    services = usb_services(store, ReferenceInstrument(denied=True))
    # without access its strings are unreadable too: it is listed by VID:PID and where it sits
    with pytest.raises(DeviceRefusedError) as refused:
        services.capture.add_rig(
            "emg",
            [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec("usb:1209:0003@1-2", place="emg")],
        )
    assert refused.value.code == "LABRIG_DEVICE_OPEN_FAILED"
    assert "udev" in refused.value.message


def test_an_instrument_without_a_protocol_cannot_join_a_rig(store: Store) -> None:
    listed_only = ReferenceInstrument(product_id=0x0001, bcd_device=0x0121, serial="FPA4-1")
    services = usb_services(store, listed_only)
    with pytest.raises(RigDeviceError) as refused:
        services.capture.add_rig(
            "emg",
            [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec(listed_only.device_id, place="amp")],
        )
    assert "neither pictures nor samples" in refused.value.message


def test_an_instrument_streaming_otherwise_than_its_rig_is_refused(store: Store) -> None:
    instrument = ReferenceInstrument()
    services = usb_services(store, instrument)
    services.capture.add_rig(
        "emg",
        [DeviceSpec("virtual:rig-1", SMALL), DeviceSpec(instrument.device_id, place="emg")],
    )
    instrument.rate_hz = 1000  # someone changed its rate on its front panel
    session = create_session(services.queue, "RIG-U", "emg", "ana")
    with pytest.raises(RigDeviceError) as refused:
        services.capture.start_rig_recording("emg", session)
    assert "1000 Hz now" in refused.value.message and "2000 Hz" in refused.value.message


def test_the_samples_the_plate_dropped_are_counted_from_its_counter(store: Store) -> None:
    from labrig.capture.instrument_recorder import InstrumentRecorder
    from labrig.capture.rig_camera import VirtualRig, _unit
    from labrig.capture.virtual_instrument import BLOCK, PLATE_CAMERA, PLATE_MODE, plate_device

    rig = VirtualRig(plate_timing=CameraTiming(drop_probability=0.1))
    recorder = InstrumentRecorder(store, VirtualForcePlate(rig), plate_device(), PLATE_MODE)
    recorder.start()
    wait_until(lambda: recorder.status().frames >= 1500)
    result = recorder.stop()
    chunks = [read_chunk(p) for p in load_capture(store, result.manifest_sha256).segments]
    index = np.concatenate([c.index for c in chunks])
    first, last = int(index[0]) // BLOCK, int(index[-1]) // BLOCK
    truly = sum(_unit(rig.seed, PLATE_CAMERA, b, 3) < 0.1 for b in range(first, last + 1))
    assert truly > 0, "with 10 % of 75 blocks, some are dropped"
    assert result.dropped_frames == truly * BLOCK
    assert len(index) + result.dropped_frames == int(index[-1]) - int(index[0]) + 1
