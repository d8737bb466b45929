"""The player's frames to look at (:func:`labrig.domain.corrections.suspicious_frames`, on the
tracks in force): a jump, a gap, a filled stretch, a track lost before the end (a rig's 3-D
result: a reprojection error over its limit, a gap of a marker's 3-D positions, listed as given),
listed with Previous / Next (P / N on the video) and a count of those not yet shown since the list
was made.

Threading contract: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from labrig.domain.corrections import Suspicious, Track, suspicious_frames
from labrig.review import Overlay

NOTHING = "nothing to look at: no jumps, gaps or losses"


class LookBar(QWidget):
    """See the module docstring; :attr:`go` asks the player to show a frame."""

    go = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.suspicious: list[Suspicious] = []
        self._seen: set[int] = set()  # indices into ``suspicious`` shown since it was made
        self._nothing = NOTHING
        self.position = 0  # the frame the player shows
        self.look_box = QComboBox()
        self.look_box.setObjectName("playerSuspicious")
        self.look_box.setToolTip(
            "Frames to look at: jumps, gaps, filled stretches, lost tracks (a rig's 3-D "
            "markers: reprojection errors, gaps)"
        )
        self.look_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.look_box.setMinimumContentsLength(30)
        self.look_box.activated.connect(self._look)
        self.previous_button = QPushButton("Previous")
        self.previous_button.setToolTip("The previous frame to look at (P)")
        self.previous_button.clicked.connect(self.previous)
        self.next_button = QPushButton("Next")
        self.next_button.setToolTip("The next frame to look at (N)")
        self.next_button.clicked.connect(self.next)
        for b in (self.previous_button, self.next_button):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the video
        self.left_label = QLabel("")
        self.left_label.setObjectName("playerLeft")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("To look at:"))
        row.addWidget(self.look_box, 1)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(self.left_label)

    def clear(self) -> None:
        self.suspicious, self._seen = [], set()
        self.look_box.clear()
        self.left_label.clear()

    def list_for(self, tracks: Mapping[str, Track], last_frame: int) -> None:
        """List the frames to look at in ``tracks``; none is counted as shown yet."""
        self.list_these(suspicious_frames(tracks, last_frame=last_frame))

    def list_overlays(
        self, overlays: Sequence[Overlay], last_frame: int, rig: Sequence[Suspicious] | None
    ) -> None:
        """The frames to look at: ``rig``'s (a rig's 3-D result's, as given), else those in the
        ``overlays``' tracks in force."""
        if rig is not None:
            self.list_these(rig, "nothing to look at: no gaps or reprojection errors in 3-D")
            return
        tracks = {o.track_id: o.effective for o in overlays if o.effective is not None}
        self.list_for(tracks, last_frame)

    def list_these(self, suspicious: Sequence[Suspicious], nothing: str = NOTHING) -> None:
        """List ``suspicious`` (in frame order); none is counted as shown yet. ``nothing``: what
        the count says when there is none."""
        self.suspicious, self._nothing = list(suspicious), nothing
        self._seen = set()
        self.look_box.clear()
        for s in self.suspicious:
            self.look_box.addItem(f"frame {s.frame} · track {s.track_id}: {s.why}")
        self._count_left()

    def shown(self, frame: int) -> None:
        """The player shows ``frame``: those listed at it are counted as looked at."""
        self.position = frame
        at = {i for i, s in enumerate(self.suspicious) if s.frame == frame}
        if at - self._seen:
            self._seen |= at
            self._count_left()

    def _count_left(self) -> None:
        total = len(self.suspicious)
        left = total - len(self._seen)
        self.left_label.setText(f"{left} of {total} left" if total else self._nothing)

    @Slot()
    def next(self) -> None:
        """The next frame to look at after the one shown (from the start after the last)."""
        following = [i for i, s in enumerate(self.suspicious) if s.frame > self.position]
        self._look(following[0] if following else 0)

    @Slot()
    def previous(self) -> None:
        before = [i for i, s in enumerate(self.suspicious) if s.frame < self.position]
        self._look(before[-1] if before else len(self.suspicious) - 1)

    @Slot(int)
    def _look(self, index: int) -> None:
        if not 0 <= index < len(self.suspicious):
            return
        self.look_box.setCurrentIndex(index)
        self.go.emit(self.suspicious[index].frame)
