"""Verification against real sources: the paced virtual camera, a real MJPEG camera on 127.0.0.1, a
real pyusb stack over a backend object. Every refusal code is produced by the situation it names."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from labrig.capture.devices import DeviceInfo, DeviceKind
from labrig.capture.discovery import (
    discover_ip,
    discover_usb,
    discover_virtual,
    discover_watch_folders,
)
from labrig.capture.inventory import Inventory, load_inventory
from labrig.capture.sources import FrameSource, Image, Mode
from labrig.capture.verify import (
    DeviceRefusedError,
    Refusal,
    Verification,
    default_open_source,
    verify,
)
from labrig.capture.virtual import VirtualCamera
from labrig.domain.events import spec_for
from tests.contract import REPO
from tests.integration.capture.test_discovery import FakeUsbBackend, amplifier
from tests.support.mjpeg_server import MjpegServer

SHIPPED = REPO / "resources" / "inventory.json"
HD30 = Mode(1280, 720, 30.0)
VGA30_MJPG = Mode(640, 480, 30.0, "MJPG")


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return load_inventory(SHIPPED)


@pytest.fixture
def markers() -> DeviceInfo:
    return discover_virtual()[0]


def ip_device(url: str) -> DeviceInfo:
    (device,), problems = discover_ip([url])
    assert problems == []
    return device


def assert_valid_event(result: Verification) -> None:
    spec = spec_for("capture.device.connected")
    assert spec is not None
    spec.validate(result.to_event_payload())


class FixedModeSource:
    """A camera that ignores the mode it is asked for and streams its own (as many
    cheap cameras do)."""

    def __init__(self, inner: FrameSource, mode: Mode) -> None:
        self.inner, self.mode = inner, mode

    def open(self, mode: Mode | None = None) -> Mode:
        self.inner.open(self.mode)
        return mode or self.mode  # and claims it did what was asked

    def read(self, timeout_s: float = 2.0) -> Image | None:
        return self.inner.read(timeout_s)

    def close(self) -> None:
        self.inner.close()


def opener(make: Callable[[], FrameSource]) -> Callable[[DeviceInfo], FrameSource]:
    def open_source(device: DeviceInfo) -> FrameSource:
        return make()

    return open_source


def never_open(device: DeviceInfo) -> FrameSource:
    raise AssertionError("a device refused by the inventory must not be opened")


def test_virtual_camera_passes_at_its_real_rate(inventory: Inventory, markers: DeviceInfo) -> None:
    result = verify(markers, HD30, inventory)
    assert result.ok, result.reason
    assert (result.reason_code, result.entry_id) == (None, "labrig-virtual-camera")
    assert result.measured is not None
    assert (result.measured.width, result.measured.height) == (1280, 720)
    assert 27.0 <= result.measured.fps <= 33.0
    payload = result.to_event_payload()
    assert payload["mode"] == {"width": 1280, "height": 720, "fps": 30.0, "pixel_format": "BGR"}
    assert (
        payload["device_id"] == "virtual:markers"
        and payload["inventory_entry"] == "labrig-virtual-camera"
    )
    assert_valid_event(result)


def test_ip_camera_passes_at_the_servers_rate(inventory: Inventory) -> None:
    with MjpegServer(fps=30.0, size=(640, 480), max_seconds=30.0) as server:
        result = verify(ip_device(server.url), VGA30_MJPG, inventory)
    assert result.ok, result.reason
    assert result.entry_id == "ip-mjpeg-http"
    assert result.measured is not None and (result.measured.width, result.measured.height) == (
        640,
        480,
    )
    assert 27.0 <= result.measured.fps <= 33.0
    assert_valid_event(result)


def test_unknown_model(inventory: Inventory) -> None:
    acme = DeviceInfo(
        "uvc:1234:5678:Acme Cam:/dev/video0",
        DeviceKind.UVC,
        "Acme Cam",
        "0",
        vendor_id=0x1234,
        product_id=0x5678,
    )
    result = verify(acme, HD30, inventory, never_open)
    assert (result.ok, result.reason_code) == (False, "LABRIG_DEVICE_UNKNOWN_MODEL")
    assert "Acme Cam (1234:5678)" in result.reason and "inventory" in result.reason
    with pytest.raises(DeviceRefusedError) as caught:
        result.to_event_payload()
    assert caught.value.code == "LABRIG_DEVICE_UNKNOWN_MODEL"


def test_mode_the_inventory_does_not_allow(inventory: Inventory, markers: DeviceInfo) -> None:
    result = verify(markers, Mode(800, 600, 30.0), inventory, never_open)
    assert result.reason_code == Refusal.MODE_UNSUPPORTED
    assert "800x600@30 BGR" in result.reason and "1280x720@30 BGR" in result.reason, (
        "names the allowed modes"
    )


def test_camera_slower_than_asked(inventory: Inventory, markers: DeviceInfo) -> None:
    slow = opener(lambda: FixedModeSource(VirtualCamera("markers"), Mode(1280, 720, 10.0)))
    result = verify(markers, HD30, inventory, slow)
    assert result.reason_code == Refusal.FPS_TOO_LOW, result.reason
    assert result.measured is not None and 9.0 <= result.measured.fps <= 11.0
    assert "instead of 30" in result.reason


def test_ip_camera_slower_than_asked(inventory: Inventory) -> None:
    with MjpegServer(fps=10.0, size=(640, 480), max_seconds=30.0) as server:
        result = verify(ip_device(server.url), VGA30_MJPG, inventory)
    assert result.reason_code == Refusal.FPS_TOO_LOW, result.reason
    assert result.measured is not None and 9.0 <= result.measured.fps <= 11.5


def test_camera_that_sends_nothing(inventory: Inventory, markers: DeviceInfo) -> None:
    result = verify(
        markers, HD30, inventory, opener(lambda: VirtualCamera("markers", fail_after=0))
    )
    assert result.reason_code == Refusal.NO_FRAMES
    assert result.measured is None and "sent no picture" in result.reason


def test_camera_pulled_during_the_probe(inventory: Inventory, markers: DeviceInfo) -> None:
    result = verify(
        markers, HD30, inventory, opener(lambda: VirtualCamera("markers", fail_after=8))
    )
    assert result.reason_code == Refusal.NO_FRAMES
    assert result.measured is not None and result.measured.frames == 8
    assert "sent 8 picture(s) and then stopped" in result.reason


def test_ip_camera_that_hangs(inventory: Inventory) -> None:
    with MjpegServer(fps=30.0, size=(640, 480), max_seconds=30.0) as server:
        device = ip_device(server.url)

        class GoesSilent(FixedModeSource):
            def open(self, mode: Mode | None = None) -> Mode:
                opened = self.inner.open(mode)
                server.go_silent()
                return opened

        result = verify(
            device,
            VGA30_MJPG,
            inventory,
            opener(lambda: GoesSilent(default_open_source(device), VGA30_MJPG)),
        )
    assert result.reason_code == Refusal.NO_FRAMES, result.reason


def test_frames_of_another_size(inventory: Inventory) -> None:
    with MjpegServer(fps=30.0, size=(640, 480), max_seconds=30.0) as server:
        result = verify(ip_device(server.url), Mode(1280, 720, 30.0, "MJPG"), inventory)
    assert result.reason_code == Refusal.FRAME_SIZE_MISMATCH, result.reason
    assert result.measured is not None and (result.measured.width, result.measured.height) == (
        640,
        480,
    )
    assert "sends 640×480 pictures although 1280×720 was asked" in result.reason


def test_source_that_ignores_the_size_asked(inventory: Inventory, markers: DeviceInfo) -> None:
    small = opener(lambda: FixedModeSource(VirtualCamera("markers"), Mode(640, 480, 30.0)))
    assert verify(markers, HD30, inventory, small).reason_code == Refusal.FRAME_SIZE_MISMATCH


@pytest.fixture
def closed_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    yield port  # nothing listens there any more


def test_nothing_listens_at_the_url(inventory: Inventory, closed_port: int) -> None:
    device = ip_device(f"http://admin:s3cret@127.0.0.1:{closed_port}/video.mjpg")
    result = verify(device, VGA30_MJPG, inventory)
    assert result.reason_code == Refusal.OPEN_FAILED, result.reason
    assert f"127.0.0.1:{closed_port}" in result.reason and "s3cret" not in result.reason


def test_instrument_firmware_too_old(inventory: Inventory) -> None:
    (old,), _ = discover_usb(FakeUsbBackend([amplifier(bcd=0x0110)]))
    result = verify(old, None, inventory, never_open)
    assert result.reason_code == Refusal.FIRMWARE_TOO_OLD
    assert "firmware 1.1.0; Labrig needs 1.2.0 or newer" in result.reason


def test_instrument_is_verified_by_match_and_presence(inventory: Inventory) -> None:
    (amp,), _ = discover_usb(FakeUsbBackend([amplifier(bcd=0x0121)]))
    result = verify(amp, None, inventory, never_open)
    assert result.ok and result.measured is None
    assert "presence only" in result.reason
    assert result.to_event_payload()["measured_fps"] == 0.0
    assert_valid_event(result)


def test_watch_folder_is_verified_by_presence(inventory: Inventory, tmp_path: Path) -> None:
    (present, missing), _ = discover_watch_folders([tmp_path, tmp_path / "not-mounted"])
    assert verify(present, None, inventory, never_open).ok
    refused = verify(missing, None, inventory, never_open)
    assert refused.reason_code == Refusal.OPEN_FAILED and "does not exist" in refused.reason


def test_refusal_codes_are_stable() -> None:
    assert {r.value for r in Refusal} == {
        "LABRIG_DEVICE_UNKNOWN_MODEL",
        "LABRIG_FIRMWARE_TOO_OLD",
        "LABRIG_MODE_UNSUPPORTED",
        "LABRIG_DEVICE_OPEN_FAILED",
        "LABRIG_NO_FRAMES",
        "LABRIG_FRAME_SIZE_MISMATCH",
        "LABRIG_FPS_TOO_LOW",
        "LABRIG_INSTRUMENT_PROTOCOL",
    }
