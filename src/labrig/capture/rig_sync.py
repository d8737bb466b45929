"""How well a rig's cameras were in sync: frames matched across cameras by their timestamps.

Every camera's frames carry a time on the host's one monotonic clock. The instants of the rig are
those of its slowest cameras (a 60 fps camera beside 30 fps ones is matched at 30 fps): their
frames, taken together and grouped where they fall within half a frame interval of each other.
At each instant each camera's nearest frame within half of its own frame interval is its frame of
that instant; a camera with none there is *unmatched* at that instant (it dropped the frame, or had
stopped). A *frame set* is an instant every camera has a frame for; its *spread* is the time
between its earliest and its latest frame. The instants run from the first frame of any camera to
the last of any: a camera that started late or stopped early is unmatched where it has none.

Where cameras have their own clocks (a frame counter and time of their own, as the virtual rig's
cameras do), the *drift* of each against the first camera with one is the difference of their
clock rates against the host's, in parts per million.

An instrument's samples are stamped on the same host clock; they are not matched into frame sets
(a 1 kHz force plate has a sample within half a millisecond of every frame) but reported beside
them: samples, the rate measured on the host's clock, samples its counter says it lost, its
drift against the reference camera, and how far its first and last samples are from the first
and last instants (a negative start or a positive end: it covered the cameras' recording).

:func:`judge_sync` applies the quality gate: blocked when frames cannot be matched (a camera has
none matched, or too few instants form frame sets), degraded when the spread at p99 is above a
quarter of a frame interval or a camera has unmatched frames above a fraction of the instants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labrig.capture.media import load_capture
from labrig.capture.samples import is_sample_mode, read_chunk
from labrig.capture.sink import read_sidecar
from labrig.domain.recordings import SYNC_DEFAULTS
from labrig.store import Store


@dataclass(frozen=True)
class Stream:
    """One camera's recorded frames: its name (its place in the rig), its frame rate, each frame's
    host time and, where the device has a clock of its own, each frame's device time."""

    name: str
    fps: float
    mono_ns: Sequence[int]
    device_ns: Sequence[int] | None = None


@dataclass(frozen=True)
class SyncFigures:
    cameras: list[str]
    frame_interval_ms: float  # of the instants (the slowest cameras')
    instants: int
    frame_sets: int
    spread_ms: dict[str, float] | None  # p50, p99, max over the frame sets; None with none
    unmatched: dict[str, int]
    drift_ppm: dict[str, float | None] = field(default_factory=dict)
    # each instrument's figures by place: samples, rate_hz, lost, drift_ppm, start_ms, end_ms
    instruments: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "instruments": {k: dict(v) for k, v in self.instruments.items()},
            "cameras": list(self.cameras),
            "frame_interval_ms": self.frame_interval_ms,
            "instants": self.instants,
            "frame_sets": self.frame_sets,
            "spread_ms": dict(self.spread_ms) if self.spread_ms else None,
            "unmatched": dict(self.unmatched),
            "drift_ppm": dict(self.drift_ppm),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SyncFigures:
        return cls(
            list(data["cameras"]),
            float(data["frame_interval_ms"]),
            int(data["instants"]),
            int(data["frame_sets"]),
            dict(data["spread_ms"]) if data.get("spread_ms") else None,
            {k: int(v) for k, v in data["unmatched"].items()},
            dict(data.get("drift_ppm", {})),
            {k: dict(v) for k, v in data.get("instruments", {}).items()},
        )

    def summary(self) -> str:
        """One line a technician reads: spread, frame sets, unmatched frames."""
        if self.spread_ms is None:
            return f"no frame sets: the {len(self.cameras)} cameras' frames could not be matched"
        s = self.spread_ms
        missing = {k: v for k, v in self.unmatched.items() if v}
        unmatched = (
            ", unmatched " + ", ".join(f"{k} {v}" for k, v in missing.items())
            if missing
            else ", every frame matched"
        )
        instruments = "".join(
            f"; {name} {f['samples']} samples"
            + (f" at {f['rate_hz']:.1f} Hz" if f.get("rate_hz") else "")
            + f", {f['lost']} lost"
            for name, f in self.instruments.items()
        )
        return (
            f"spread p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.2f} ms over "
            f"{self.frame_sets} frame sets{unmatched}{instruments}"
        )


