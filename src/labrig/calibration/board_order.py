"""One corner order for a chessboard seen by several cameras.

A chessboard looks the same turned half a turn, so each camera's detection numbers its corners from
whichever end lies nearer the top-left of that camera's picture: two cameras facing each other
number them from opposite ends. A single-camera calibration does not mind; a rig calibration does,
since every camera must name the same corner alike. (ChArUco corners carry their own ids and need
none of this.)

:func:`consistent_order` settles it. Each view's board pose is solved (``cv2.solvePnP``) with the
camera's own intrinsics. Going out from the first camera through shared instants, a camera's pose
relative to the cameras already placed is the one most of its shared views agree on, under one of
the two orders; each of its views then takes the order that agrees. The first camera to see the
board at an instant sets that instant's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from labrig.calibration.boards import Board, Detection
from labrig.calibration.geometry import Pose, rotation_angle_deg

Array = npt.NDArray[np.float64]
#: relative rotations of one camera pair, from different instants, agree within this
AGREE_DEG = 3.0


def turned(detection: Detection, board: Board) -> Detection:
    """The same detection numbered from the other end (the board turned half a turn)."""
    last = board.corner_count - 1
    order = np.argsort(last - detection.ids)
    return Detection(detection.name, (last - detection.ids)[order], detection.corners[order])


def _pose(detection: Detection, board: Board, lens: tuple[Array, Array]) -> Pose | None:
    ok, rvec, tvec = cv2.solvePnP(
        board.object_points()[detection.ids], detection.corners, lens[0], lens[1]
    )
    return Pose.of(rvec, tvec) if ok else None


def consistent_order(
    detections: Sequence[Sequence[Detection | None]],
    board: Board,
    lenses: Sequence[tuple[Array, Array]],
) -> list[list[Detection | None]]:
    """``detections`` (cameras × instants) with every chessboard view numbered alike across the
    cameras; unchanged for a ChArUco board. A camera linked to the others by no view keeps its
    order (the caller refuses such a rig)."""
    out = [list(per) for per in detections]
    if board.kind != "chessboard" or not out:
        return out
    cams, instants = len(out), len(out[0])
    # board → camera poses under both orders, per camera and instant
    poses: list[list[tuple[Pose, Pose] | None]] = []
    for c in range(cams):
        row: list[tuple[Pose, Pose] | None] = []
        for k in range(instants):
            d = out[c][k]
            a = _pose(d, board, lenses[c]) if d is not None else None
            b = _pose(turned(d, board), board, lenses[c]) if d is not None else None
            row.append((a, b) if a is not None and b is not None else None)
        poses.append(row)
    placed: dict[int, Pose] = {0: Pose(np.eye(3), np.zeros(3))}  # first camera → camera c
    boards: dict[int, Pose] = {}  # instant → board → first camera (the order set at that instant)

    def place_views(c: int, flips: dict[int, bool]) -> None:
        for k in range(instants):
            p = poses[c][k]
            if p is None:
                continue
            flip = flips.get(k, False)
            if flip:
                d = out[c][k]
                assert d is not None
                out[c][k] = turned(d, board)
            if k not in boards:
                boards[k] = p[1 if flip else 0].then(placed[c].inverse())

    place_views(0, {})
    while len(placed) < cams:
        best: tuple[int, int] | None = None  # (shared instants, camera)
        for c in range(cams):
            if c in placed:
                continue
            shared = sum(1 for k in boards if poses[c][k] is not None)
            if shared and (best is None or shared > best[0]):
                best = (shared, c)
        if best is None:
            break  # not linked: left as detected
        c = best[1]
        ks = [k for k in boards if poses[c][k] is not None]
        # first camera → camera c, as each shared instant says under each order
        candidates = []
        for k in ks:
            pair = poses[c][k]
            assert pair is not None
            for flip in (False, True):
                candidates.append((k, flip, boards[k].inverse().then(pair[int(flip)])))
        votes = [
            sum(
                1
                for _, _, other in candidates
                if rotation_angle_deg(cand.rotation, other.rotation) < AGREE_DEG
            )
            for _, _, cand in candidates
        ]
        chosen = candidates[int(np.argmax(votes))][2]
        flips = {}
        for k in ks:
            pair = poses[c][k]
            assert pair is not None
            errors = [
                rotation_angle_deg(chosen.rotation, boards[k].inverse().then(p).rotation)
                for p in pair
            ]
            flips[k] = errors[1] < errors[0]
        placed[c] = chosen
        place_views(c, flips)
    return out


def floor_poses(
    floors: Sequence[Detection | None],
    board: Board,
    lenses: Sequence[tuple[Array, Array]],
    relative: Sequence[Pose],
) -> list[Pose | None]:
    """Each camera's floor view as the floor board's pose in the first camera's frame (through
    the camera's pose ``relative`` to the first); None where it saw no floor or the pose could not
    be solved. A chessboard is numbered alike in every view: the first camera whose pose was
    solved sets the order, every other takes the order whose pose agrees better."""
    out: list[Pose | None] = []
    reference: Pose | None = None  # floor board → first camera
    for c, d in enumerate(floors):
        if d is None:
            out.append(None)
            continue
        options = [d, turned(d, board)] if board.kind == "chessboard" else [d]
        seen = [_pose(o, board, lenses[c]) for o in options]
        in_first = [p.then(relative[c].inverse()) if p is not None else None for p in seen]
        if reference is None:
            reference = in_first[0]
            out.append(in_first[0])
            continue
        errors = [
            rotation_angle_deg(reference.rotation, p.rotation) if p is not None else np.inf
            for p in in_first
        ]
        out.append(in_first[int(np.argmin(errors))])
    return out
