"""``labrig calibrate-rig``: solve every camera of a rig (intrinsics and pose, in one set of axes)
from pictures or videos of a board taken by all of them at the same instants, and say whether the
result validates.

Exit 0: valid. Exit 1: solved but not valid (each failed threshold says what to do). Exit 2: a
typed refusal (views no two cameras share, a board never seen by one camera, mismatched view
counts or image sizes, a floor board seen by no camera, degenerate views), printed by the CLI main
as ``labrig: CODE: message``. With ``--rig NAME`` the result (valid or not) is stored bound to
that rig; otherwise nothing is stored.
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from labrig.access import AccessControl
from labrig.calibration import parse_board
from labrig.calibration.camera import CalibrationThresholds
from labrig.calibration.images import load_views
from labrig.calibration.rig import (
    RigCalibration,
    RigCameraViews,
    calibrate_rig,
    parse_floor,
)
from labrig.calibration.rig_captures import recorded_rig
from labrig.calibration.rig_checks import RigThresholds
from labrig.calibration.rig_plot import rig_views_png
from labrig.calibration.rig_stored import (
    save_rig_calibration,
)
from labrig.capture.rigs import get_rig
from labrig.cli.common import store_for
from labrig.cli.output import print_json
from labrig.domain.roles import Action
from labrig.errors import UsageError

_RIG = RigThresholds()
_CAMERA = CalibrationThresholds()


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "calibrate-rig",
        help="calibrate the cameras of a rig together from pictures of a board",
        description="Solve each camera's lens and all the cameras' poses together from views of "
        "a board taken by every camera at the same instants (the k-th file of every camera at "
        "the same instant). A --floor view of the board lying on the floor sets the world's "
        "origin and axes (z up, the floor at z = 0); without one the first camera is the "
        "origin. Exit 0 valid, 1 not valid, 2 refused.",
    )
    p.add_argument(
        "--camera",
        nargs="+",
        action="append",
        default=[],
        metavar=("NAME", "FILE"),
        help="a camera's name and its pictures (or videos: every --every-th frame), in instant "
        "order; give --camera once per camera",
    )
    p.add_argument(
        "--capture-attempt",
        metavar="ID",
        help="use a rig recording of the board (its attempt id): every --every-th frame of its "
        "first camera and each other camera's frame at the same instant; the result is stored "
        "for the recording's rig",
    )
    p.add_argument(
        "--floor-attempt",
        metavar="ID",
        help="a rig recording of the board lying on the floor (with --capture-attempt)",
    )
    p.add_argument(
        "--board",
        required=True,
        metavar="SPEC",
        help="chessboard:COLSxROWS:SQUARE_MM or charuco:COLSxROWS:SQUARE_MM:MARKER_MM:DICT, or a "
        "board named in resources/boards.json",
    )
    p.add_argument(
        "--floor",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a camera's picture of the board lying flat on the floor (repeat per camera that "
        "sees it)",
    )
    p.add_argument(
        "--every", type=int, default=10, metavar="N", help="every Nth frame of a video (10)"
    )
    p.add_argument(
        "--max-rms",
        type=float,
        default=_RIG.max_rms_px,
        metavar="PX",
        help=f"largest reprojection RMS of a camera under the solved rig ({_RIG.max_rms_px:g})",
    )
    p.add_argument(
        "--min-shared",
        type=int,
        default=_RIG.min_shared_views,
        metavar="N",
        help="fewest instants each camera must see the board together with another camera "
        f"({_RIG.min_shared_views})",
    )
    p.add_argument(
        "--max-board-error",
        type=float,
        default=_RIG.max_board_length_rms_mm,
        metavar="MM",
        help="largest RMS error of the board's measured diagonal "
        f"({_RIG.max_board_length_rms_mm:g} mm)",
    )
    p.add_argument(
        "--min-views",
        type=int,
        default=_CAMERA.min_views,
        metavar="N",
        help=f"fewest views with the board per camera, for its lens ({_CAMERA.min_views})",
    )
    p.add_argument(
        "--min-coverage",
        type=float,
        default=_CAMERA.min_coverage,
        metavar="F",
        help="smallest fraction of each camera's picture its lens views must cover "
        f"({_CAMERA.min_coverage:g})",
    )
    p.add_argument(
        "--min-rig-coverage",
        type=float,
        default=_RIG.min_coverage,
        metavar="F",
        help="smallest fraction of each camera's picture covered by the views it shares with "
        f"other cameras ({_RIG.min_coverage:g})",
    )
    p.add_argument(
        "--rig",
        metavar="NAME",
        help="store the result bound to this rig (its cameras named after the rig's places, "
        "pictured in its modes); a valid one is then used for the rig's 3-D results",
    )
    p.add_argument(
        "--max-age-days",
        type=float,
        default=_RIG.max_age_days,
        metavar="DAYS",
        help=f"a stored rig calibration is valid this long ({_RIG.max_age_days:g} days)",
    )
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="write where each camera stands and looks, from above and from the side, with "
        "where the board was carried",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output (labrig.rig-calibration/1)",
    )
    p.set_defaults(run=run)


def _cameras(args: argparse.Namespace) -> list[RigCameraViews]:
    floors = parse_floor(args.floor)
    names = [entry[0] for entry in args.camera]
    unknown = sorted(set(floors) - set(names))
    if unknown:
        raise UsageError(
            f"--floor names {', '.join(unknown)}, which no --camera is called; "
            f"the cameras are {', '.join(names)}"
        )
    out = []
    for entry in args.camera:
        name, files = entry[0], [Path(f) for f in entry[1:]]
        if not files:
            raise UsageError(f"--camera {name} needs its pictures: --camera {name} FILE…")
        floor = None
        if name in floors:
            floor = next(iter(load_views([Path(floors[name])], args.every)), None)
        out.append(RigCameraViews(name, list(load_views(files, args.every)), floor=floor))
    return out


def run(args: argparse.Namespace) -> int:
    board = parse_board(args.board)
    if args.capture_attempt and args.camera:
        raise UsageError("give either --capture-attempt ID or --camera NAME FILE…, not both")
    if args.floor_attempt and not args.capture_attempt:
        raise UsageError("--floor-attempt goes with --capture-attempt; with files, use --floor")
    if not args.capture_attempt and len(args.camera) < 2:
        raise UsageError("give at least two cameras: --camera NAME FILE… --camera NAME FILE…")
    thresholds = RigThresholds(
        max_rms_px=args.max_rms,
        min_shared_views=args.min_shared,
        max_board_length_rms_mm=args.max_board_error,
        max_age_days=args.max_age_days,
        min_coverage=args.min_rig_coverage,
        camera=CalibrationThresholds(min_views=args.min_views, min_coverage=args.min_coverage),
    )
    rig = None
    with store_for(args) if (args.rig or args.capture_attempt) else nullcontext() as store:
        if store is not None:  # refused before minutes of solving: the user may store, the rig
            # must exist
            AccessControl(store).require(Action.CALIBRATE)
        if store is not None and args.capture_attempt:
            cameras, rig = recorded_rig(
                store, args.capture_attempt, args.floor_attempt, args.every, args.rig
            )
        else:
            cameras = _cameras(args)
            rig = get_rig(store, args.rig) if store is not None and args.rig else None
        result = calibrate_rig(cameras, board, thresholds)
        stored = None
        if store is not None and rig is not None:
            stored = save_rig_calibration(store, result, rig)
    if args.plot is not None:
        args.plot.write_bytes(rig_views_png(result.to_json()))
    if args.json:
        doc = result.to_json()
        doc["rig_calibration_id"] = result.digest()
        doc["stored"] = (
            {"rig": stored.rig_name, "valid_until": _iso(stored.valid_until)} if stored else None
        )
        print_json(doc)
    else:
        print_rig(result)
        if stored is not None:
            print(
                f"Stored:      for rig {stored.rig_name} as {stored.id[:12]}"
                + (
                    f", valid until {stored.valid_until:%Y-%m-%d}"
                    if stored.valid_until
                    else " (not valid: kept for the record, never used)"
                )
            )
    return 0 if result.valid else 1


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def print_rig(r: RigCalibration) -> None:
    """The result for a technician: each camera, each pair, the board check, the verdict."""
    t, length = r.thresholds, r.checks.board_length
    print(f"Board:       {r.board.describe()}")
    origin = (
        f"the floor board (seen by {', '.join(r.floor_cameras)}; z up, floor at z = 0)"
        if r.world == "floor"
        else f"camera {r.cameras[0].name} (x right, y down, z ahead)"
    )
    print(f"Instants:    {r.instants}; world origin and axes: {origin}")
    print(f"RMS:         {r.rms_px:.3f} px over every camera (limit {t.max_rms_px:g} px each)")
    print("Cameras:")
    for c in r.cameras:
        k, (w, h) = c.intrinsics.camera_matrix, c.intrinsics.image_size
        x, y, z = c.pose.centre_mm
        print(
            f"  {c.name}: {w}x{h}, fx {k[0, 0]:.1f} fy {k[1, 1]:.1f} px, at ({x:.0f}, {y:.0f}, "
            f"{z:.0f}) mm"
        )
        print(
            f"      RMS {c.rms_px:.3f} px (lens alone {c.intrinsics.rms_px:.3f} px); views "
            f"{len(c.view_errors)} of {len(c.detected)} with the board ({len(c.rejected)} "
            f"dropped); coverage {c.coverage:.0%}"
        )
    print("Pairs:")
    for pair in r.pairs():
        a, b = pair["cameras"]
        print(
            f"  {a} - {b}: {pair['distance_mm']:.1f} mm apart, axes {pair['angle_deg']:.1f}° "
            f"apart, {pair['shared_views']} shared views"
        )
    if length.samples:
        print(
            f"Board check: diagonal {length.mean_mm:.2f} mm measured vs {length.nominal_mm:.2f} mm "
            f"nominal over {length.samples} instants (error RMS {length.rms_error_mm:.2f} mm, "
            f"max {length.max_error_mm:.2f} mm; limit {t.max_board_length_rms_mm:g} mm)"
        )
    if r.valid:
        print("Verdict:     VALID")
        return
    print("Verdict:     NOT VALID")
    for reason in r.checks.reasons:
        print(f"  {reason.code}: {reason.message}")
