"""The panel over a result made under a calibration that has changed since: why (each flag's
reason, :mod:`labrig.results.flags`) and the one action that reprocesses it under the current
calibration (the page connects the button). Threading contract: GUI thread only."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from labrig.results import CalibrationFlag
from labrig.ui.common.palette import AMBER
from labrig.ui.common.widgets import message_label


class FlaggedPanel(QFrame):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("flaggedPanel")
        self.setStyleSheet(f"#flaggedPanel {{ border: 2px solid {AMBER}; border-radius: 4px; }}")
        self.reasons = message_label("flagReasons")
        self.reprocess_button = QPushButton("Reprocess under the current calibration")
        self.reprocess_button.setObjectName("reprocessButton")
        self.reprocess_button.setToolTip(
            "Analyse this attempt again as a new attempt of the same recordings, under the "
            "calibration current now; this result stays as it was"
        )
        self.message = message_label("reprocessMessage")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Made under a calibration that has changed</b>"))
        layout.addWidget(self.reasons)
        row = QHBoxLayout()
        row.addWidget(self.reprocess_button)
        row.addWidget(self.message, 1)
        layout.addLayout(row)

    def show_flags(
        self, flags: Sequence[CalibrationFlag], reanalysed_as: Sequence[int] = ()
    ) -> None:
        """Why the result is flagged; reprocessing is offered when a calibration is current, and
        says so when the attempt was analysed again already."""
        self.reasons.setText("\n".join(f"• {f.reason}" for f in flags))
        self.message.setText(
            "Already analysed again as attempt "
            + ", ".join(str(n) for n in reanalysed_as)
            + " of this session."
            if reanalysed_as
            else ""
        )
        self.reprocess_button.setEnabled(any(f.current_id for f in flags))
        self.show()
