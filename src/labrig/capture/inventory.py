"""The compatibility inventory: which device models, modes and firmware Labrig supports.

The inventory is data (``resources/inventory.json``, schema ``labrig.inventory/1``,
documented field by field in ``docs/inventory.md``). Loading validates the whole
file up front so a broken inventory is refused at start-up with the file and the
entry named, never discovered later in the middle of a capture. Pure data: no
hardware access, safe from any thread once loaded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.sources import Mode
from labrig.errors import LabrigError

SCHEMA = "labrig.inventory/1"
# these must list modes
FRAME_KINDS = frozenset({DeviceKind.UVC, DeviceKind.IP, DeviceKind.VIRTUAL})
_MATCH_KEYS = frozenset({"vid_pid", "name", "url_scheme"})
_ENTRY_KEYS = frozenset(
    {"id", "kind", "name", "match", "modes", "min_firmware", "notes", "protocol"}
)
# how an instrument streams samples: the USB bulk protocol, or the virtual force plate
PROTOCOLS = frozenset({"labrig-bulk/1", "labrig-virtual"})
_VID_PID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")
_VERSION = re.compile(r"^\d+(\.\d+)*$")
_FPS_ABS_TOLERANCE = 0.1  # 29.97 is 30 for matching purposes
_Fail = Callable[[str], "InventoryError"]


class InventoryError(LabrigError):
    """The compatibility inventory file cannot be used; nothing was verified against it."""

    code = "LABRIG_INVENTORY_INVALID"


def parse_version(text: str) -> tuple[int, ...]:
    """``"1.10.2"`` → ``(1, 10, 2)``; raises ValueError for anything but dotted integers."""
    if not _VERSION.match(text.strip()):
        raise ValueError(f"'{text}' is not a dotted version such as 1.2.0")
    return tuple(int(part) for part in text.strip().split("."))


def firmware_at_least(actual: str, minimum: str) -> bool:
    """Dotted-version comparison where missing parts count as 0 (``1.2`` == ``1.2.0``)."""
    a, m = parse_version(actual), parse_version(minimum)
    width = max(len(a), len(m))
    return a + (0,) * (width - len(a)) >= m + (0,) * (width - len(m))


ANY_FORMAT = "any"  # a requested mode that leaves the pixel format to the inventory


@dataclass(frozen=True)
class InventoryEntry:
    """One supported model: how to recognise it and the modes it may be used in."""

    id: str
    kind: DeviceKind
    name: str
    vid_pid: str | None
    name_glob: str | None
    url_schemes: tuple[str, ...]
    modes: tuple[Mode, ...]
    min_firmware: str | None
    notes: str
    protocol: str | None = None  # an instrument's sample-stream protocol (PROTOCOLS)

    def matches(self, device: DeviceInfo) -> bool:
        if device.kind != self.kind:
            return False
        if self.vid_pid is not None and device.vid_pid != self.vid_pid:
            return False
        if self.name_glob is not None and not fnmatchcase(
            device.name.casefold(), self.name_glob.casefold()
        ):
            return False
        return not self.url_schemes or urlsplit(device.address).scheme.lower() in self.url_schemes

    def allows(self, mode: Mode) -> bool:
        """True if ``mode`` is one of this model's listed modes (size, pixel format, fps ±0.1)."""
        return any(
            m.width == mode.width
            and m.height == mode.height
            and m.pixel_format.upper() == mode.pixel_format.upper()
            and math.isclose(m.fps, mode.fps, abs_tol=_FPS_ABS_TOLERANCE)
            for m in self.modes
        )

    def resolve(self, mode: Mode) -> Mode | None:
        """The listed mode with ``mode``'s size and rate; its pixel format too unless
        that is ``any``."""
        for m in self.modes:
            same_format = (
                mode.pixel_format == ANY_FORMAT
                or m.pixel_format.upper() == mode.pixel_format.upper()
            )
            if (
                (m.width, m.height) == (mode.width, mode.height)
                and same_format
                and math.isclose(m.fps, mode.fps, abs_tol=_FPS_ABS_TOLERANCE)
            ):
                return m
        return None

    def firmware_ok(self, firmware: str | None) -> bool:
        """True if no minimum is set, or ``firmware`` is readable and at least the minimum."""
        if self.min_firmware is None:
            return True
        if firmware is None:
            return False
        try:
            return firmware_at_least(firmware, self.min_firmware)
        except ValueError:
            return False

    def modes_label(self) -> str:
        return ", ".join(m.label() for m in self.modes) or "none listed"


@dataclass(frozen=True)
class Inventory:
    """A validated inventory. ``source`` names the file it came from, for messages."""

    entries: tuple[InventoryEntry, ...]
    source: str

    def match(self, device: DeviceInfo) -> InventoryEntry | None:
        """The first entry that recognises ``device`` (file order: put specific entries first)."""
        return next((e for e in self.entries if e.matches(device)), None)

    def get(self, entry_id: str) -> InventoryEntry | None:
        return next((e for e in self.entries if e.id == entry_id), None)


def load_inventory(path: Path | str | None = None) -> Inventory:
    """Load and validate ``path``, or the inventory shipped in ``labrig.resources`` when None."""
    if path is None:
        resource = resources.files("labrig.resources") / "inventory.json"
        source, read = "labrig.resources/inventory.json", resource.read_text
    else:
        source, read = str(path), Path(path).read_text
    try:
        data = json.loads(read(encoding="utf-8"))
    except OSError as exc:
        raise InventoryError(
            f"cannot read the device inventory {source}: {exc}; reinstall Labrig "
            "or point the setting to a readable file"
        ) from exc
    except json.JSONDecodeError as exc:
        raise InventoryError(
            f"the device inventory {source} is not valid JSON (line {exc.lineno}, "
            f"column {exc.colno}: {exc.msg}); restore it from the installer"
        ) from exc
    return parse_inventory(data, source)


