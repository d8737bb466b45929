"""``labrig rigs`` and ``labrig record --rig``: make, list and remove rigs, and record one into an
attempt."""

from __future__ import annotations

import argparse
import signal
import time
from typing import Any

from labrig.capture import create_session, parse_mode
from labrig.capture.rig_recorder import RigRecording, RigResult, RigStatus
from labrig.capture.rigs import Rig, parse_device_spec
from labrig.cli.common import services_for
from labrig.cli.output import print_json, print_json_line
from labrig.domain.recordings import RecordingPurpose
from labrig.pipeline import save_rig_attempt
from labrig.store.models import Attempt


def add_parser(commands: Any) -> None:
    rigs = commands.add_parser(
        "rigs", help="list rigs (devices recorded together); 'rigs add' and 'rigs remove'"
    )
    rigs.add_argument("--json", action="store_true")
    rigs.set_defaults(run=run_rigs)
    verbs = rigs.add_subparsers(dest="verb", metavar="VERB")
    add = verbs.add_parser("add", help="make a rig of connected devices, each verified in its mode")
    add.add_argument("name", metavar="NAME")
    add.add_argument(
        "--device",
        action="append",
        required=True,
        metavar="[PLACE=]ID[@MODE]",
        help="a device of the rig, e.g. front=virtual:rig-1@1280x720@30 (mode: 1280x720@30 "
        "unless given; place: the virtual rig camera's, else cam1, cam2 …); repeat for each",
    )
    add.add_argument("--json", action="store_true")
    add.set_defaults(run=run_add)
    remove = verbs.add_parser("remove", help="remove a rig (its recordings stay)")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(run=run_remove)


def run_rigs(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        rigs = services.capture.rigs()
    if args.json:
        print_json({"rigs": [r.to_json() for r in rigs]})
        return 0
    for rig in rigs:
        made = "built in" if rig.builtin else f"made by {rig.created_by}"
        print(f"{rig.name}  ({len(rig.devices)} devices, {made})")
        _print_devices(rig)
    return 0


def run_add(args: argparse.Namespace) -> int:
    specs = [parse_device_spec(text, parse_mode) for text in args.device]
    with services_for(args) as services:
        rig = services.capture.add_rig(args.name, specs)
    if args.json:
        print_json(rig.to_json())
    else:
        print(f"Rig {rig.name} made of {len(rig.devices)} verified devices:")
        _print_devices(rig)
    return 0


def _print_devices(rig: Rig) -> None:
    for d in rig.devices:
        print(f"  {d.place:<12} {d.device_id:<28} {d.mode.label()}")


def run_remove(args: argparse.Namespace) -> int:
    with services_for(args) as services:
        services.capture.remove_rig(args.name)
    print(f"Rig {args.name} removed; its recordings and their attempts stay.")
    return 0


def run_record_rig(args: argparse.Namespace) -> int:
    """``labrig record --rig NAME --seconds N [--session ID]``: one attempt of every device."""
    with services_for(args) as services:
        if args.rig_scene is not None:
            services.capture.virtual_rig.scene = args.rig_scene
            services.capture.virtual_rig.board = args.rig_board
        session_id = args.session or create_session(
            services.queue, args.rig, "rig recording", services.capture.access.actor().user
        )
        recording = services.capture.start_rig_recording(
            args.rig,
            session_id,
            planned_seconds=args.seconds,
            segment_seconds=args.segment_seconds,
        )
        _record_for(recording, args.seconds, args.json)
        result = recording.stop()
        attempt_id = save_rig_attempt(services.queue, result, purpose=rig_purpose(args))
        with services.store.read() as db:
            attempt = db.get(Attempt, attempt_id)
            number = attempt.number if attempt else None
    summary = _summary(result, attempt_id, number)
    if args.json:
        print_json(summary)
        return 0
    print(f"Saved attempt {number} ({attempt_id}) of session {session_id}, rig {result.rig}:")
    for c in result.captures:
        frames = c.commit.frame_count if c.commit else 0
        dropped = c.commit.dropped_frames if c.commit else 0
        state = c.commit.state if c.commit else "not committed"
        unit, lost = ("samples", "lost") if c.instrument else ("frames", "dropped")
        print(
            f"  {c.place:<12} {frames:>6} {unit:<7} {dropped:>4} {lost:<7} {state:<10} "
            f"{c.device_id}"
        )
    print(f"Sync: {result.sync.summary() if result.sync else 'not measured (one camera)'}")
    if result.note:
        print(f"Note: {result.note}")
    return 0


SCENE_PURPOSES = {"board": RecordingPurpose.BOARD, "floor": RecordingPurpose.PLANE}


def rig_purpose(args: argparse.Namespace) -> RecordingPurpose:
    """``--purpose``, or what ``--rig-scene`` shows: the board and floor scenes are for rig
    calibration, not analysed."""
    if args.purpose is not None:
        return RecordingPurpose(args.purpose)
    return SCENE_PURPOSES.get(args.rig_scene or "", RecordingPurpose.ATTEMPT)


def _record_for(recording: RigRecording, seconds: float, as_json: bool) -> None:
    interrupted: list[bool] = []
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))  # Ctrl-C: stop and commit
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not interrupted and not recording.all_stopped():
        recording.wait(min(1.0, max(deadline - time.monotonic(), 0)))
        _show(recording.status(), as_json)


def _show(status: RigStatus, as_json: bool) -> None:
    spread = f"{status.spread_p99_ms:.2f} ms" if status.spread_p99_ms is not None else "-"
    if as_json:
        print_json_line(
            {
                "cameras": [
                    {
                        "place": c.place,
                        "kind": "instrument" if c.instrument else "camera",
                        "frames": c.status.frames,
                        "dropped": c.status.dropped,
                    }
                    for c in status.cameras
                ],
                "spread_p99_ms": status.spread_p99_ms,
            }
        )
        return
    elapsed = max((c.status.elapsed_s for c in status.cameras), default=0.0)
    cameras = "  ".join(
        f"{c.place} {c.status.frames}"
        + (" samples" if c.instrument else "")
        + (
            f" ({c.status.dropped} {'lost' if c.instrument else 'dropped'})"
            if c.status.dropped
            else ""
        )
        for c in status.cameras
    )
    print(f"  {elapsed:6.1f} s  {cameras}  spread p99 {spread}", flush=True)


def _summary(result: RigResult, attempt_id: str, number: int | None) -> dict[str, Any]:
    return {
        "attempt_id": attempt_id,
        "attempt_number": number,
        "session_id": result.session_id,
        "rig": result.rig,
        "captures": [c.to_json() for c in result.captures],
        "sync": result.sync.to_json() if result.sync else None,
        "note": result.note,
    }
