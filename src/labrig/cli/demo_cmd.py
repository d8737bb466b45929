"""``labrig demo``: see it work, headless, on the virtual camera."""

from __future__ import annotations

import argparse
from typing import Any

from labrig.capture.rigs import VIRTUAL_RIG
from labrig.cli.common import services_for
from labrig.cli.output import print_json
from labrig.errors import UsageError
from labrig.scenarios import run_demo, run_rig_demo


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "demo", help="verify, calibrate, record, analyse and publish on the virtual camera"
    )
    p.add_argument("--attempts", type=int, default=2, help="attempts to record (default 2)")
    p.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="length of each attempt (default 3 s; 4 s with --rig)",
    )
    p.add_argument(
        "--rig",
        choices=[VIRTUAL_RIG],
        help="the virtual rig's four cameras instead of one camera: calibrate the rig from a "
        "board and a floor recording, then record and analyse in 3-D (about 3 minutes)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    seconds = args.seconds if args.seconds is not None else (4.0 if args.rig else 3.0)
    if args.attempts < 1 or seconds <= 0:
        raise UsageError("--attempts must be at least 1 and --seconds above 0")
    say = (lambda _: None) if args.json else print
    with services_for(args) as services:
        demo = run_rig_demo if args.rig else run_demo
        summary = demo(services, args.attempts, seconds, say=say)
        root = services.store.root
    if args.json:
        print_json(
            {
                "store": str(root),
                ("rig_calibration_id" if args.rig else "calibration_id"): summary.calibration_id,
                "results": summary.results,
            }
        )
        return 0
    print(
        f"\n{'attempt':<10} {'status':<10} {'units':<8} {'track':>5} {'path':>9} "
        f"{'peak speed':>11} {'at':>7}"
    )
    for result in summary.results:
        units = result["units"] or {"length": "-", "time": "-"}
        for m in result["metrics"] or [{}]:
            peak = m.get("peak_speed")
            print(
                f"{result['attempt_id'][:8]:<10} {result['status']:<10} {units['length']:<8} "
                f"{m.get('track_id', '-'):>5} {m.get('path_length') or 0:>9.1f} {peak or 0:>11.1f} "
                f"{m.get('time_to_peak_speed') or 0:>7.2f}"
            )
        for reason in result["reasons"]:
            print(f"           note: {reason}")
    print(
        f"\nResults, media and the event log are in {root}. See them with 'labrig --store {root} "
        "events', 'labrig --store {root} jobs', or open the window: 'labrig --store "
        "{root}'.".replace("{root}", str(root))
    )
    return 0
