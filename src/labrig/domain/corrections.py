"""Corrections of tracked data: the operations a reviewer applies to an automatic result's tracks,
and the corrected tracks they give. Pure: no database, no Qt, deterministic.

A track is its frames (stored frame indices, ascending) and a position per frame. The operations,
applied in order to the automatic tracks, give the effective tracks; the automatic ones are never
changed. Each operation is plain JSON (:meth:`Operation.to_json`) so a revision stores it:

* ``move``: track T at frame F is at (x, y) (a frame it had no position at gains one);
* ``occlude``: track T has no position from frame A to B (the marker was hidden);
* ``fill``: track T's missing frames from A to B are interpolated, ``linear`` or by a cubic
  ``spline`` through the valid frames around the gap, refused when a gap is longer than
  ``max_gap`` frames or has fewer than ``min_valid`` valid frames on either side (a spline that
  would invent a movement is not a fill); filled frames are remembered as such;
* ``swap``: tracks T1 and T2 exchange their positions from frame F on (an identity switch);
* ``trim``: only frames A to B are analysed, in every track.

Syntax for the command line (:func:`parse_operation`): ``--move T@F=X,Y``, ``--occlude T@A-B``,
``--fill T@A-B:linear|spline``, ``--swap T1,T2@F``, ``--trim A-B``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from labrig.domain.correction_syntax import (
    FILL_METHODS,
    KINDS,
    MAX_GAP,
    MIN_VALID,
    CorrectionRefusedError,
    CorrectionSyntaxError,
    Kind,
    Operation,
    parse_operation,
)

__all__ = [
    "FILL_METHODS",
    "KINDS",
    "MAX_GAP",
    "MIN_VALID",
    "CorrectionRefusedError",
    "CorrectionSyntaxError",
    "Kind",
    "Operation",
    "Suspicious",
    "Track",
    "apply",
    "parse_operation",
    "rig_suspicious_frames",
    "suspicious_frames",
    "trail_runs",
]

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Track:
    """One track's frames and positions (N×D), and which of its frames were filled."""

    frames: npt.NDArray[np.int64]
    xy: Array
    filled: frozenset[int] = field(default_factory=frozenset)

    def at(self, frame: int) -> Array | None:
        i = int(np.searchsorted(self.frames, frame))
        return self.xy[i] if i < len(self.frames) and self.frames[i] == frame else None

    def keep(self, mask: npt.NDArray[np.bool_]) -> Track:
        kept = self.frames[mask]
        return Track(kept, self.xy[mask], self.filled & frozenset(int(f) for f in kept))


Tracks = dict[str, Track]  # track id (as text) → track


def apply(tracks: Mapping[str, Track], operations: Sequence[Operation]) -> Tracks:
    """The tracks after ``operations``, in order; refused (:class:`CorrectionRefusedError`) at the
    first that does not apply, saying which."""
    out = dict(tracks)
    for n, op in enumerate(operations, start=1):
        try:
            out = _APPLY[op.kind](out, op)
        except CorrectionRefusedError as exc:
            if len(operations) == 1:
                raise
            raise CorrectionRefusedError(
                f"correction {n} ({op.describe()}): {exc.message}"
            ) from None
    return out


def _track(tracks: Tracks, name: str) -> Track:
    if name not in tracks:
        raise CorrectionRefusedError(
            f"the result has no track {name}; its tracks are {', '.join(sorted(tracks)) or 'none'}"
        )
    return tracks[name]


def _move(tracks: Tracks, op: Operation) -> Tracks:
    t = _track(tracks, op.tracks[0])
    if len(op.xy) != t.xy.shape[1]:
        raise CorrectionRefusedError(
            f"track {op.tracks[0]} has {t.xy.shape[1]} coordinates a frame; give as many"
        )
    i = int(np.searchsorted(t.frames, op.start))
    point = np.asarray(op.xy, dtype=np.float64)
    if i < len(t.frames) and t.frames[i] == op.start:
        xy = t.xy.copy()
        xy[i] = point
        frames = t.frames
    else:
        frames = np.insert(t.frames, i, op.start)
        xy = np.insert(t.xy, i, point, axis=0)
    return tracks | {op.tracks[0]: Track(frames, xy, t.filled - {op.start})}


