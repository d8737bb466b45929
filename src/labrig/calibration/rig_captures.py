"""The views of a rig recording, for a rig calibration: each camera's frames paired by time.

A rig recording of the board (an attempt made by ``labrig record --rig``, or on the Capture screen)
has one committed capture per camera. Every ``every``-th frame of the first camera sets an instant;
each other camera gives the frame nearest in host time, within half a frame period, and an instant
some camera has no frame for is left out. Frames are decoded lazily, one instant at a time, so a
long recording is never held in memory whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from labrig.calibration.camera import View
from labrig.calibration.rig import RigCameraViews
from labrig.calibration.rig_stored import RigCalibrationMismatchError, rig_binding
from labrig.capture.media import CaptureMedia, load_capture
from labrig.capture.rig_sync import capture_stream
from labrig.capture.rigs import Rig, get_rig
from labrig.errors import LabrigError, UsageError
from labrig.store import Store
from labrig.store.models import Capture, RigRecording


class NotARigRecordingError(LabrigError):
    code = "LABRIG_NOT_A_RIG_RECORDING"


@dataclass(frozen=True)
class RigRecordingViews:
    rig_name: str
    cameras: list[RigCameraViews]
    # the devices as recorded: place, device id, mode label (the rig may have changed since)
    devices: list[dict[str, str]]


class _Frames(Sequence[View]):
    """Chosen frames of one capture (by frame index, ascending), decoded when iterated."""

    def __init__(self, media: CaptureMedia, name: str, indices: Sequence[int]) -> None:
        self.media, self.name, self.indices = media, name, list(indices)

    def __len__(self) -> int:
        return len(self.indices)

    def __iter__(self) -> Iterator[View]:
        wanted = iter(self.indices)
        target = next(wanted, None)
        for index, frame in enumerate(self.media.frames()):
            if target is None:
                return
            if index == target:
                yield View(f"{self.name}#{index}", frame)
                target = next(wanted, None)

    @overload
    def __getitem__(self, i: int) -> View: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[View]: ...
    def __getitem__(self, i: int | slice) -> View | Sequence[View]:
        if isinstance(i, slice):
            return _Frames(self.media, self.name, self.indices[i])
        chosen = self.indices[i]
        return next(iter(_Frames(self.media, self.name, [chosen])))


def _rig_recording(store: Store, attempt_id: str) -> RigRecording:
    with store.read() as session:
        row = session.scalars(
            select(RigRecording).where(RigRecording.attempt_id == attempt_id)
        ).first()
    if row is None:
        raise NotARigRecordingError(
            f"attempt {attempt_id} is not a rig recording; record the board with the rig "
            "('labrig record --rig NAME --seconds 60', or Capture ▸ A rig) and give that attempt"
        )
    return row


def pair_instants(
    stamps: Sequence[Sequence[int]], fps: Sequence[float], every: int = 1
) -> npt.NDArray[np.int64]:
    """K×M frame indices, one row per camera, at M instants: every ``every``-th frame of the first
    camera, and each other camera's nearest frame within half its period, or -1 where it has none
    (a dropped frame)."""
    first = np.asarray(stamps[0], dtype=np.int64)
    chosen = np.arange(0, len(first), every)
    out = np.full((len(stamps), len(chosen)), -1, dtype=np.int64)
    out[0] = chosen
    for k, (st, rate) in enumerate(zip(stamps[1:], fps[1:], strict=True), start=1):
        times = np.asarray(st, dtype=np.int64)
        if not len(times) or not len(chosen):
            continue
        at = np.clip(np.searchsorted(times, first[chosen]), 1, max(len(times) - 1, 1))
        before = times[at - 1]
        after = times[np.minimum(at, len(times) - 1)]
        pick = np.where(first[chosen] - before <= after - first[chosen], at - 1, at)
        pick = np.minimum(pick, len(times) - 1)
        near = np.abs(times[pick] - first[chosen]) <= 0.5e9 / rate
        out[k] = np.where(near, pick, -1)
    return out


def pair_frames(
    stamps: Sequence[Sequence[int]], fps: Sequence[float], every: int
) -> list[list[int]]:
    """Frame indices per camera at each instant (:func:`pair_instants`); instants without a frame
    from every camera are left out."""
    paired = pair_instants(stamps, fps, every)
    kept = paired[:, (paired >= 0).all(axis=0)]
    return [[int(i) for i in row] for row in kept]


def recorded_cameras(row: RigRecording) -> list[dict[str, Any]]:
    """The cameras of a rig recording as it stored them (its instruments left out)."""
    return [d for d in json.loads(row.devices) if d.get("kind", "camera") == "camera"]


def as_bound(cameras: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Recorded cameras as a rig calibration is bound to them: place, device id, mode label."""
    return [{"place": d["place"], "device_id": d["device_id"], "mode": d["mode"]} for d in cameras]


