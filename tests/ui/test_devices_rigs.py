"""The Devices page's rigs: a technician picks verified cameras, names their places and saves a
rig, which the Capture screen then offers; a bad rig is refused in words and nothing is stored."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from labrig.bootstrap import Services
from labrig.ui.app import Gui
from tests.ui.capture_helpers import LEFT, WAIT_MS, pick_device, shown_devices_page, wait_verified


def test_a_rig_is_made_of_verified_devices_on_the_devices_page(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    ui.window.resize(1280, 800)
    page = shown_devices_page(qtbot, ui)
    rigs = page.rigs
    qtbot.waitUntil(lambda: rigs.rig_list.count() == 1, timeout=WAIT_MS)
    assert rigs.rig_list.item(0).text().startswith("virtual: 4 devices (front, right, back, left)")

    for device_id, place in (("virtual:rig-1", ""), ("virtual:rig-3", "side")):
        pick_device(qtbot, page.picker, device_id)
        wait_verified(qtbot, page.picker, device_id)
        qtbot.keyClicks(rigs.place, place)
        qtbot.mouseClick(rigs.add_button, LEFT)
    assert [s.place for s, _ in rigs.chosen] == ["front", "side"]
    assert "Name it and save" in rigs.message.text()

    qtbot.mouseClick(rigs.save_button, LEFT)  # no name yet: refused, nothing stored
    qtbot.waitUntil(lambda: rigs.message.text().startswith("Not done:"), timeout=WAIT_MS)
    assert "cannot name a rig" in rigs.message.text()
    assert [r.name for r in services.capture.rigs()] == ["virtual"]

    qtbot.keyClicks(rigs.name, "pair")
    qtbot.mouseClick(rigs.save_button, LEFT)
    qtbot.waitUntil(lambda: rigs.message.text().startswith("Rig pair saved"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: rigs.rig_list.count() == 2, timeout=WAIT_MS)
    pair = {r.name: r for r in services.capture.rigs()}["pair"]
    assert [(d.place, d.device_id) for d in pair.devices] == [
        ("front", "virtual:rig-1"),
        ("side", "virtual:rig-3"),
    ]
    # the modes are those the cameras were verified in on this page
    assert [d.mode.label() for d in pair.devices] == ["640x360@30 BGR"] * 2

    rigs.rig_list.setCurrentRow(1)
    qtbot.mouseClick(rigs.remove_button, LEFT)
    qtbot.waitUntil(lambda: rigs.rig_list.count() == 1, timeout=WAIT_MS)
    assert [r.name for r in services.capture.rigs()] == ["virtual"]


def test_a_verified_force_plate_joins_a_rig_in_the_mode_it_announced(
    qtbot: QtBot, services: Services, ui: Gui
) -> None:
    ui.window.resize(1280, 800)
    page = shown_devices_page(qtbot, ui)
    rigs = page.rigs
    for device_id in ("virtual:rig-1", "virtual:plate-1"):
        pick_device(qtbot, page.picker, device_id)
        wait_verified(qtbot, page.picker, device_id)
        qtbot.mouseClick(rigs.add_button, LEFT)
    assert rigs.devices.item(1).text() == "plate: Labrig virtual force plate at 6 ch @ 1000 Hz"
    qtbot.keyClicks(rigs.name, "jump")
    qtbot.mouseClick(rigs.save_button, LEFT)
    qtbot.waitUntil(lambda: rigs.message.text().startswith("Rig jump saved"), timeout=WAIT_MS)
    jump = {r.name: r for r in services.capture.rigs()}["jump"]
    assert [(d.place, d.mode.label()) for d in jump.devices] == [
        ("front", "640x360@30 BGR"),
        ("plate", "6 ch @ 1000 Hz"),
    ]
