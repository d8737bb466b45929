"""Rigs: named sets of devices recorded together, each in its mode and with its place name.

A rig a technician makes is stored (``rigs``, ``rig_devices``); the built-in rig ``virtual`` (the
virtual rig's first four cameras at 1280×720@30) always exists and is not stored, so it cannot be
removed or changed. Whether a rig may record is its devices' business: each is verified in its
mode when the rig is made and again when it records (:mod:`labrig.capture.rig_recorder`).

On the command line a device of a rig is written ``[PLACE=]ID[@MODE]``: ``front=uvc:…@1280x720@30``.
Device ids contain ``:`` and may contain ``@`` or ``=`` (a USB location, a URL's query), so the mode
is only what follows the last ``@`` when it reads as a mode, and the place only a plain word before
the first ``=`` that comes before any ``:``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from labrig.capture.rig_camera import rig_device_id
from labrig.capture.rig_world import DEFAULT_CAMERAS, PLACES
from labrig.capture.samples import SampleMode, stream_mode
from labrig.capture.sources import Mode
from labrig.errors import LabrigError, UsageError
from labrig.store import Store, utcnow
from labrig.store.models import RigDeviceRecord, RigRecord

VIRTUAL_RIG = "virtual"
VIRTUAL_RIG_MODE = Mode(1280, 720, 30.0)
MAX_RIG_DEVICES = 16
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
PLACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
MODE_SUFFIX = re.compile(r"@(\d{2,5}x\d{2,5}@\d+(?:\.\d+)?(?::\w+)?)$")


class RigNotFoundError(LabrigError):
    code = "LABRIG_RIG_NOT_FOUND"


class RigExistsError(LabrigError):
    code = "LABRIG_RIG_EXISTS"


class RigInvalidError(LabrigError):
    code = "LABRIG_RIG_INVALID"


@dataclass(frozen=True)
class RigDevice:
    """A device of a rig: a camera in its mode, or an instrument in the mode it announced."""

    device_id: str
    mode: Mode | SampleMode
    place: str

    @property
    def instrument(self) -> bool:
        return isinstance(self.mode, SampleMode)

    def to_json(self) -> dict[str, Any]:
        return {"device_id": self.device_id, "mode": self.mode.label(), "place": self.place}


@dataclass(frozen=True)
class Rig:
    name: str
    devices: tuple[RigDevice, ...]
    builtin: bool = False
    created_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "builtin": self.builtin,
            "created_by": self.created_by,
            "devices": [d.to_json() for d in self.devices],
        }


@dataclass(frozen=True)
class DeviceSpec:
    """A device as the technician names it for a rig; mode and place may be left to defaults."""

    device_id: str
    mode: Mode | None = None
    place: str | None = None


def parse_device_spec(text: str, parse_mode: Callable[[str], Mode]) -> DeviceSpec:
    """``[PLACE=]ID[@MODE]`` → DeviceSpec (``parse_mode`` reads the mode, raising UsageError)."""
    text, place = text.strip(), None
    head, eq, rest = text.partition("=")
    if eq and ":" not in head and PLACE.match(head):
        place, text = head, rest
    mode = None
    if match := MODE_SUFFIX.search(text):
        mode, text = parse_mode(match.group(1)), text[: match.start()]
    if not text:
        raise UsageError(
            "a --device names no device: write [PLACE=]ID[@MODE], e.g. front=virtual:rig-1"
        )
    return DeviceSpec(text, mode, place)


def builtin_rig(cameras: int = DEFAULT_CAMERAS) -> Rig:
    """The built-in rig ``virtual``: the virtual rig's first ``cameras`` cameras."""
    return Rig(
        VIRTUAL_RIG,
        tuple(RigDevice(rig_device_id(i), VIRTUAL_RIG_MODE, PLACES[i]) for i in range(cameras)),
        builtin=True,
        created_by="Labrig",
    )


def list_rigs(store: Store) -> list[Rig]:
    """The built-in rig first, then the stored ones by name."""
    with store.read() as db:
        records = list(db.scalars(select(RigRecord).order_by(RigRecord.name)))
        devices = list(db.scalars(select(RigDeviceRecord).order_by(RigDeviceRecord.position)))
    by_rig: dict[str, list[RigDevice]] = {}
    for d in devices:
        by_rig.setdefault(d.rig_name, []).append(
            RigDevice(d.device_id, stream_mode(json.loads(d.mode)), d.place)
        )
    return [builtin_rig()] + [
        Rig(r.name, tuple(by_rig.get(r.name, [])), created_by=r.created_by) for r in records
    ]


def get_rig(store: Store, name: str) -> Rig:
    for rig in list_rigs(store):
        if rig.name == name:
            return rig
    known = ", ".join(r.name for r in list_rigs(store))
    raise RigNotFoundError(
        f"there is no rig '{name}'; the rigs are: {known}. Make one with "
        "'labrig rigs add NAME --device ID …' or on the Devices screen"
    )


def check_rig(name: str, devices: Sequence[RigDevice]) -> None:
    """Refuse a rig that cannot be: a bad name, too few or too many devices, one device twice,
    two devices at one place."""
    if not NAME.match(name):
        raise RigInvalidError(
            f"'{name}' cannot name a rig: use 1-64 letters, digits, '.', '-' or '_', starting "
            "with a letter or digit"
        )
    if name == VIRTUAL_RIG:
        raise RigExistsError(
            f"'{VIRTUAL_RIG}' is the built-in virtual rig; give your rig another name"
        )
    if not 2 <= len(devices) <= MAX_RIG_DEVICES:
        raise RigInvalidError(
            f"a rig has 2 to {MAX_RIG_DEVICES} devices, not {len(devices)}: name each with "
            "--device (or pick them on the Devices screen); one device is recorded with "
            "'labrig record --device ID'"
        )
    for what, values in (
        ("device", [d.device_id for d in devices]),
        ("place", [d.place for d in devices]),
    ):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise RigInvalidError(
                f"the {what} {', '.join(twice)} is named twice in the rig; each {what} once"
            )
    bad = [d.place for d in devices if not PLACE.match(d.place)]
    if bad:
        raise RigInvalidError(
            f"'{bad[0]}' cannot name a place: use 1-32 letters, digits, '-' or '_' (front, left)"
        )


def store_rig(store: Store, name: str, devices: Sequence[RigDevice], created_by: str) -> Rig:
    check_rig(name, devices)
    with store.write() as db:
        if db.get(RigRecord, name) is not None:
            raise RigExistsError(
                f"there is already a rig '{name}'; remove it first ('labrig rigs remove {name}') "
                "or give the new one another name"
            )
        db.add(RigRecord(name=name, created_at=utcnow(), created_by=created_by))
        db.flush()
        for position, d in enumerate(devices):
            db.add(
                RigDeviceRecord(
                    rig_name=name,
                    position=position,
                    device_id=d.device_id,
                    mode=json.dumps(d.mode.to_json()),
                    place=d.place,
                )
            )
    return Rig(name, tuple(devices), created_by=created_by)


def delete_rig(store: Store, name: str) -> None:
    """Remove a stored rig (its recordings and their attempts stay)."""
    if name == VIRTUAL_RIG:
        raise RigInvalidError(f"'{VIRTUAL_RIG}' is built in and cannot be removed")
    with store.write() as db:
        record = db.get(RigRecord, name)
        if record is None:
            raise RigNotFoundError(f"there is no rig '{name}'; 'labrig rigs' lists them")
        for d in db.scalars(select(RigDeviceRecord).where(RigDeviceRecord.rig_name == name)):
            db.delete(d)
        db.delete(record)