def capture_stream(
    store: Store, manifest_sha256: str, name: str | None = None, offset_ms: float | None = None
) -> Stream:
    """The frame times of a committed capture (its device's id names it, unless ``name``). A
    capture with no timestamps (an imported video) has its frames at ``i / fps`` from its first,
    moved by ``offset_ms`` (its post-hoc sync offset), on a clock of its own."""
    media = load_capture(store, manifest_sha256)
    rows = [row for path in media.timestamps if path is not None for row in read_sidecar(path)]
    device = [row[4] for row in rows] if rows and all(len(r) == 5 for r in rows) else None
    mono = [row[1] for row in rows]
    if not rows:
        mono = [round(i * 1e9 / media.fps) for i in range(media.frame_count)]
    if offset_ms:
        mono = [t + round(offset_ms * 1e6) for t in mono]
    return Stream(name or media.device_id, media.fps, mono, device)


@dataclass(frozen=True)
class InstrumentStream:
    """One instrument's recorded samples: its name, rate, and each sample's number on its counter,
    host time and device time."""

    name: str
    rate_hz: float
    index: Sequence[int]
    mono_ns: Sequence[int]
    device_ns: Sequence[int]


def instrument_stream(
    store: Store, manifest_sha256: str, name: str | None = None
) -> InstrumentStream:
    """The samples' numbers and times of a committed instrument capture."""
    media = load_capture(store, manifest_sha256)
    chunks = [read_chunk(path) for path in media.segments]
    joined = [
        np.concatenate([getattr(c, key) for c in chunks]) if chunks else np.zeros(0, np.int64)
        for key in ("index", "mono_ns", "device_ns")
    ]
    return InstrumentStream(
        name or media.device_id,
        float(media.mode.get("rate_hz", 0.0)),
        joined[0].tolist(),
        joined[1].tolist(),
        joined[2].tolist(),
    )


def is_instrument_capture(store: Store, manifest_sha256: str) -> bool:
    return is_sample_mode(load_capture(store, manifest_sha256).mode)


def _instrument_figures(
    streams: Sequence[Stream], instruments: Sequence[InstrumentStream], instants: np.ndarray
) -> dict[str, dict[str, Any]]:
    reference = next((r for r in _rates(streams).values() if r is not None), None)
    out: dict[str, dict[str, Any]] = {}
    for inst in instruments:
        index = np.asarray(inst.index, dtype=np.int64)
        mono = np.asarray(inst.mono_ns, dtype=np.float64)
        device = np.asarray(inst.device_ns, dtype=np.float64)
        figures: dict[str, Any] = {"samples": int(index.size), "rate_hz": None, "lost": 0}
        figures.update({"drift_ppm": None, "start_ms": None, "end_ms": None})
        if index.size >= 2:
            span = (mono[-1] - mono[0]) / 1e9
            figures["rate_hz"] = round((index.size - 1) / span, 3) if span > 0 else None
            figures["lost"] = int(index[-1] - index[0] + 1 - index.size)
            own = _rate(device, mono)
            if own is not None and reference is not None:
                figures["drift_ppm"] = round(own - reference, 2)
            if instants.size:
                figures["start_ms"] = round((mono[0] - instants[0]) / 1e6, 3)
                figures["end_ms"] = round((mono[-1] - instants[-1]) / 1e6, 3)
        out[inst.name] = figures
    return out


def _instants(stamps: list[np.ndarray], period: float) -> np.ndarray:
    """The rig's instants: the slowest cameras' stamps grouped within half a period."""
    pooled = np.sort(np.concatenate(stamps)) if stamps else np.zeros(0)
    out: list[float] = []
    group: list[float] = []
    for s in pooled:
        if group and s - group[0] >= period / 2:
            out.append(float(np.median(group)))
            group = []
        group.append(float(s))
    if group:
        out.append(float(np.median(group)))
    return np.asarray(out)


