"""3-D reconstruction: markers tracked in each camera of a calibrated rig, matched across the
cameras and triangulated into world millimetres.

Matching works on whole tracks, not single frames: for every two cameras, each pair of their
tracks that share instants is scored by the median epipolar distance (px, the mean of both
directions) over those instants. Pairs under ``max_epipolar_px`` are joined cheapest first into
markers, never joining two tracks of one camera that overlap in time (one camera cannot see one
marker twice), so a marker whose track broke in one camera (hidden behind the pillar for a moment)
is still one marker, with both pieces. A track no other camera matches is left out (reported as
unmatched): one camera alone gives no depth.

Each marker is then triangulated at every instant from all the cameras that have it
(:func:`~labrig.calibration.triangulate_views`: DLT, a view that does not fit the others dropped,
an optional Gauss-Newton refinement); an instant with fewer than two views is a gap, never a guess.
Pure computation: no Qt, no database, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from labrig.calibration import CalibratedCamera, triangulate_views
from labrig.pipeline.tracking import Track

Array = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ReconstructionSettings:
    max_epipolar_px: float = 4.0  # a track pair further apart than this is not one marker
    min_shared: int = 5  # instants two tracks must share to be matched
    max_view_error_px: float = 2.0  # a view further than this from the others' point is dropped
    refine: bool = True  # Gauss-Newton on each point after the linear solve


@dataclass(frozen=True)
class CameraTracks:
    """One camera's tracks (positions in undistorted image px, as tracking gives them with the
    camera's lens) and its frame at each of the rig's instants (-1: no frame then)."""

    camera: CalibratedCamera
    tracks: Sequence[Track]
    frames_at: Ints  # M


@dataclass(frozen=True)
class Marker3D:
    marker_id: int  # order of first appearance, from 0
    members: tuple[tuple[int, int], ...]  # (camera index, track id) of the tracks it is made of
    colour_rgb: tuple[int, int, int] | None
    instants: Ints  # where it was reconstructed, increasing
    xyz: Array  # len(instants)×3 world mm
    error_px: Array  # reprojection RMS over the views used, per instant
    used: npt.NDArray[np.bool_]  # K×len(instants): the cameras each point was solved from
    seen_from: int  # first instant any member track saw it
    seen_to: int  # last such instant

    @property
    def cameras(self) -> Ints:
        return np.asarray(self.used.sum(axis=0), dtype=np.int64)

    @property
    def two_camera_share(self) -> float:
        """The share of its reconstructed instants solved from only two cameras."""
        return float(np.mean(self.cameras == 2)) if len(self.instants) else 0.0

    def gap_spans(self) -> list[tuple[int, int]]:
        """Runs of instants (first, last, inclusive) between its first and last reconstructed
        instant where it was not reconstructed."""
        if len(self.instants) < 2:
            return []
        jumps = np.flatnonzero(np.diff(self.instants) > 1)
        return [(int(self.instants[j] + 1), int(self.instants[j + 1] - 1)) for j in jumps]

    def to_json(self, names: Sequence[str]) -> dict[str, Any]:
        e = self.error_px
        weights = 1 << np.arange(self.used.shape[0], dtype=np.int64)
        return {
            "track_id": self.marker_id,
            "colour_rgb": None if self.colour_rgb is None else list(self.colour_rgb),
            "members": [{"camera": names[k], "track_id": t} for k, t in self.members],
            "instants": self.instants.tolist(),
            "xyz": np.round(self.xyz, 4).tolist(),
            "error_px": np.round(e, 4).tolist(),
            # which cameras solved each point: bit k for camera k of "cameras"
            "views": (weights @ self.used.astype(np.int64)).tolist(),
            "frames": len(self.instants),
            "gaps": [list(g) for g in self.gap_spans()],
            "gap_instants": sum(b - a + 1 for a, b in self.gap_spans()),
            "two_camera_share": self.two_camera_share,
            "error_rms_px": float(np.sqrt(np.mean(e * e))) if len(e) else None,
            "error_p95_px": float(np.percentile(e, 95)) if len(e) else None,
            "cameras_used": {n: int(c) for n, c in zip(names, self.used.sum(axis=1), strict=True)},
        }


@dataclass(frozen=True)
class Reconstruction:
    cameras: tuple[str, ...]
    instants: int  # M
    markers: tuple[Marker3D, ...]
    unmatched: tuple[tuple[int, int, int], ...]  # (camera index, track id, detections)
    settings: ReconstructionSettings

    @property
    def errors_px(self) -> Array:
        return np.concatenate([m.error_px for m in self.markers]) if self.markers else np.zeros(0)

    def to_json(self) -> dict[str, Any]:
        e = self.errors_px
        return {
            "cameras": list(self.cameras),
            "instants": self.instants,
            "markers": [m.to_json(self.cameras) for m in self.markers],
            "unmatched_tracks": [
                {"camera": self.cameras[k], "track_id": t, "detections": n}
                for k, t, n in self.unmatched
            ],
            "error_rms_px": float(np.sqrt(np.mean(e * e))) if len(e) else None,
            "error_p95_px": float(np.percentile(e, 95)) if len(e) else None,
            "settings": {
                "max_epipolar_px": self.settings.max_epipolar_px,
                "min_shared": self.settings.min_shared,
                "max_view_error_px": self.settings.max_view_error_px,
                "refine": self.settings.refine,
            },
        }


@dataclass
class _Piece:
    """A track placed on the rig's instants, in normalised camera coordinates."""

    camera: int
    track: Track
    instants: Ints
    normalised: Array  # len(instants)×2


