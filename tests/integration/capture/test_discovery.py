"""Discovery of every device kind. USB instruments go through a real pyusb stack down to a backend
object (pyusb's own ``IBackend`` extension point), so ``usb.core.find`` and
``usb.util.get_string`` run for real."""

from __future__ import annotations

import glob
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from labrig.capture.devices import DeviceKind
from labrig.capture.discovery import (
    UNREADABLE_PERMISSION,
    DiscoverySettings,
    bcd_version,
    discover,
    discover_ip,
    discover_usb,
    discover_uvc,
    discover_watch_folders,
)
from labrig.capture.inventory import load_inventory
from labrig.capture.virtual import VIRTUAL_CAMERA_NAME
from tests.contract import REPO
from tests.support.usb import FakeUsbBackend, FakeUsbDevice

SHIPPED = REPO / "resources" / "inventory.json"


def amplifier(bcd: int = 0x0121, **kw: Any) -> FakeUsbDevice:
    """The inventory's example instrument (1209:0001, firmware ≥ 1.2.0 required)."""
    return FakeUsbDevice(
        0x1209, 0x0001, bcd, "Example Labs", "Force plate amplifier FPA-4", "FPA4-00172", **kw
    )


def multimeter(**kw: Any) -> FakeUsbDevice:
    """A device the inventory does not list."""
    return FakeUsbDevice(
        0x1209,
        0x0002,
        0x0300,
        "Bench Co",
        "Bench multimeter",
        "BM-9",
        address=7,
        ports=(3, 1),
        **kw,
    )


def test_usb_instruments_are_read_through_a_pyusb_backend() -> None:
    backend = FakeUsbBackend([amplifier(), multimeter()])
    devices, problems = discover_usb(backend)
    assert problems == []
    amp, meter = devices
    assert (amp.kind, amp.vid_pid, amp.serial, amp.name) == (
        DeviceKind.USB_INSTRUMENT,
        "1209:0001",
        "FPA4-00172",
        "Force plate amplifier FPA-4",
    )
    assert amp.device_id == "usb:1209:0001:FPA4-00172"
    assert amp.firmware == "1.2.1"
    assert amp.descriptors["manufacturer"] == "Example Labs"
    assert meter.address == "1:7" and meter.descriptors["location"] == "1-3.1"
    assert backend.open_handles == 0, "every handle opened to read strings is closed again"

    inventory = load_inventory(SHIPPED)
    matched = inventory.match(amp)
    assert matched is not None and matched.id == "example-force-plate-amplifier"
    assert inventory.match(meter) is None


def test_hubs_are_not_instruments() -> None:
    hub = FakeUsbDevice(
        0x1D6B, 0x0002, 0x0515, "Linux Foundation", "root hub", None, device_class=0x09
    )
    devices, _ = discover_usb(FakeUsbBackend([hub, multimeter()]))
    assert [d.vid_pid for d in devices] == ["1209:0002"]


def test_unreadable_strings_are_recorded_not_fatal() -> None:
    devices, problems = discover_usb(FakeUsbBackend([amplifier(denied=True), multimeter()]))
    amp = devices[0]
    assert amp.descriptors["product"] == UNREADABLE_PERMISSION
    assert amp.descriptors["serial"] == UNREADABLE_PERMISSION
    assert amp.serial is None and amp.name == "USB device 1209:0001"
    assert amp.device_id == "usb:1209:0001@1-2", (
        "without a serial the id falls back to the port it is plugged in"
    )
    assert amp.firmware == "1.2.1", "the device descriptor needs no permission"
    assert [p.code for p in problems] == ["LABRIG_USB_STRINGS_UNREADABLE"]
    assert "udev" in problems[0].message
    assert devices[1].serial == "BM-9", "one unreadable device does not stop the next"


def test_one_kind_failing_does_not_hide_the_others(tmp_path: Path) -> None:
    settings = DiscoverySettings(ip_cameras=["http://cam.lab/video.mjpg"], watch_folders=[tmp_path])
    report = discover(settings, usb_backend=FakeUsbBackend([], fail_enumeration=True))
    kinds = {d.kind for d in report}
    assert {DeviceKind.IP, DeviceKind.WATCH_FOLDER, DeviceKind.VIRTUAL} <= kinds
    usb_problems = report.problems_for(DeviceKind.USB_INSTRUMENT)
    assert [p.code for p in usb_problems] == ["LABRIG_DISCOVERY_FAILED"]
    assert "Input/Output Error" in usb_problems[0].message


