"""The compatibility inventory: the shipped file, broken files refused with the file and entry
named, matching."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.discovery import discover_ip, discover_virtual
from labrig.capture.inventory import (
    SCHEMA,
    InventoryError,
    firmware_at_least,
    load_inventory,
    parse_inventory,
    parse_version,
)
from labrig.capture.sources import Mode
from tests.contract import REPO

SHIPPED = REPO / "resources" / "inventory.json"


def shipped_doc() -> dict[str, Any]:
    return dict(json.loads(SHIPPED.read_text(encoding="utf-8")))


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "inventory.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def uvc(vid: int, pid: int, name: str = "USB camera") -> DeviceInfo:
    return DeviceInfo(
        f"uvc:{vid:04x}:{pid:04x}:{name}:/dev/video0",
        DeviceKind.UVC,
        name,
        "0",
        vendor_id=vid,
        product_id=pid,
    )


def test_the_shipped_inventory_loads() -> None:
    inventory = load_inventory(SHIPPED)
    ids = {e.id for e in inventory.entries}
    assert {
        "labrig-virtual-camera",
        "ip-mjpeg-http",
        "logitech-c920",
        "logitech-c922",
        "example-force-plate-amplifier",
        "watch-folder",
    } <= ids
    virtual = inventory.get("labrig-virtual-camera")
    assert virtual is not None
    assert [m.label() for m in virtual.modes] == [
        "640x480@30 BGR",
        "1280x720@30 BGR",
        "1280x720@60 BGR",
        "1920x1080@30 BGR",
    ]
    example = inventory.get("example-force-plate-amplifier")
    assert example is not None and "EXAMPLE" in example.notes and example.min_firmware == "1.2.0"


@pytest.mark.skipif(
    importlib.util.find_spec("labrig.resources") is None,
    reason="labrig.resources is not an installed package: pyproject.toml's package list lacks it",
)
def test_the_inventory_loads_from_the_installed_package() -> None:
    assert load_inventory().entries == load_inventory(SHIPPED).entries


def test_bad_json_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, '{"schema": "labrig.inventory/1", "entries": [}')
    with pytest.raises(InventoryError) as caught:
        load_inventory(path)
    assert caught.value.code == "LABRIG_INVENTORY_INVALID"
    assert str(path) in caught.value.message and "not valid JSON (line 1" in caught.value.message


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="cannot read the device inventory"):
        load_inventory(tmp_path / "nope.json")


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    doc = shipped_doc() | {"schema": "labrig.inventory/2"}
    with pytest.raises(
        InventoryError, match=r"schema 'labrig.inventory/2'; this Labrig reads only"
    ) as caught:
        load_inventory(write(tmp_path, doc))
    assert str(tmp_path / "inventory.json") in caught.value.message


def test_an_entry_without_modes_is_refused_naming_it(tmp_path: Path) -> None:
    doc = shipped_doc()
    c920 = next(e for e in doc["entries"] if e["id"] == "logitech-c920")
    del c920["modes"]
    with pytest.raises(InventoryError) as caught:
        load_inventory(write(tmp_path, doc))
    assert (
        "entry 'logitech-c920'" in caught.value.message
        and "'modes' must list" in caught.value.message
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"match": {"vid_pid": "46d:82d"}}, "'match.vid_pid' must look like"),
        ({"match": {}}, "'match' must be an object"),
        ({"min_firmwre": "1.0"}, "unknown field(s) min_firmwre"),
        ({"min_firmware": "v1"}, "'min_firmware' must be null or a dotted version"),
        ({"kind": "webcam"}, "'kind' must be one of"),
        (
            {"modes": [{"width": 640, "height": 480, "fps": 0, "pixel_format": "MJPG"}]},
            "mode #1 needs",
        ),
        ({"id": "logitech-c922"}, "repeats entry id(s) logitech-c922"),
    ],
)
def test_malformed_entries_are_refused(
    tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    doc = shipped_doc()
    entry = next(e for e in doc["entries"] if e["id"] == "logitech-c920")
    entry.update(change)
    with pytest.raises(InventoryError) as caught:
        load_inventory(write(tmp_path, doc))
    assert expected in caught.value.message


def test_instruments_and_folders_need_no_modes() -> None:
    doc = {
        "schema": SCHEMA,
        "entries": [
            {
                "id": "amp",
                "kind": "usb_instrument",
                "name": "Amp",
                "match": {"vid_pid": "1209:0001"},
                "min_firmware": None,
                "notes": "",
            }
        ],
    }
    assert parse_inventory(doc).entries[0].modes == ()


def test_matching_by_vid_pid() -> None:
    inventory = load_inventory(SHIPPED)
    c920 = inventory.match(uvc(0x046D, 0x082D, "HD Pro Webcam C920"))
    c922 = inventory.match(uvc(0x046D, 0x085C, "C922 Pro Stream Webcam"))
    assert (c920 and c920.id, c922 and c922.id) == ("logitech-c920", "logitech-c922")
    assert inventory.match(uvc(0x046D, 0x0999)) is None
    as_instrument = DeviceInfo(
        "usb:046d:082d@1-2",
        DeviceKind.USB_INSTRUMENT,
        "C920",
        "1:4",
        vendor_id=0x046D,
        product_id=0x082D,
    )
    assert inventory.match(as_instrument) is None, "an entry matches only its own kind"


def test_matching_by_name_glob() -> None:
    inventory = load_inventory(SHIPPED)
    for device in discover_virtual():  # the camera, then the rig's cameras and force plate
        entry = inventory.match(device)
        expected = (
            "labrig-virtual-rig-camera"
            if "rig" in device.address
            else "labrig-virtual-force-plate"
            if "plate" in device.address
            else "labrig-virtual-camera"
        )
        assert entry is not None and entry.id == expected
    doc = {
        "schema": SCHEMA,
        "entries": [
            {
                "id": "acme",
                "kind": "uvc",
                "name": "Acme",
                "match": {"name": "Acme LabCam *"},
                "modes": [{"width": 640, "height": 480, "fps": 30, "pixel_format": "MJPG"}],
                "min_firmware": None,
            }
        ],
    }
    custom = parse_inventory(doc)
    assert custom.match(uvc(0x1111, 0x2222, "ACME LabCam 3000")) is not None, "globs ignore case"
    assert custom.match(uvc(0x1111, 0x2222, "Acme Other")) is None


def test_matching_ip_cameras_by_url_scheme() -> None:
    inventory = load_inventory(SHIPPED)
    (http,), _ = discover_ip(["http://cam.lab/video.mjpg"])
    (rtsp,), _ = discover_ip(["rtsp://cam.lab/stream1"])
    entry = inventory.match(http)
    assert entry is not None and entry.id == "ip-mjpeg-http"
    assert inventory.match(rtsp) is None, "RTSP cameras are not in the inventory yet"


def test_allowed_modes() -> None:
    virtual = load_inventory(SHIPPED).get("labrig-virtual-camera")
    assert virtual is not None
    assert virtual.allows(Mode(1280, 720, 30))
    assert virtual.allows(Mode(1280, 720, 29.97)), "NTSC rates count as their round rate"
    assert virtual.allows(Mode(1280, 720, 60, "bgr"))
    assert not virtual.allows(Mode(800, 600, 30))
    assert not virtual.allows(Mode(1280, 720, 25))
    assert not virtual.allows(Mode(1280, 720, 30, "MJPG"))


def test_firmware_comparison_is_by_dotted_version() -> None:
    assert firmware_at_least("1.10.0", "1.9.3"), "10 > 9 as numbers, not as text"
    assert firmware_at_least("1.2", "1.2.0") and firmware_at_least("2", "1.99.99")
    assert not firmware_at_least("1.1.9", "1.2.0")
    assert parse_version(" 3.0.12 ") == (3, 0, 12)
    with pytest.raises(ValueError, match="not a dotted version"):
        parse_version("1.2-beta")
    entry = load_inventory(SHIPPED).get("example-force-plate-amplifier")
    assert entry is not None
    assert entry.firmware_ok("1.2.0") and not entry.firmware_ok("1.1.0")
    assert not entry.firmware_ok(None) and not entry.firmware_ok("garbage")
