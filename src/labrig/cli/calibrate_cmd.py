"""``labrig calibrate``: solve a camera calibration from images or videos of a board and say
whether it validates.

Exit 0: valid. Exit 1: solved but not valid (the reasons are printed). Exit 2: a typed refusal (no
board found, too few views, unreadable file, bad --board), printed by the CLI main as ``labrig:
CODE: message``.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labrig.access import AccessControl
from labrig.calibration import (
    COVERAGE_GRID,
    Board,
    BoardNotFoundError,
    CalibrationBinding,
    CalibrationResult,
    CalibrationThresholds,
    CaptureSource,
    bind,
    calibrate_views,
    detect_views,
    load_views,
    parse_board,
    plane_homography,
    save_calibration,
    still_plane_view,
)
from labrig.calibration.images import VIDEO_SUFFIXES
from labrig.capture import ANY_FORMAT, Mode, parse_mode
from labrig.cli.common import store_for
from labrig.cli.output import print_json
from labrig.domain.roles import Action
from labrig.errors import UsageError
from labrig.store import Store
from labrig.store.models import DeviceRecord

_DEFAULTS = CalibrationThresholds()


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "calibrate",
        help="calibrate a camera from images or videos of a calibration board",
        description="Solve intrinsics and distortion from views of a known board, report RMS, "
        "per-view errors, rejected views and coverage, and say whether the result validates. "
        "Exit 0 valid, 1 not valid, 2 refused.",
    )
    p.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="images, or videos (every Nth frame is used)",
    )
    p.add_argument(
        "--capture",
        action="append",
        default=[],
        metavar="ID",
        help="use a committed capture of the board (its segments, every Nth frame)",
    )
    p.add_argument(
        "--board",
        required=True,
        metavar="SPEC",
        help="chessboard:COLSxROWS:SQUARE_MM (inner corners), "
        "charuco:COLSxROWS:SQUARE_MM:MARKER_MM:DICT (squares), "
        "or a board named in resources/boards.json, e.g. virtual-9x6-25",
    )
    p.add_argument(
        "--every",
        type=int,
        default=10,
        metavar="N",
        help="use every Nth frame of a video (default 10)",
    )
    p.add_argument(
        "--max-rms",
        type=float,
        default=_DEFAULTS.max_rms_px,
        metavar="PX",
        help=f"largest RMS reprojection error that validates (default {_DEFAULTS.max_rms_px:g} px)",
    )
    p.add_argument(
        "--min-views",
        type=int,
        default=_DEFAULTS.min_views,
        metavar="N",
        help=f"fewest views with the board (default {_DEFAULTS.min_views})",
    )
    p.add_argument(
        "--min-coverage",
        type=float,
        default=_DEFAULTS.min_coverage,
        metavar="F",
        help="smallest fraction of the image covered by corners "
        f"(default {_DEFAULTS.min_coverage:g})",
    )
    p.add_argument(
        "--device", metavar="ID", help="store a valid result, bound to this device id in --mode"
    )
    p.add_argument(
        "--mode", metavar="WxH@FPS[:FORMAT]", help="the mode the device records in (with --device)"
    )
    p.add_argument(
        "--plane",
        type=Path,
        metavar="FILE",
        help="an image or video of the board lying on the measurement plane: outputs become mm",
    )
    p.add_argument(
        "--max-age-days",
        type=float,
        default=_DEFAULTS.max_age_days,
        metavar="DAYS",
        help=f"a bound calibration is valid this long (default {_DEFAULTS.max_age_days:g} days)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output (labrig.calibration/2: with every view's detected corners)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    board = parse_board(args.board)
    if args.device and not args.mode:
        raise UsageError("--device needs --mode, the mode the device records in (e.g. 1280x720@30)")
    thresholds = CalibrationThresholds(
        max_rms_px=args.max_rms,
        min_views=args.min_views,
        min_coverage=args.min_coverage,
        max_age_days=args.max_age_days,
    )
    if args.device:  # storing a calibration is a technician's; refused before minutes of solving
        with store_for(args) as store:
            AccessControl(store).require(Action.CALIBRATE)
    captured, source = _capture_files(args)
    files = list(args.files) + captured
    if not files:
        raise UsageError("give image or video files, or --capture ID of a recording of the board")
    result = calibrate_views(
        load_views(files, args.every), board, thresholds, None if args.files else source
    )
    binding = bind(result, args.device, datetime.now(UTC)) if args.device and result.valid else None
    if binding is not None:
        _store(args, result, board)
    if args.json:
        doc = result.to_json()
        doc["calibration_id"] = result.digest()
        doc["binding"] = binding.event_payload() if binding else None
        print_json(doc)
    else:
        _print(result, binding, args.device)
    return 0 if result.valid else 1


def _capture_files(args: argparse.Namespace) -> tuple[list[Path], CaptureSource | None]:
    """The segments of the ``--capture`` recordings, and the source to keep in the document: one
    recording only (the screen shows a view's frame from one recording; views of several are kept
    without a source)."""
    if not args.capture:
        return [], None
    from labrig.capture import load_capture
    from labrig.store.models import Capture

    with store_for(args) as store:
        files: list[Path] = []
        sources = []
        for capture_id in args.capture:
            with store.read() as session:
                capture = session.get(Capture, capture_id)
            if capture is None or not capture.manifest_sha256:
                raise UsageError(
                    f"no committed capture {capture_id}; list them with 'labrig captures'"
                )
            files += list(load_capture(store, capture.manifest_sha256).segments)
            sources.append(CaptureSource(capture.id, capture.manifest_sha256, args.every))
        return files, sources[0] if len(sources) == 1 else None


def _store(args: argparse.Namespace, result: CalibrationResult, board: Board) -> None:
    """Keep the valid result bound to the device and mode, with the plane scale when a
    plane view is given."""
    homography = None
    if args.plane is not None:
        detections, _, _ = detect_views(load_views([args.plane], args.every), board)
        if not detections:
            raise BoardNotFoundError(
                f"the board was not found in {args.plane}; lay it flat on the measurement "
                "plane, fully in view, and capture it again"
            )
        # a video of the plane must show the board lying still; an image is one moment anyway
        video = Path(args.plane).suffix.lower() in VIDEO_SUFFIXES
        view = still_plane_view(detections, str(args.plane)) if video else detections[0]
        homography = plane_homography(result, view, board)
    with store_for(args) as store:
        mode = _mode_label(store, args.device, args.mode)
        save_calibration(store, result, args.device, mode, homography)


def _mode_label(store: Store, device_id: str, text: str) -> str:
    mode = parse_mode(text)
    if mode.pixel_format != ANY_FORMAT:
        return mode.label()
    with store.read() as session:
        row = session.get(DeviceRecord, device_id)
    verified = Mode(**json.loads(row.mode)) if row is not None and row.mode else None
    if verified is None or (verified.width, verified.height, verified.fps) != (
        mode.width,
        mode.height,
        mode.fps,
    ):
        raise UsageError(
            f"give the pixel format too, e.g. --mode {text}:MJPG, as 'labrig devices --verify' "
            "shows it for this device"
        )
    return verified.label()


def _print(r: CalibrationResult, binding: CalibrationBinding | None, device: str | None) -> None:
    k, d, t = r.camera_matrix, r.dist, r.thresholds
    total = r.view_count + len(r.rejected) + len(r.skipped)
    print(f"Board:       {r.board.describe()}")
    print(
        f"Views:       {r.view_count} used of {total} ({len(r.rejected)} rejected, "
        f"{len(r.skipped)} without the board); image {r.image_size[0]}x{r.image_size[1]}"
    )
    print(
        f"Intrinsics:  fx {k[0, 0]:.2f}  fy {k[1, 1]:.2f}  cx {k[0, 2]:.2f}  cy {k[1, 2]:.2f} px"
        f"  (fx ±{r.focal_std_px:.2f} px)"
    )
    print(
        "Distortion:  "
        + "  ".join(f"{n} {v:+.5f}" for n, v in zip(("k1", "k2", "p1", "p2", "k3"), d, strict=True))
    )
    print(f"RMS:         {r.rms_px:.3f} px (limit {t.max_rms_px:g} px)")
    print(
        f"Coverage:    {r.coverage:.0%} of a {COVERAGE_GRID[0]}x{COVERAGE_GRID[1]} grid (need "
        f"{t.min_coverage:.0%}); board tilts span {r.pose_spread_deg:.0f}°"
    )
    print("Per-view RMS error (px):")
    for name, err in r.view_errors:
        print(f"  {name:<32} {err:.3f}")
    for name, err, limit in r.rejected:
        print(f"Rejected:    {name}: {err:.3f} px, above {limit:.3f} px; solved again without it")
    for name in r.skipped:
        print(f"No board:    {name}")
    if r.valid:
        print("Verdict:     VALID")
        if binding:
            print(
                f"Bound to:    {binding.device_id} until {binding.valid_until:%Y-%m-%d %H:%M} UTC "
                f"(calibration {binding.calibration_id[:12]})"
            )
        return
    print("Verdict:     NOT VALID" + (" (not bound to " + device + ")" if device else ""))
    for reason in r.reasons:
        print(f"  - {reason.code}: {reason.message}")