def _occlude(tracks: Tracks, op: Operation) -> Tracks:
    t = _track(tracks, op.tracks[0])
    hidden = (t.frames >= op.start) & (t.frames <= op.end)
    if not hidden.any():
        raise CorrectionRefusedError(
            f"track {op.tracks[0]} has no position from frame {op.start} to {op.end}: "
            "nothing to hide"
        )
    return tracks | {op.tracks[0]: t.keep(~hidden)}


def _fill(tracks: Tracks, op: Operation) -> Tracks:
    name = op.tracks[0]
    t = _track(tracks, name)
    wanted = np.arange(op.start, op.end + 1)
    missing = wanted[~np.isin(wanted, t.frames)]
    if not len(missing):
        raise CorrectionRefusedError(
            f"track {name} has a position at every frame from {op.start} to {op.end}: "
            "no gap to fill"
        )
    # each run of missing frames is one gap, bounded by valid frames on both sides
    runs = np.split(missing, np.nonzero(np.diff(missing) > 1)[0] + 1)
    for run in runs:
        before = int((t.frames < run[0]).sum())
        after = int((t.frames > run[-1]).sum())
        if len(run) > op.max_gap:
            raise CorrectionRefusedError(
                f"track {name}'s gap from frame {run[0]} to {run[-1]} is {len(run)} frames, longer "
                f"than the {op.max_gap} a fill bridges; mark it hidden instead, or fill a shorter "
                "range"
            )
        if before < op.min_valid or after < op.min_valid:
            raise CorrectionRefusedError(
                f"track {name}'s gap from frame {run[0]} to {run[-1]} has {before} valid frames "
                f"before it and {after} after; a fill needs {op.min_valid} on each side"
            )
    frames = t.frames.astype(np.float64)
    if op.method == "spline":
        from scipy.interpolate import CubicSpline  # scipy loads in 0.5 s: only when gaps are filled

        values = CubicSpline(frames, t.xy, axis=0, bc_type="not-a-knot")(missing.astype(np.float64))
    else:
        values = np.stack(
            [np.interp(missing, frames, t.xy[:, d]) for d in range(t.xy.shape[1])], axis=1
        )
    all_frames = np.concatenate([t.frames, missing])
    order = np.argsort(all_frames, kind="stable")
    xy = np.concatenate([t.xy, values])[order]
    filled = t.filled | frozenset(int(f) for f in missing)
    return tracks | {name: Track(all_frames[order], xy, filled)}


def _swap(tracks: Tracks, op: Operation) -> Tracks:
    a, b = (_track(tracks, n) for n in op.tracks)
    a_before, a_after = a.keep(a.frames < op.start), a.keep(a.frames >= op.start)
    b_before, b_after = b.keep(b.frames < op.start), b.keep(b.frames >= op.start)
    if not len(a_after.frames) and not len(b_after.frames):
        raise CorrectionRefusedError(
            f"neither track {op.tracks[0]} nor {op.tracks[1]} has a position from frame "
            f"{op.start} on: nothing to swap"
        )
    return tracks | {op.tracks[0]: _join(a_before, b_after), op.tracks[1]: _join(b_before, a_after)}


def _join(first: Track, then: Track) -> Track:
    return Track(
        np.concatenate([first.frames, then.frames]),
        np.concatenate([first.xy, then.xy]) if len(then.frames) else first.xy,
        first.filled | then.filled,
    )


def _trim(tracks: Tracks, op: Operation) -> Tracks:
    out = {
        name: t.keep((t.frames >= op.start) & (t.frames <= op.end)) for name, t in tracks.items()
    }
    if not any(len(t.frames) for t in out.values()):
        raise CorrectionRefusedError(
            f"no track has a position from frame {op.start} to {op.end}; trim to a range with data"
        )
    return out


_APPLY = {"move": _move, "occlude": _occlude, "fill": _fill, "swap": _swap, "trim": _trim}


@dataclass(frozen=True)
class Suspicious:
    """A frame a reviewer should look at: which track, and why."""

    frame: int
    track_id: str
    why: str