def _pieces(cameras: Sequence[CameraTracks], count: int) -> list[_Piece]:
    out = []
    for k, cam in enumerate(cameras):
        at = cam.frames_at
        valid = at >= 0
        last = int(max((int(t.frames.max()) for t in cam.tracks if len(t.frames)), default=-1))
        instant_of = np.full(max(last, int(at.max(initial=-1))) + 1, -1, dtype=np.int64)
        instant_of[at[valid]] = np.arange(count)[valid]
        k_inv = np.linalg.inv(cam.camera.matrix)
        for track in cam.tracks:
            inst = instant_of[track.frames]
            keep = inst >= 0
            xy = np.asarray(track.xy, dtype=np.float64).reshape(-1, 2)[keep]
            homog = np.column_stack([xy, np.ones(len(xy))]) @ k_inv.T
            out.append(_Piece(k, track, inst[keep], homog[:, :2] / homog[:, 2:3]))
    return out


def _skew(v: Array) -> Array:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]], dtype=np.float64)


def _essential(a: CalibratedCamera, b: CalibratedCamera) -> Array:
    """E with x_b' E x_a = 0 for normalised points of one world point."""
    rot = b.pose.rotation @ a.pose.rotation.T
    shift = b.pose.translation_mm - rot @ a.pose.translation_mm
    return _skew(shift) @ rot