def recording_views(store: Store, attempt_id: str, every: int = 10) -> RigRecordingViews:
    """The cameras of the rig recording that became ``attempt_id``, their frames paired by time,
    named by their places."""
    if every < 1:
        raise UsageError("--every must be at least 1")
    row = _rig_recording(store, attempt_id)
    devices = recorded_cameras(row)
    medias, names, streams = [], [], []
    for d in devices:
        with store.read() as session:
            capture = session.get(Capture, d["capture_id"])
        if capture is None or not capture.manifest_sha256:
            raise NotARigRecordingError(
                f"camera {d['place']}'s capture of attempt {attempt_id} was never committed; "
                "'labrig recover' salvages it, or record the board again"
            )
        medias.append(load_capture(store, capture.manifest_sha256))
        streams.append(capture_stream(store, capture.manifest_sha256, d["place"]))
        names.append(d["place"])
    pairs = pair_frames([s.mono_ns for s in streams], [s.fps for s in streams], every)
    cameras = [
        RigCameraViews(name, _Frames(media, name, indices))
        for name, media, indices in zip(names, medias, pairs, strict=True)
    ]
    return RigRecordingViews(row.rig_name, cameras, as_bound(devices))


def _first_instant(recorded: RigRecordingViews, attempt_id: str) -> dict[str, View]:
    """One frame per camera of a floor board recording: the first instant every camera has a
    frame for."""
    out = {}
    for cam in recorded.cameras:
        if len(cam.views):
            out[cam.name] = cam.views[0]
    if not out:
        raise NotARigRecordingError(
            f"attempt {attempt_id} has no instant with a frame from every camera; record the "
            "floor board again"
        )
    return out


def recorded_rig(
    store: Store,
    attempt_id: str,
    floor_attempt: str | None = None,
    every: int = 10,
    rig_name: str | None = None,
) -> tuple[list[RigCameraViews], Rig]:
    """The cameras of the board recording ``attempt_id`` (each with its frame of the
    ``floor_attempt`` recording, when given), and the rig to store their calibration for:
    ``rig_name``, else the recording's. Refused when that rig's cameras, devices or modes are not
    those the recording was made with, or when the floor was recorded with other cameras."""
    recorded = recording_views(store, attempt_id, every)
    rig = get_rig(store, rig_name or recorded.rig_name)
    if rig_binding(rig) != recorded.devices:
        raise RigCalibrationMismatchError(
            f"rig {rig.name}'s cameras are not those attempt {attempt_id} was recorded with (a "
            "device or a mode changed since): record the board again with the rig as it is now"
        )
    cameras = recorded.cameras
    if floor_attempt:
        floor = recording_views(store, floor_attempt, every=1)
        if floor.devices != recorded.devices:
            raise RigCalibrationMismatchError(
                f"the floor recording {floor_attempt} was made with other cameras (rig "
                f"{floor.rig_name}) than the board recording {attempt_id} (rig "
                f"{recorded.rig_name}): record the floor board with the same rig"
            )
        floors = _first_instant(floor, floor_attempt)
        cameras = [replace(c, floor=floors.get(c.name)) for c in cameras]
    return cameras, rig