def measure_sync(
    streams: Sequence[Stream], instruments: Sequence[InstrumentStream] = ()
) -> SyncFigures:
    """Match the frames of ``streams`` (two or more cameras) into frame sets, with the
    ``instruments``' figures beside them (see the module)."""
    names = [s.name for s in streams]
    periods = [1e9 / s.fps for s in streams]
    period = max(periods)
    stamps = [np.asarray(s.mono_ns, dtype=np.float64) for s in streams]
    empty = [s.name for s, st in zip(streams, stamps, strict=True) if st.size == 0]
    if empty or len(streams) < 2:
        return SyncFigures(names, period / 1e6, 0, 0, None, {n: 0 for n in names})
    slowest = [st for st, p in zip(stamps, periods, strict=True) if p >= period * 0.99]
    instants = _instants(slowest, period)
    # from the first frame of any camera to the last: a camera that started late or stopped early
    # is unmatched where it has no frames
    lo = min(float(st[0]) for st in stamps) - period / 2
    hi = max(float(st[-1]) for st in stamps) + period / 2
    instants = instants[(instants >= lo) & (instants <= hi)]
    matched = np.ones(len(instants), dtype=bool)
    chosen = np.zeros((len(streams), len(instants)))
    unmatched: dict[str, int] = {}
    for k, (st, own) in enumerate(zip(stamps, periods, strict=True)):
        at = np.clip(np.searchsorted(st, instants), 1, len(st) - 1) if len(st) > 1 else None
        if at is None:
            nearest = np.full(len(instants), st[0])
        else:
            before, after = st[at - 1], st[at]
            nearest = np.where(instants - before <= after - instants, before, after)
        hit = np.abs(nearest - instants) <= min(own, period) / 2
        chosen[k] = nearest
        matched &= hit
        unmatched[names[k]] = int(np.count_nonzero(~hit))
    sets = chosen[:, matched]
    spread = None
    if sets.shape[1]:
        widths = (sets.max(axis=0) - sets.min(axis=0)) / 1e6
        spread = {
            "p50": float(np.percentile(widths, 50)),
            "p99": float(np.percentile(widths, 99)),
            "max": float(widths.max()),
        }
    return SyncFigures(
        names,
        period / 1e6,
        len(instants),
        int(sets.shape[1]),
        spread,
        unmatched,
        _drift(streams),
        _instrument_figures(streams, instruments, instants),
    )


def _rate(device: np.ndarray, host: np.ndarray) -> float | None:
    """A clock's rate against the host's in ppm, from its times and the host's of the same
    instants (None: fewer than 10 of its own)."""
    ok = device >= 0
    if device.size != host.size or np.count_nonzero(ok) < 10:
        return None
    d, h = device[ok] - device[ok][0], host[ok] - host[ok][0]
    if d[-1] <= 0:
        return None
    slope = float(np.polyfit(d, h, 1)[0])  # host ns per device ns
    return (slope - 1.0) * 1e6


def _rates(streams: Sequence[Stream]) -> dict[str, float | None]:
    return {
        s.name: _rate(
            np.asarray(s.device_ns if s.device_ns is not None else [], dtype=np.float64),
            np.asarray(s.mono_ns, dtype=np.float64),
        )
        for s in streams
    }


def _drift(streams: Sequence[Stream]) -> dict[str, float | None]:
    """Each camera's clock rate against the first camera with a clock, in ppm (None: no clock)."""
    rates = _rates(streams)
    reference = next((r for r in rates.values() if r is not None), None)
    return {
        k: (None if r is None or reference is None else r - reference) for k, r in rates.items()
    }


@dataclass(frozen=True)
class SyncVerdict:
    blocked: str | None  # why the cameras cannot be used together, or None
    degraded: list[str]  # why the sync is worse than it should be


def judge_sync(figures: SyncFigures, limits: Mapping[str, Any] = SYNC_DEFAULTS) -> SyncVerdict:
    """The sync quality gate over ``figures`` with ``limits`` (:data:`SYNC_DEFAULTS`'s keys)."""
    instants = max(figures.instants, 1)
    if figures.spread_ms is None:
        return SyncVerdict(
            "the cameras' frames could not be matched into frame sets (a camera recorded no "
            "frames, or none at the same time as the others); record the rig again",
            [],
        )
    none = [k for k, v in figures.unmatched.items() if v >= figures.instants]
    share = figures.frame_sets / instants
    if none or share < limits["min_matched_fraction"]:
        who = f" ({', '.join(none)} matched no frame)" if none else ""
        return SyncVerdict(
            f"only {figures.frame_sets} of {figures.instants} instants have a frame from every "
            f"camera{who}, under {limits['min_matched_fraction']:.0%}: the cameras were not "
            "recording together. Check each camera's connection and record the rig again",
            [],
        )
    reasons = []
    allowed = limits["max_spread_fraction"] * figures.frame_interval_ms
    if figures.spread_ms["p99"] > allowed:
        reasons.append(
            f"the cameras' frames are up to {figures.spread_ms['p99']:.1f} ms apart at p99, over "
            f"{limits['max_spread_fraction']:g} of a frame interval ({allowed:.1f} ms): 3-D "
            "positions of fast movements are less exact"
        )
    for name, count in figures.unmatched.items():
        if count > limits["max_unmatched_fraction"] * instants:
            reasons.append(
                f"{name} has no frame at {count} of {figures.instants} instants (dropped or "
                "stopped): those instants are seen by fewer cameras"
            )
    return SyncVerdict(None, reasons)