def suspicious_frames(
    tracks: Mapping[str, Track], *, jump_px: float = 25.0, last_frame: int | None = None
) -> list[Suspicious]:
    """The frames to look at in ``tracks``, in frame order: a jump between consecutive frames
    longer than ``jump_px``, the first frame of each gap (a frame missing inside the track's span),
    a track ending before ``last_frame`` (lost), and each run of filled frames' first frame."""
    out: list[Suspicious] = []
    for name, t in tracks.items():
        if not len(t.frames):
            continue
        steps = np.diff(t.frames)
        jumps = np.linalg.norm(np.diff(t.xy, axis=0), axis=1)
        for i in np.nonzero((steps == 1) & (jumps > jump_px))[0]:
            out.append(
                Suspicious(int(t.frames[i + 1]), name, f"jumps {jumps[i]:.0f} px in one frame")
            )
        for i in np.nonzero(steps > 1)[0]:
            a, b = int(t.frames[i]) + 1, int(t.frames[i + 1]) - 1
            out.append(Suspicious(a, name, f"missing from frame {a} to {b} ({b - a + 1} frames)"))
        filled = sorted(t.filled)
        for n, f in enumerate(filled):
            if n == 0 or filled[n - 1] != f - 1:
                out.append(Suspicious(f, name, "filled by a correction: check it"))
        if last_frame is not None and int(t.frames[-1]) < last_frame:
            end = int(t.frames[-1]) + 1
            out.append(Suspicious(end, name, f"lost from frame {end} on"))
    return sorted(out, key=lambda s: (s.frame, s.track_id))


def rig_suspicious_frames(
    markers: Mapping[str, tuple[npt.NDArray[np.int64], Array, Sequence[str]]],
    gaps: Mapping[str, Sequence[tuple[int, int]]],
    *,
    limit_px: float,
) -> list[Suspicious]:
    """The frames to look at in a rig's 3-D markers, in frame order. ``markers``: each marker's
    frames (one per instant it was reconstructed at, increasing), its reprojection error there
    (px) and the camera that fits it worst there; ``gaps``: each marker's runs of frames without a
    3-D position (first, last). Listed: each run of consecutive frames whose error is over
    ``limit_px``, at its worst frame, naming the camera, and the first frame of each gap."""
    out: list[Suspicious] = []
    for name, (frames, errors, worst) in markers.items():
        over = np.flatnonzero(np.asarray(errors) > limit_px)
        runs = np.split(over, np.flatnonzero(np.diff(frames[over]) > 1) + 1) if len(over) else []
        for run in runs:
            top = int(run[np.argmax(errors[run])])
            a, b = int(frames[run[0]]), int(frames[run[-1]])
            span = f" (frames {a}–{b} over {limit_px:g} px)" if b > a else ""
            why = f"reprojection error {errors[top]:.1f} px in {worst[top]}{span}"
            out.append(Suspicious(int(frames[top]), name, why))
    for name, spans in gaps.items():
        for a, b in spans:
            n = b - a + 1
            why = f"no 3-D position from frame {a} to {b} ({n} frame{'s' if n > 1 else ''})"
            out.append(Suspicious(a, name, why))
    return sorted(out, key=lambda s: (s.frame, s.track_id))


def trail_runs(track: Track, first: int, last: int) -> list[tuple[bool, list[Array]]]:
    """``track``'s positions from frame ``first`` to ``last``, in runs of consecutive frames: a
    gap (a frame without a position) ends a run, and a stretch a fill interpolated is a run of its
    own, marked True (drawn dashed), with the positions on either side of it so that the trail
    stays one line. The review player's trails and the overlay video's share it."""
    near = np.nonzero((track.frames >= first) & (track.frames <= last))[0]
    runs: list[tuple[bool, list[Array]]] = []
    for k in near:
        frame = int(track.frames[k])
        filled = frame in track.filled
        # ``near`` is one stretch of indices: after its first, the one before is in it too
        joined = bool(runs) and int(track.frames[k - 1]) == frame - 1
        if joined and runs[-1][0] == filled:
            runs[-1][1].append(track.xy[k])
        elif joined:  # into or out of a filled stretch: the new run starts at the last point
            runs.append((filled, [runs[-1][1][-1], track.xy[k]]))
        else:
            runs.append((filled, [track.xy[k]]))
    return runs
