"""``labrig events``: the seed-000 catalog, or the recorded events in order."""

from __future__ import annotations

import argparse
import time
from typing import Any

from labrig.cli.output import print_json, print_json_line
from labrig.domain.events import CATALOG, DELIVERY
from labrig.events import EventRecord, events_after
from labrig.store import open_store


def add_parser(commands: Any) -> None:
    p = commands.add_parser("events", help="list the event catalog or the recorded events")
    p.add_argument(
        "--catalog", action="store_true", help="list the 16 catalogued events and their payloads"
    )
    p.add_argument("--follow", action="store_true", help="keep printing new events until Ctrl-C")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--poll", type=float, default=0.5, help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.catalog:
        return _print_catalog(args.json)
    store = open_store(args.store)
    try:
        last = 0
        while True:
            batch = events_after(store, last)
            for event in batch:
                print_json_line(event.to_json()) if args.json else print(_line(event), flush=True)
                last = event.seq
            if not args.follow:
                return 0
            if not batch:
                time.sleep(args.poll)
    finally:
        store.close()


def _line(event: EventRecord) -> str:
    flag = "" if event.known else "  [uncatalogued]"
    stamp = event.recorded_at.isoformat(timespec="milliseconds")
    return f"{event.seq:>8}  {stamp}  {event.name}{flag}  {event.payload}"


def _print_catalog(as_json: bool) -> int:
    if as_json:
        print_json(
            [
                {
                    "id": s.seed_id,
                    "name": s.name.value,
                    "meaning": s.meaning,
                    "schema_version": s.version,
                    "delivery": DELIVERY,
                    "fields": [
                        {"name": f.name, "type": f.type, "nullable": f.nullable, "doc": f.doc}
                        for f in s.fields
                    ],
                }
                for s in CATALOG
            ]
        )
        return 0
    for s in CATALOG:
        fields = ", ".join(f.name for f in s.fields)
        print(
            f"{s.seed_id}  {s.name.value:<28} v{s.version}  {s.meaning}\n        payload: {fields}"
        )
    return 0