def _epipolar_px(e: Array, xa: Array, xb: Array, fa: float, fb: float) -> Array:
    ha = np.column_stack([xa, np.ones(len(xa))])
    hb = np.column_stack([xb, np.ones(len(xb))])
    in_b = ha @ e.T  # epipolar lines in b
    in_a = hb @ e  # and in a
    num = np.abs(np.sum(hb * in_b, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        db = num / np.hypot(in_b[:, 0], in_b[:, 1]) * fb
        da = num / np.hypot(in_a[:, 0], in_a[:, 1]) * fa
    return np.asarray((da + db) / 2, dtype=np.float64)


def _edges(
    pieces: Sequence[_Piece], cameras: Sequence[CameraTracks], settings: ReconstructionSettings
) -> list[tuple[float, int, int]]:
    """(median epipolar px, piece, piece) for every two pieces of different cameras that share
    enough instants and lie close enough to each other's epipolar lines."""
    out = []
    models = [c.camera for c in cameras]
    essentials: dict[tuple[int, int], Array] = {}
    for i, a in enumerate(pieces):
        for j in range(i + 1, len(pieces)):
            b = pieces[j]
            if a.camera == b.camera:
                continue
            _, ia, ib = np.intersect1d(a.instants, b.instants, return_indices=True)
            if len(ia) < settings.min_shared:
                continue
            pair = (a.camera, b.camera)
            if pair not in essentials:
                essentials[pair] = _essential(models[a.camera], models[b.camera])
            d = _epipolar_px(
                essentials[pair],
                a.normalised[ia],
                b.normalised[ib],
                models[a.camera].focal_px,
                models[b.camera].focal_px,
            )
            cost = float(np.median(d))
            if cost <= settings.max_epipolar_px:
                out.append((cost, i, j))
    return sorted(out)


def _join(
    pieces: Sequence[_Piece], edges: Sequence[tuple[float, int, int]], count: int
) -> list[list[int]]:
    """Pieces joined into markers, cheapest edge first, never two overlapping pieces of one
    camera in one marker."""
    group = list(range(len(pieces)))
    members: dict[int, list[int]] = {i: [i] for i in range(len(pieces))}
    cameras = {p.camera for p in pieces}
    seen: dict[int, dict[int, npt.NDArray[np.bool_]]] = {}
    for i, p in enumerate(pieces):
        cover = np.zeros(count, dtype=bool)
        cover[p.instants] = True
        seen[i] = {p.camera: cover}

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for _, i, j in edges:
        a, b = root(i), root(j)
        if a == b:
            continue
        if any(
            k in seen[a] and k in seen[b] and bool((seen[a][k] & seen[b][k]).any()) for k in cameras
        ):
            continue
        group[b] = a
        members[a] += members.pop(b)
        for k, cover in seen.pop(b).items():
            seen[a][k] = seen[a][k] | cover if k in seen[a] else cover
    return [m for m in members.values() if len({pieces[i].camera for i in m}) >= 2]


def reconstruct(
    cameras: Sequence[CameraTracks], settings: ReconstructionSettings | None = None
) -> Reconstruction:
    """Markers matched across ``cameras`` and triangulated at each of their instants (module
    docstring). Every camera's ``frames_at`` has the same length: the rig's instants."""
    settings = settings or ReconstructionSettings()
    count = len(cameras[0].frames_at) if cameras else 0
    pieces = _pieces(cameras, count)
    groups = _join(pieces, _edges(pieces, cameras, settings), count)
    poses = [c.camera.pose for c in cameras]
    focal = [c.camera.focal_px for c in cameras]
    built = []
    for members in groups:
        obs = np.full((len(cameras), count, 2), np.nan)
        for i in members:
            p = pieces[i]
            obs[p.camera, p.instants] = p.normalised
        span = np.flatnonzero(np.isfinite(obs[..., 0]).any(axis=0))
        tri = triangulate_views(
            list(obs[:, span]),
            poses,
            focal,
            max_view_error_px=settings.max_view_error_px,
            refine_points=settings.refine,
        )
        ok = tri.cameras >= 2
        colours = [pieces[i].track.colour_rgb for i in members if pieces[i].track.colour_rgb]
        built.append(
            (
                int(span[0]),
                tuple(sorted((pieces[i].camera, pieces[i].track.track_id) for i in members)),
                colours[0] if colours else None,
                span[ok],
                tri.points_mm[ok],
                tri.error_px[ok],
                tri.used[:, ok],
                int(span[-1]),
            )
        )
    built = sorted((m for m in built if len(m[3])), key=lambda m: (m[0], m[1]))
    markers = tuple(
        Marker3D(n, members, colour, inst, xyz, err, used, first, last)
        for n, (first, members, colour, inst, xyz, err, used, last) in enumerate(built)
    )
    joined = {i for g in groups for i in g}
    unmatched = tuple(
        (p.camera, p.track.track_id, len(p.instants))
        for i, p in enumerate(pieces)
        if i not in joined
    )
    return Reconstruction(
        tuple(c.camera.name for c in cameras), count, markers, unmatched, settings
    )