def test_discover_lists_every_kind(tmp_path: Path) -> None:
    folder = tmp_path / "force-plate-exports"
    folder.mkdir()
    settings = DiscoverySettings(
        ip_cameras=["http://cam.lab:8080/video.mjpg"], watch_folders=[folder]
    )
    report = discover(settings, usb_backend=FakeUsbBackend([amplifier(), multimeter()]))
    assert report.problems == []
    ids = [d.device_id for d in report]
    assert len(ids) == len(set(ids)), "device ids are unique"
    assert report.devices == list(report)
    by_kind = {k: [d for d in report if d.kind == k] for k in DeviceKind}
    assert len(by_kind[DeviceKind.USB_INSTRUMENT]) == 2
    assert [d.address for d in by_kind[DeviceKind.IP]] == ["http://cam.lab:8080/video.mjpg"]
    assert by_kind[DeviceKind.WATCH_FOLDER][0].descriptors == {"exists": True, "writable": True}


def test_the_virtual_camera_and_the_virtual_rig_are_always_listed_once() -> None:
    # one camera whose scene is switched (markers, the board held up, the board on the plane), so
    # a calibration from its board binds to the camera that records the attempts; then the
    # virtual rig's twelve cameras, each named with its place around the volume, and its force plate
    report = discover(DiscoverySettings(), usb_backend=FakeUsbBackend([]))
    virtual = [d for d in report if d.kind == DeviceKind.VIRTUAL]
    assert [d.device_id for d in virtual] == ["virtual:markers"] + [
        f"virtual:rig-{n}" for n in range(1, 13)
    ]
    assert virtual[0].name == VIRTUAL_CAMERA_NAME
    assert virtual[1].name == "Labrig virtual rig camera 1 (front)"
    assert virtual[8].name == "Labrig virtual rig camera 8 (front-left)"
    assert virtual[12].name == "Labrig virtual rig camera 12 (left-high)"
    [plate] = [d for d in report if d.kind == DeviceKind.VIRTUAL_INSTRUMENT]
    assert (plate.device_id, plate.name) == ("virtual:plate-1", "Labrig virtual force plate")


def test_uvc_discovery_on_this_machine_is_clean() -> None:
    cameras = discover_uvc()
    assert all(c.kind == DeviceKind.UVC and c.address.isdigit() for c in cameras)
    if sys.platform.startswith("linux") and not glob.glob("/dev/video*"):
        assert cameras == [], "no /dev/video* here, so no camera"
    report = discover(DiscoverySettings(), usb_backend=FakeUsbBackend([]))
    assert report.problems_for(DeviceKind.UVC) == []


def test_default_usb_backend_runs_on_this_machine() -> None:
    # libusb-package's libusb1; this machine may have no USB bus at all
    report = discover(DiscoverySettings())
    assert report.problems_for(DeviceKind.USB_INSTRUMENT) == []
    assert "virtual:markers" in {d.device_id for d in report}


def test_missing_watch_folder_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    missing, a_file = tmp_path / "not-mounted", tmp_path / "file.txt"
    a_file.write_text("x")
    report = discover(
        DiscoverySettings(watch_folders=[missing, a_file]), usb_backend=FakeUsbBackend([])
    )
    folders = [d for d in report if d.kind == DeviceKind.WATCH_FOLDER]
    assert [d.descriptors["exists"] for d in folders] == [False, False]
    problems = report.problems_for(DeviceKind.WATCH_FOLDER)
    assert [p.code for p in problems] == ["LABRIG_WATCH_FOLDER_MISSING"] * 2
    assert str(missing) in problems[0].message and "does not exist" in problems[0].message
    assert "is a file" in problems[1].message
    _, direct = discover_watch_folders([missing])
    assert len(direct) == 1


def test_ip_camera_credentials_never_leave_the_address(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = "http://admin:s3cret@cam.lab:8080/video.mjpg?user=admin&pwd=hunter2"
    settings = DiscoverySettings(ip_cameras=[url, "ftp://op:hunter3@files.lab/x"])
    report = discover(settings, usb_backend=FakeUsbBackend([]))
    (cam,) = [d for d in report if d.kind == DeviceKind.IP]
    assert cam.address == url, "the address keeps what is needed to open the stream"
    assert cam.device_id == "ip:http://cam.lab:8080/video.mjpg?user=admin&pwd=***"
    shown = " ".join(
        [cam.device_id, cam.name, str(cam.descriptors), caplog.text]
        + [p.message for p in report.problems]
    )
    for secret in ("s3cret", "hunter2", "hunter3"):
        assert secret not in shown
    assert [p.code for p in report.problems] == ["LABRIG_IP_URL_INVALID"]


def test_ip_device_id_is_stable_without_credentials() -> None:
    (a,), _ = discover_ip(["http://admin:one@cam.lab/video.mjpg"])
    (b,), _ = discover_ip(["http://admin:two@cam.lab/video.mjpg"])
    assert a.device_id == b.device_id == "ip:http://cam.lab/video.mjpg"


@pytest.mark.parametrize(
    ("bcd", "version"), [(0x0100, "1.0.0"), (0x0121, "1.2.1"), (0x1234, "12.3.4")]
)
def test_bcd_device_reads_as_a_dotted_version(bcd: int, version: str) -> None:
    assert bcd_version(bcd) == version
