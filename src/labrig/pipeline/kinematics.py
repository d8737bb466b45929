"""Kinematics of one track: smoothed position, velocity, acceleration and summary metrics.

Timestamps need not be uniform (dropped frames, gaps where a marker was hidden): the track is first
resampled by linear interpolation onto a uniform grid whose step is the median interval of the
input, from its first to its last timestamp; Savitzky–Golay filtering
(``scipy.signal.savgol_filter``, ``deriv`` 0/1/2 with ``delta`` = that step) then gives position,
velocity and acceleration on the grid, and every metric is measured on it. Gaps are bridged by
straight lines at constant speed, so a long absence belongs in separate tracks (the tracker's
``max_gap``).

Where the peak speed is searched: only where the velocity is a centred fit, from half a window after
the first sample to half a window before the last. The first and last half-window of the series
come from the edge polynomial fit (``mode="interp"``): one polynomial evaluated towards the end of
its own window, whose derivative there has several times the noise of a centred fit and swings
with the first frames' timing. Reported as the peak, that edge estimate is an artefact (a steady
235.6 mm/s circle read 243.8 mm/s at t = 0.10 s); the series keep it, the peak and its time never
use it. A peak truly inside the first or last half-window is therefore read at the edge of the
searched span (a movement starting at full speed is read half a window in).

A track with fewer grid samples than the window gets a shrunken window; one too short for any
fit of the chosen order gets position metrics only (from the raw samples), the speed metrics
None, and ``reason`` saying why. It never raises for being short. Positions may be 2-D (a plane, or
pixels) or 3-D (a rig's reconstruction): every length is measured in as many dimensions as given.
Pure computation: no Qt, no database, deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Units = Literal["mm", "px"]
TimeUnits = Literal["s", "frames"]
DEFAULT_WINDOW = {"s": 0.25, "frames": 7.0}  # about a quarter second at 30 fps either way


@dataclass(frozen=True)
class TrackKinematics:
    """Kinematics of one track. Lengths in ``units``, times in ``time_units``, speeds in units per
    time unit, accelerations in units per time unit²; series are on the uniform grid ``t`` (None
    when too short to fit)."""

    units: str
    time_units: str
    samples: int  # input samples
    polyorder: int  # order of the Savitzky–Golay polynomial
    window_samples: int | None  # window used (grid samples); None when too short to fit
    t: Array  # uniform grid (time_units), from the first input timestamp
    xy: Array  # N×D (2 or 3) smoothed positions on the grid (raw input when too short to fit)
    velocity: Array | None  # N×D
    acceleration: Array | None  # N×D
    path_length: float  # summed distance between consecutive positions
    displacement: float  # straight-line distance, start to end
    range_x: float  # max − min of x
    range_y: float  # max − min of y
    extent: float  # largest distance between any two positions (independent of the axes)
    peak_speed: float | None
    time_to_peak_speed: float | None  # from the track's first timestamp
    # why the result is degraded (shrunken window, too short for speeds); None when not
    reason: str | None
    range_z: float | None = None  # max − min of z, for 3-D positions

    @property
    def dims(self) -> int:
        return int(self.xy.shape[1])

    @property
    def speed(self) -> Array | None:
        return None if self.velocity is None else np.linalg.norm(self.velocity, axis=1)

    def to_json(self, series: bool = True) -> dict[str, Any]:
        """Plain JSON types (no NaN); ``series=False`` leaves out the per-sample arrays."""
        body: dict[str, Any] = {
            k: getattr(self, k)
            for k in (
                "units",
                "time_units",
                "samples",
                "polyorder",
                "window_samples",
                "path_length",
                "displacement",
                "range_x",
                "range_y",
                "extent",
                "peak_speed",
                "time_to_peak_speed",
                "reason",
            )
        }
        if self.dims == 3:
            body["range_z"] = self.range_z
        if series:
            # 3-D positions are named so: no reader takes them for a plane's x, y
            for name, key in (("t", "t"), ("xy", "xyz" if self.dims == 3 else "xy")):
                body[key] = np.round(getattr(self, name), 6).tolist()
            for name in ("velocity", "acceleration"):
                value = getattr(self, name)
                body[name] = None if value is None else np.round(value, 6).tolist()
        return body


def to_plane_mm(pixels: npt.ArrayLike, homography: npt.ArrayLike) -> Array:
    """Map N×2 (undistorted) image positions (px) through a 3×3 homography to plane positions (mm),
    with the perspective divide."""
    xy = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)
    h = np.asarray(homography, dtype=np.float64).reshape(3, 3)
    out = np.column_stack([xy, np.ones(len(xy))]) @ h.T
    return out[:, :2] / out[:, 2:3]


def kinematics(
    track_xy: npt.ArrayLike,
    t: npt.ArrayLike,
    units: Units = "mm",
    time_units: TimeUnits = "s",
    window_s: float | None = None,
    polyorder: Literal[2, 3] = 3,
) -> TrackKinematics:
    """Kinematics of positions ``track_xy`` (N×2 or N×3, ``units``) at strictly increasing times
    ``t`` (N, ``time_units``). ``window_s``: Savitzky–Golay window length in ``time_units``
    (default 0.25 s, or 7 frames)."""
    xy = np.asarray(track_xy, dtype=np.float64)
    xy = xy.reshape(-1, xy.shape[-1] if xy.ndim == 2 and xy.shape[-1] == 3 else 2)
    times = np.asarray(t, dtype=np.float64).ravel()
    if len(times) != len(xy):
        raise ValueError(
            f"{len(xy)} positions but {len(times)} timestamps: one timestamp per position"
        )
    if not (np.all(np.isfinite(xy)) and np.all(np.isfinite(times))):
        raise ValueError(
            "positions and timestamps must be finite numbers: drop the samples with NaN or inf"
        )
    if len(times) > 1 and not np.all(np.diff(times) > 0):
        raise ValueError("timestamps must increase strictly: sort the samples and drop duplicates")
    window = DEFAULT_WINDOW[time_units] if window_s is None else window_s
    # odd, and leaves the fit something to smooth
    smallest = polyorder + 2 if polyorder % 2 else polyorder + 3
    grid, resampled = _uniform(times, xy)
    if len(grid) < smallest:
        short = (
            f"{len(times)} samples: speeds need at least {smallest} for a degree-{polyorder} fit"
        )
        return _measure(
            units,
            time_units,
            samples=len(times),
            polyorder=polyorder,
            window=None,
            t=times,
            xy=xy,
            velocity=None,
            acceleration=None,
            reason=short,
        )
    dt = float(grid[1] - grid[0])
    wanted = max(smallest, round(window / dt) | 1)
    used = min(wanted, len(grid) if len(grid) % 2 else len(grid) - 1)
    why = (
        None
        if used == wanted
        else f"window shrunk from {wanted} to {used} samples: the track is shorter"
    )
    from scipy.signal import savgol_filter  # scipy loads in 0.5 s: not at every `labrig` start

    fit = [savgol_filter(resampled, used, polyorder, deriv=d, delta=dt, axis=0) for d in (0, 1, 2)]
    return _measure(
        units,
        time_units,
        samples=len(times),
        polyorder=polyorder,
        window=used,
        t=grid,
        xy=fit[0],
        velocity=fit[1],
        acceleration=fit[2],
        reason=why,
    )


def _uniform(times: Array, xy: Array) -> tuple[Array, Array]:
    """The samples linearly interpolated onto a grid stepped by the median input interval."""
    if len(times) < 2:
        return times, xy
    step = float(np.median(np.diff(times)))
    grid = times[0] + step * np.arange(round((times[-1] - times[0]) / step) + 1)
    return grid, np.column_stack([np.interp(grid, times, xy[:, k]) for k in range(xy.shape[1])])


def _measure(
    units: str,
    time_units: str,
    *,
    samples: int,
    polyorder: int,
    window: int | None,
    t: Array,
    xy: Array,
    velocity: Array | None,
    acceleration: Array | None,
    reason: str | None,
) -> TrackKinematics:
    steps = np.diff(xy, axis=0)
    span = np.ptp(xy, axis=0) if len(xy) else np.zeros(xy.shape[1])
    peak = time_to_peak = None
    if velocity is not None and window is not None:
        # centred fits only: the edge half-windows are extrapolations (module docstring)
        half = window // 2
        speed = np.linalg.norm(velocity, axis=1)
        at = half + int(np.argmax(speed[half : len(speed) - half]))
        peak, time_to_peak = float(speed[at]), float(t[at] - t[0])
    return TrackKinematics(
        units=units,
        time_units=time_units,
        samples=samples,
        polyorder=polyorder,
        window_samples=window,
        t=t,
        xy=xy,
        velocity=velocity,
        acceleration=acceleration,
        path_length=float(np.linalg.norm(steps, axis=1).sum()),
        displacement=float(np.linalg.norm(xy[-1] - xy[0])) if len(xy) else 0.0,
        range_x=float(span[0]),
        range_y=float(span[1]),
        extent=_extent(xy),
        peak_speed=peak,
        time_to_peak_speed=time_to_peak,
        reason=reason,
        range_z=float(span[2]) if len(span) == 3 else None,
    )


def _extent(xy: Array) -> float:
    """Largest distance between two positions, searched over the convex hull (a long track has
    few hull points)."""
    if len(xy) < 2:
        return 0.0
    if xy.shape[1] == 3:
        return _extent_3d(xy)
    from scipy.spatial.distance import pdist

    hull = cv2.convexHull(xy.astype(np.float32), returnPoints=False).ravel()
    return float(pdist(xy[np.unique(hull)]).max()) if len(hull) > 1 else 0.0


def _extent_3d(xyz: Array) -> float:
    from scipy.spatial import ConvexHull, QhullError
    from scipy.spatial.distance import pdist

    try:  # "QJ": a flat or straight path still has a hull (joggled)
        vertices = ConvexHull(xyz, qhull_options="QJ").vertices
    except QhullError:
        vertices = np.arange(len(xyz))
    return float(pdist(xyz[vertices]).max()) if len(vertices) > 1 else 0.0


def tracks_kinematics(
    tracks: Iterable[Mapping[str, Any]],
    times_s: Array | None,
    fps: float,
    homography: npt.ArrayLike | None,
    window_s: float | None,
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The kinematics stage's work on a video's tracks (each ``frames``, ``xy`` in px, and its
    ``track_id`` and ``colour_rgb``): the units and one document per track. ``times_s``: the
    frames' recorded times (None when not known: lengths per frame); ``homography``: image px to
    plane mm (None: lengths in px). The stage and a reviewer's corrected tracks share it, so a
    correction's effective result is computed exactly as the automatic one was."""
    length: Units = "mm" if homography is not None else "px"
    time: TimeUnits = "s" if times_s is not None else "frames"
    results = []
    for item in tracks:
        frames = np.asarray(item["frames"], dtype=np.int64)
        xy = np.asarray(item["xy"], dtype=np.float64).reshape(-1, 2)
        if homography is not None:
            xy = to_plane_mm(xy, homography)
        if times_s is None:
            t = frames.astype(np.float64)
        else:
            t = times_s[frames] if len(times_s) > int(frames.max()) else frames / fps
        k = kinematics(xy, t, length, time, window_s=window_s if times_s is not None else None)
        results.append(
            {"track_id": item["track_id"], "colour_rgb": item.get("colour_rgb"), **k.to_json()}
        )
    return {"length": length, "time": time}, results
