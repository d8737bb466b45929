"""One corner order for a chessboard seen by several cameras.

A chessboard looks the same turned half a turn, so each camera's detection numbers its corners from
whichever end lies nearer the top-left of that camera's picture: two cameras facing each other
number them from opposite ends. A square one (as many inner corners across as down) also looks the
same turned a quarter turn, so a camera that sees it turned on its side (mounted on its side, or
looking down on it) may number it from a third or fourth corner. A single-camera calibration does
not mind; a rig calibration does, since every camera must name the same corner alike. (ChArUco
corners carry their own ids and need none of this.)

:func:`consistent_order` settles it. Each view's board pose is solved (``cv2.solvePnP``) with the
camera's own intrinsics under every order the board allows (:func:`renumberings`). Going out from
the first camera through shared instants, a camera's pose relative to the cameras already placed is
the one most of its shared views agree on, under one of the orders; each of its views then takes
the order that agrees. The first camera to see the board at an instant sets that instant's order.
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


def quarter_turned(detection: Detection, board: Board) -> Detection:
    """The same detection of a square chessboard numbered as if turned a quarter turn: corner
    (row r, column c) renamed (c, n - 1 - r)."""
    n = board.corner_grid[0]
    rows, cols = np.divmod(detection.ids, n)
    ids = cols * n + (n - 1 - rows)
    order = np.argsort(ids)
    return Detection(detection.name, ids[order], detection.corners[order])


def renumberings(detection: Detection, board: Board) -> list[Detection]:
    """``detection`` under every numbering a chessboard's symmetry allows: as found, turned half
    a turn, and for a square board turned a quarter turn either way."""
    half = turned(detection, board)
    if board.corner_grid[0] != board.corner_grid[1]:
        return [detection, half]
    return [detection, half, quarter_turned(detection, board), quarter_turned(half, board)]


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
    # each view under every order (renumberings) with its board → camera pose, per camera and
    # instant; None where the board was not seen or a pose could not be solved
    poses: list[list[list[tuple[Detection, Pose]] | None]] = []
    for c in range(cams):
        row: list[list[tuple[Detection, Pose]] | None] = []
        for d in out[c]:
            numbered = renumberings(d, board) if d is not None else []
            found = [(o, _pose(o, board, lenses[c])) for o in numbered]
            solved = [(o, p) for o, p in found if p is not None]
            row.append(solved if numbered and len(solved) == len(found) else None)
        poses.append(row)
    placed: dict[int, Pose] = {0: Pose(np.eye(3), np.zeros(3))}  # first camera → camera c
    boards: dict[int, Pose] = {}  # instant → board → first camera (the order set at that instant)

    def place_views(c: int, chosen: dict[int, int]) -> None:
        for k in range(instants):
            each = poses[c][k]
            if each is None:
                continue
            out[c][k], pose = each[chosen.get(k, 0)]
            if k not in boards:
                boards[k] = pose.then(placed[c].inverse())

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
            each = poses[c][k]
            assert each is not None
            for which, (_, p) in enumerate(each):
                candidates.append((k, which, boards[k].inverse().then(p)))
        votes = [
            sum(
                1
                for _, _, other in candidates
                if rotation_angle_deg(cand.rotation, other.rotation) < AGREE_DEG
            )
            for _, _, cand in candidates
        ]
        chosen = candidates[int(np.argmax(votes))][2]
        orders = {}
        for k in ks:
            each = poses[c][k]
            assert each is not None
            errors = [
                rotation_angle_deg(chosen.rotation, boards[k].inverse().then(p).rotation)
                for _, p in each
            ]
            orders[k] = int(np.argmin(errors))
        placed[c] = chosen
        place_views(c, orders)
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
    solved sets the order, every other takes the order (:func:`renumberings`) whose pose agrees
    best."""
    out: list[Pose | None] = []
    reference: Pose | None = None  # floor board → first camera
    for c, d in enumerate(floors):
        if d is None:
            out.append(None)
            continue
        options = renumberings(d, board) if board.kind == "chessboard" else [d]
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
