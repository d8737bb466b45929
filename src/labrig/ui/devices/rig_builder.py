"""The Devices page's rigs: the rigs there are, and a rig made by picking verified devices.

A technician selects a device in the list above (in the mode it was verified in), names its place
(front, left …) and adds it; two or more make a rig, saved under a name. Devices are added only
once verified, so saving does not probe them again; the service still refuses a rig that cannot
be (a name taken, a device twice).

Threading contract: GUI thread only; reading, saving and removing rigs run on the page's pool thread
(:class:`~labrig.ui.shell.background.BackgroundCalls`).
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QVBoxLayout,
    QWidget,
)

from labrig.capture import CaptureService, Verification
from labrig.capture.rigs import DeviceSpec, Rig
from labrig.ui.common.device_picker import DevicePicker
from labrig.ui.common.widgets import fixed_lines, message_label, named_button
from labrig.ui.shell.background import BackgroundCalls, say_error


class RigBuilder(QGroupBox):
    """The rigs stored through ``capture``, and a new one made of ``picker``'s devices."""

    def __init__(
        self, capture: CaptureService, picker: DevicePicker, parent: QWidget | None = None
    ) -> None:
        super().__init__("Rigs: cameras and instruments recorded together", parent)
        self._capture, self._picker = capture, picker
        self._calls = BackgroundCalls(1, self)
        self.chosen: list[tuple[DeviceSpec, Verification]] = []
        self.rigs: list[Rig] = []
        self.rig_list = QListWidget()
        self.rig_list.setObjectName("rigList")
        self.remove_button = named_button("removeRigButton", "Remove rig")
        self.name = QLineEdit()
        self.name.setObjectName("rigName")
        self.name.setPlaceholderText("e.g. gait-lab")
        self.place = QLineEdit()
        self.place.setObjectName("rigPlace")
        self.place.setPlaceholderText("front, left … (optional)")
        self.add_button = named_button("addToRigButton", "Add the selected device")
        self.take_out_button = named_button("takeOutButton", "Take out")
        self.devices = QListWidget()
        self.devices.setObjectName("newRigDevices")
        self.save_button = named_button("saveRigButton", "Save rig")
        self.message = fixed_lines(message_label("rigMessage"), 2)
        self._build()
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.take_out_button.clicked.connect(self._on_take_out_button_clicked)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)

    def _build(self) -> None:
        existing = QVBoxLayout()
        existing.addWidget(QLabel("Rigs"))
        existing.addWidget(self.rig_list, 1)
        existing.addWidget(self.remove_button)
        form = QGridLayout()
        form.addWidget(QLabel("New rig name"), 0, 0)
        form.addWidget(self.name, 0, 1)
        form.addWidget(QLabel("Place of the device"), 1, 0)
        form.addWidget(self.place, 1, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.take_out_button)
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        new = QVBoxLayout()
        new.addLayout(form)
        new.addLayout(buttons)
        new.addWidget(self.devices, 1)
        columns = QHBoxLayout()
        columns.addLayout(existing, 2)
        columns.addLayout(new, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(columns, 1)
        layout.addWidget(self.message)

    # -- the rigs there are ----------------------------------------------------------------------

    def load(self) -> None:
        self._calls.submit(self._capture.rigs, self._show_rigs, self._say)

    def _show_rigs(self, rigs: list[Rig]) -> None:
        self.rigs = rigs
        self.rig_list.clear()
        for rig in rigs:
            places = ", ".join(d.place for d in rig.devices)
            built = " · built in" if rig.builtin else ""
            self.rig_list.addItem(f"{rig.name}: {len(rig.devices)} devices ({places}){built}")

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self.rig_list.currentRow()
        if not 0 <= row < len(self.rigs):
            self.message.setText("Select a rig in the list to remove it.")
            return
        name, capture = self.rigs[row].name, self._capture

        def remove() -> str:
            capture.remove_rig(name)
            return name

        self._calls.submit(remove, self._on_removed, self._say)

    def _on_removed(self, name: str) -> None:
        self.message.setText(f"Rig {name} removed; its recordings and their attempts stay.")
        self.load()

    # -- a new rig -------------------------------------------------------------------------------

    @Slot()
    def _on_add_button_clicked(self) -> None:
        choice = self._picker.choice()
        if choice is None:
            self.message.setText("Select a device in the list above, then add it.")
            return
        verdict = choice.verdict
        stream = verdict.stream if verdict is not None and verdict.ok else None
        if stream is None and (not choice.previewable or choice.usable_mode is None):
            self.message.setText(
                f"{choice.device.name} is not verified in a mode that gives pictures or samples; "
                "a rig is made of verified cameras and instruments."
            )
            return
        assert verdict is not None
        place = self.place.text().strip() or str(
            choice.device.descriptors.get("place") or f"cam{len(self.chosen) + 1}"
        )
        # an instrument streams in the mode it announced when verified
        spec = DeviceSpec(choice.device.device_id, None if stream else choice.usable_mode, place)
        if any(s.device_id == spec.device_id for s, _ in self.chosen):
            self.message.setText(f"{choice.device.name} is in the new rig already.")
            return
        self.chosen.append((spec, verdict))
        mode = stream or spec.mode
        self.devices.addItem(f"{place}: {choice.device.name} at {mode.label() if mode else ''}")
        self.place.clear()
        self.message.setText(
            f"{len(self.chosen)} devices in the new rig."
            + (" Add at least one more." if len(self.chosen) < 2 else " Name it and save.")
        )

    @Slot()
    def _on_take_out_button_clicked(self) -> None:
        row = self.devices.currentRow()
        if 0 <= row < len(self.chosen):
            del self.chosen[row]
            self.devices.takeItem(row)

    @Slot()
    def _on_save_button_clicked(self) -> None:
        name, capture = self.name.text().strip(), self._capture
        specs = [s for s, _ in self.chosen]
        verified = {s.device_id: v for s, v in self.chosen}
        self.save_button.setEnabled(False)
        self.message.setText(f"Saving the rig {name}…")
        self._calls.submit(
            lambda: capture.add_rig(name, specs, verified), self._on_saved, self._on_save_failed
        )

    def _on_saved(self, rig: Rig) -> None:
        self.save_button.setEnabled(True)
        self.chosen = []
        self.devices.clear()
        self.name.clear()
        self.message.setText(
            f"Rig {rig.name} saved: {len(rig.devices)} devices. Record it on the Capture screen "
            "(A rig), or with 'labrig record --rig'."
        )
        self.load()

    def _on_save_failed(self, error: Exception) -> None:
        self.save_button.setEnabled(True)
        self._say(error)

    def _say(self, error: Exception) -> None:
        self.message.setText(f"Not done: {say_error(error)}")
