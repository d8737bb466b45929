"""``labrig devices`` and ``labrig record``: find, verify and record devices from the
command line."""

from __future__ import annotations

import argparse
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from labrig.bootstrap import Services
from labrig.capture import DeviceKind, DiscoverySettings, parse_mode, status_json
from labrig.capture.rig_world import RIG_SCENES
from labrig.capture.virtual import SCENES
from labrig.cli.common import services_for
from labrig.cli.output import print_json, print_json_line
from labrig.cli.rigs_cmd import run_record_rig
from labrig.domain.recordings import RecordingPurpose
from labrig.errors import UsageError


def add_parser(commands: Any) -> None:
    devices = commands.add_parser(
        "devices", help="list connected devices; --verify probes each one"
    )
    _discovery_options(devices)
    devices.add_argument(
        "--verify", action="store_true", help="verify each device (inventory + a 1 s probe)"
    )
    devices.add_argument(
        "--mode", default="1280x720@30", help="mode to verify cameras in (default 1280x720@30)"
    )
    devices.add_argument("--json", action="store_true")
    devices.set_defaults(run=run_devices)
    record = commands.add_parser(
        "record",
        help="record one device into a committed capture, or a rig into an attempt (--rig)",
    )
    _discovery_options(record)
    what = record.add_mutually_exclusive_group(required=True)
    what.add_argument("--device", metavar="ID", help="device id from 'labrig devices'")
    what.add_argument(
        "--rig",
        metavar="NAME",
        help="a rig from 'labrig rigs': every device at one start and stop, saved as one attempt "
        "of the session (a new session named after the rig without --session)",
    )
    record.add_argument("--seconds", type=float, required=True, help="how long to record")
    record.add_argument("--mode", default="1280x720@30", metavar="WxH@FPS")
    record.add_argument("--session", metavar="ID", help="session the capture belongs to")
    record.add_argument(
        "--purpose",
        choices=[p.value for p in RecordingPurpose],
        default=None,
        help="what the recording is for: attempt (default), board (the calibration board moved "
        "through its poses) or plane (the board lying still on the measurement plane, or with "
        "--rig on the floor); board and plane recordings are not analysed: the Calibration "
        "screen offers them, and 'labrig calibrate-rig' reads a rig's (default with --rig-scene "
        "board or floor: board or plane)",
    )
    record.add_argument(
        "--scene",
        choices=list(SCENES),
        help="what the virtual camera shows: markers (default), board (held up and moved) or "
        "plane (lying still on the measurement plane)",
    )
    record.add_argument(
        "--rig-scene",
        choices=list(RIG_SCENES),
        help="what the virtual rig's cameras show with --rig: markers (default), flash (a lamp "
        "every 5 s), board (a calibration board moved through the volume) or floor (the board "
        "lying on the floor at the world origin)",
    )
    record.add_argument(
        "--rig-board",
        choices=["chessboard", "charuco"],
        default="chessboard",
        help="the board of the board and floor scenes: virtual-rig-9x6-80 (chessboard, default) "
        "or virtual-rig-charuco-7x5-100",
    )
    record.add_argument("--segment-seconds", type=float, default=5.0, help=argparse.SUPPRESS)
    record.add_argument("--json", action="store_true")
    record.set_defaults(run=run_record)


def _discovery_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ip", action="append", default=[], metavar="URL", help="an IP camera's stream URL"
    )
    parser.add_argument(
        "--watch", action="append", default=[], metavar="DIR", help="a watch folder"
    )


@contextmanager
def _services(args: argparse.Namespace) -> Iterator[Services]:
    with services_for(args) as services:
        services.capture.settings = DiscoverySettings(ip_cameras=args.ip, watch_folders=args.watch)
        yield services


def run_devices(args: argparse.Namespace) -> int:
    mode = parse_mode(args.mode)
    with _services(args) as services:
        report = services.capture.discover()
        rows = []
        for device in report.devices:
            row: dict[str, Any] = device.to_json()
            if args.verify:
                verdict = services.capture.verify(
                    device, mode if device.kind.value in ("uvc", "ip", "virtual") else None
                )
                row |= {
                    "verified": verdict.ok,
                    "inventory_entry": verdict.entry_id,
                    "measured_fps": verdict.measured.fps if verdict.measured else None,
                    "reason_code": verdict.reason_code,
                    "reason": verdict.reason,
                }
            rows.append(row)
    problems = [
        {"kind": p.kind.value, "code": p.code, "message": p.message} for p in report.problems
    ]
    if args.json:
        print_json({"devices": rows, "problems": problems})
        return 0
    for row in rows:
        outcome = ""
        if args.verify:
            outcome = (
                f"  VERIFIED {row['measured_fps'] or 0:.1f} "
                + ("samples/s" if "instrument" in row["kind"] else "fps")
                if row["verified"]
                else f"  REFUSED {row['reason_code']}: {row['reason']}"
            )
        print(f"{row['device_id']:<28} {row['kind']:<15} {row['name']}{outcome}")
    for p in problems:
        print(f"problem ({p['kind']}): {p['code']}: {p['message']}")
    return 0


def run_record(args: argparse.Namespace) -> int:
    if args.rig is not None:
        if args.scene is not None:
            raise UsageError(
                "--scene is for one virtual camera; the virtual rig's cameras show --rig-scene"
            )
        return run_record_rig(args)
    if args.rig_scene is not None:
        raise UsageError("--rig-scene is for the virtual rig's cameras: record them with --rig")
    mode = parse_mode(args.mode)
    with _services(args) as services:
        if args.scene is not None:
            if services.capture.find(args.device).kind is not DeviceKind.VIRTUAL:
                raise UsageError(
                    "--scene switches what the virtual camera shows; a real camera shows what is "
                    "in front of it: leave --scene out"
                )
            services.capture.scenes.set(args.device, args.scene)
        recorder = services.capture.start_recording(
            args.device,
            mode,
            planned_seconds=args.seconds,
            session_id=args.session,
            segment_seconds=args.segment_seconds,
            purpose=RecordingPurpose(args.purpose or RecordingPurpose.ATTEMPT.value),
        )
        interrupted = []
        signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))  # Ctrl-C: stop and commit
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline and not interrupted and not recorder.status().stop_reason:
            recorder.wait(min(1.0, max(deadline - time.monotonic(), 0)))
            _show(recorder.status(), args.json)
        result = recorder.stop()
    summary = {
        "capture_id": result.capture_id,
        "state": result.state,
        "frames": result.frame_count,
        "dropped_frames": result.dropped_frames,
        "segments": result.segments,
        "manifest_sha256": result.manifest_sha256,
        "stop_reason": recorder.status().stop_reason,
    }
    if args.json:
        print_json(summary)
    else:
        print(
            f"Saved capture {result.capture_id}: {result.frame_count} frames, "
            f"{result.dropped_frames} dropped, {result.segments} segments, manifest "
            f"{result.manifest_sha256[:12]}…"
        )
        if summary["stop_reason"]:
            print(f"Recording ended early: {summary['stop_reason']}")
    return 0


def _show(status: Any, as_json: bool) -> None:
    if as_json:
        print_json_line(status_json(status))
    else:
        print(
            f"  {status.elapsed_s:6.1f} s  {status.frames:>6} frames  {status.fps:5.1f} fps  "
            f"{status.mb_per_s:5.2f} MB/s  {status.dropped} dropped",
            flush=True,
        )
