"""Result tables with known contents, for the format writers' tests: markers moving on known
paths (a circle per marker, phase-shifted), with gaps, a reviewer's corrections, residuals and an
instrument whose channels are known sines. What a writer puts in a file must read back as these.
"""

from __future__ import annotations

import numpy as np

from labrig.export.tables import (
    AnalogTable,
    CameraInfo,
    Channel,
    Marker,
    PointKind,
    PointTable,
    ResultTables,
    marker_label,
)

FPS = 30.0
ANALOG_HZ = 1000.0


def circle(frames: int, markers: int, dims: int, fps: float = FPS) -> np.ndarray:
    """N×M×D: marker m at angle 2π·t/2 s + m, on a 100 mm (or px) circle about (300, 200, 50)."""
    t = np.arange(frames) / fps
    out = np.zeros((frames, markers, dims))
    for m in range(markers):
        angle = 2 * np.pi * t / 2.0 + m
        out[:, m, 0] = 300 + 100 * np.cos(angle)
        out[:, m, 1] = 200 + 100 * np.sin(angle)
        if dims == 3:
            out[:, m, 2] = 50 + 10 * m + 5 * np.sin(angle)
    return out


def point_table(
    kind: PointKind = "3d",
    frames: int = 90,
    markers: int = 3,
    corrected: bool = True,
    camera: str | None = None,
    fps: float = FPS,
) -> PointTable:
    """A table whose marker 0 is hidden in frames 10–14, and (when ``corrected``) whose effective
    positions fill that gap (filled) and move marker 1 by +5 in x at frame 20 (the last frame of
    a shorter table)."""
    dims = 3 if kind == "3d" else 2
    truth = circle(frames, markers, dims, fps)
    automatic = truth.copy()
    automatic[10:15, 0, :] = np.nan
    effective = filled = None
    if corrected:
        effective = truth.copy()
        effective[min(20, frames - 1), 1, 0] += 5.0
        filled = np.zeros((frames, markers), dtype=bool)
        filled[10:15, 0] = True
    residual = None
    if kind == "3d":
        residual = np.full((frames, markers), 0.25)
        residual[10:15, 0] = np.nan
    return PointTable(
        kind=kind,
        camera=None if kind == "3d" else (camera or "virtual:0"),
        units="px" if kind == "image" else "mm",
        rate_hz=fps,
        frames=np.arange(frames, dtype=np.int64),
        times_s=np.arange(frames) / fps,
        markers=tuple(
            Marker(marker_label(m), m, (255, 40 * m % 256, 0), f"track {m}") for m in range(markers)
        ),
        automatic=automatic,
        effective=effective,
        filled=filled,
        residual_px=residual,
    )


def analog_table(seconds: float = 3.0, rate_hz: float = ANALOG_HZ) -> AnalogTable:
    """Fx, Fy, Fz (N): sines of 1, 2 and 3 Hz, amplitude 10, 20, 30, starting 0.1 s after zero."""
    times = 0.1 + np.arange(int(seconds * rate_hz)) / rate_hz
    values = np.column_stack([(k + 1) * 10 * np.sin(2 * np.pi * (k + 1) * times) for k in range(3)])
    return AnalogTable(
        name="plate",
        device_id="virtual-instrument:0",
        rate_hz=rate_hz,
        times_s=times,
        channels=(Channel("Fx", "N"), Channel("Fy", "N"), Channel("Fz", "N")),
        values=values,
    )


def result_tables(
    kind: PointKind = "3d", frames: int = 90, markers: int = 3, analog: bool = True
) -> ResultTables:
    """A result of two cameras (a rig's 3-D points, or one camera's 2-D), each camera's view in
    picture px, and (``analog``) one instrument."""
    cameras = ("cam-a", "cam-b") if kind == "3d" else ("cam-a",)
    # a view's ``camera`` is its device id, as CameraInfo's ``device_id`` (its ``name`` the place)
    views = tuple(
        point_table("image", frames, markers, corrected=kind != "3d", camera=f"virtual:{n}")
        for n in range(len(cameras))
    )
    return ResultTables(
        result_id="res0123456789abcdef",
        attempt_id="att0123456789abcdef",
        attempt_number=2,
        session={
            "session_id": "ses0123456789",
            "subject_code": "S-007",
            "protocol": "reach",
            "operator": "tech",
            "started_at": "2026-12-05T08:00:00+00:00",
        },
        created_at="2026-12-05T08:10:00+00:00",
        points=point_table(kind, frames, markers),
        views=views,
        cameras=tuple(
            CameraInfo(f"virtual:{n}", f"cap{n}", c, 640, 480, FPS, frames)
            for n, c in enumerate(cameras)
        ),
        analog=(analog_table(frames / FPS),) if analog else (),
        provenance={
            "result_id": "res0123456789abcdef",
            "automatic_digest": "ab" * 32,
            "calibration": "cal0123",
            "release": "rel0123",
            "revisions": "1,2",
            "sign_off": "approved by rev at 2026-12-05T09:00:00+00:00",
            "labrig_version": "0.1.0",
        },
    )