def parse_inventory(data: Any, source: str = "<inventory>") -> Inventory:
    """Validate an already-decoded inventory document."""
    if not isinstance(data, dict):
        raise InventoryError(f"the device inventory {source} must be a JSON object")
    if data.get("schema") != SCHEMA:
        raise InventoryError(
            f"the device inventory {source} has schema {data.get('schema')!r}; this Labrig "
            f"reads only {SCHEMA!r}. Use the inventory shipped with this version"
        )
    raw_entries = data.get("entries")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise InventoryError(f"the device inventory {source} has no 'entries' list")
    entries = tuple(_parse_entry(raw, i, source) for i, raw in enumerate(raw_entries))
    ids = [e.id for e in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InventoryError(
            f"the device inventory {source} repeats entry id(s) {', '.join(duplicates)}"
        )
    return Inventory(entries, source)


def _parse_entry(raw: Any, index: int, source: str) -> InventoryEntry:
    where = f"entry #{index + 1}"
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        where = f"entry '{raw['id']}' (#{index + 1})"

    def fail(problem: str) -> InventoryError:
        return InventoryError(f"the device inventory {source}, {where}: {problem}")

    if not isinstance(raw, dict):
        raise fail("must be a JSON object")
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:  # a typo such as "min_firmwre" must not silently drop a requirement
        raise fail(f"unknown field(s) {', '.join(sorted(unknown))}")
    entry_id, name, notes = raw.get("id"), raw.get("name"), raw.get("notes", "")
    if not isinstance(entry_id, str) or not entry_id:
        raise fail("'id' must be a non-empty string")
    if not isinstance(name, str) or not isinstance(notes, str):
        raise fail("'name' and 'notes' must be strings")
    try:
        kind = DeviceKind(str(raw.get("kind")))
    except ValueError:
        raise fail(f"'kind' must be one of {', '.join(k.value for k in DeviceKind)}") from None
    vid_pid, name_glob, schemes = _parse_match(raw.get("match"), fail)
    modes = _parse_modes(raw.get("modes"), kind, fail)
    min_firmware = raw.get("min_firmware")
    if min_firmware is not None and (
        not isinstance(min_firmware, str) or not _VERSION.match(min_firmware)
    ):
        raise fail("'min_firmware' must be null or a dotted version such as \"1.2.0\"")
    protocol = raw.get("protocol")
    if protocol is not None and (protocol not in PROTOCOLS or kind in FRAME_KINDS):
        raise fail(
            f"'protocol' must be null or, for an instrument, one of {', '.join(sorted(PROTOCOLS))}"
        )
    return InventoryEntry(
        id=entry_id,
        kind=kind,
        name=name,
        vid_pid=vid_pid,
        name_glob=name_glob,
        url_schemes=schemes,
        modes=modes,
        min_firmware=min_firmware,
        notes=notes,
        protocol=protocol,
    )


def _parse_match(raw: Any, fail: _Fail) -> tuple[str | None, str | None, tuple[str, ...]]:
    if not isinstance(raw, dict) or not raw:
        raise fail("'match' must be an object with vid_pid, name and/or url_scheme")
    unknown = set(raw) - _MATCH_KEYS
    if unknown:
        raise fail(f"'match' has unknown key(s) {', '.join(sorted(unknown))}")
    vid_pid, name_glob, schemes = raw.get("vid_pid"), raw.get("name"), raw.get("url_scheme", [])
    if vid_pid is not None and (
        not isinstance(vid_pid, str) or not _VID_PID.match(vid_pid.lower())
    ):
        raise fail("'match.vid_pid' must look like \"046d:082d\" (hexadecimal vendor:product)")
    if name_glob is not None and (not isinstance(name_glob, str) or not name_glob):
        raise fail("'match.name' must be a non-empty glob such as \"HD Pro Webcam C920*\"")
    if isinstance(schemes, str):
        schemes = [schemes]
    if not isinstance(schemes, list) or not all(isinstance(s, str) and s for s in schemes):
        raise fail("'match.url_scheme' must be a scheme or a list of schemes such as [\"http\"]")
    return (vid_pid.lower() if vid_pid else None), name_glob, tuple(s.lower() for s in schemes)


def _parse_modes(raw: Any, kind: DeviceKind, fail: _Fail) -> tuple[Mode, ...]:
    if raw is None and kind not in FRAME_KINDS:
        return ()
    if not isinstance(raw, list) or (kind in FRAME_KINDS and not raw):
        raise fail(f"'modes' must list at least one mode for a {kind.value} device")
    return tuple(_parse_mode(m, i, fail) for i, m in enumerate(raw))


def _parse_mode(raw: Any, index: int, fail: _Fail) -> Mode:
    if not isinstance(raw, Mapping):
        raise fail(f"mode #{index + 1} must be an object")
    width, height, fps, fmt = (raw.get(k) for k in ("width", "height", "fps", "pixel_format"))
    sizes_ok = all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (width, height)
    )
    fps_ok = isinstance(fps, int | float) and not isinstance(fps, bool) and fps > 0
    if not sizes_ok or not fps_ok or not isinstance(fmt, str) or not fmt:
        raise fail(
            f"mode #{index + 1} needs positive integer width and height, a positive fps "
            'and a pixel_format such as "MJPG"'
        )
    return Mode(int(width), int(height), float(fps), fmt)  # type: ignore[arg-type]
