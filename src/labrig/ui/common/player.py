"""The review player: every camera of a result's attempt side by side, stepped frame by frame by
stored index, with the tracked markers drawn over the first camera.

Keys (with the player focused): ← / → a frame back / on, Home / End the first / last frame, Space
or K play / pause, L play on (faster each press, up to 4×), J play back, N / P the next / previous
frame to look at, I / O the first / last frame of a range to correct. The slider and the frame
field seek; :meth:`PlayerWidget.seek` lets a plot seek too, and :attr:`PlayerWidget.frame_shown`
tells it which frame is on screen.

Frames to look at: :mod:`labrig.ui.common.look_bar`, under the controls.

Overlays, on the first camera: each track's effective position at the frame, a circle in its
plot colour with its id; its trail over ±15 frames; a frame a correction filled drawn dashed; the
automatic position, where a correction moved it, as a grey cross. A rig's 3-D result, on every
camera: each marker's detection beside its 3-D point reprojected (:mod:`labrig.ui.common.marks`).
With :meth:`set_editable`, a 2-D track's marker dragged on the first camera is reported by
:attr:`PlayerWidget.marker_moved` in the tracks' px (undistorted back through the lens when they
were measured undistorted).

Threading contract: GUI thread only. Frames are decoded on one pool thread
(:class:`~labrig.ui.shell.background.BackgroundCalls` through
:class:`~labrig.ui.shell.latest.Latest`): a burst of seeks (a dragged slider) decodes the frame
asked for last, never a queue of stale ones; while playing, a tick whose frame is still decoding is
skipped, so a slow disk drops frames from the screen, never the pace: playing is paced by a
clock against the frames' recorded times, not by counting ticks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from labrig.capture import FrameReader
from labrig.review import Overlay, ResultMedia
from labrig.ui.common.frame_view import FrameView, picture
from labrig.ui.common.look_bar import LookBar
from labrig.ui.common.pace import Pace
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.latest import Latest

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)


#: camera views side by side; more go on further rows
VIEWS_ABREAST = 2


class PlayerWidget(QWidget):
    """See the module docstring."""

    frame_shown = Signal(int)  # the first camera's frame now on screen
    # a marker dragged on the first camera: track id, frame, x, y in the tracks' px
    marker_moved = Signal(str, int, float, float)
    range_marked = Signal(str, int)  # "from" (I) or "to" (O), and the frame shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("player")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.media: ResultMedia | None = None
        self.position = 0  # the frame asked for last
        self.shown_index: int | None = None  # the first camera's frame on screen
        self.shown_frames: list[np.ndarray | None] = []  # each camera's decoded picture, BGR
        self._readers: list[FrameReader] = []  # owned by the decoding thread
        self._reader_of: str | None = None
        self._decoding = BackgroundCalls(threads=1, parent=self)
        self._latest = Latest(self._decoding)
        self._loads = Latest(self._decoding)  # reading what to show: after it, its frames
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._on_tick)
        self._pace = Pace()
        # the cameras two abreast (a 4-camera rig: 2 x 2), so the player never needs more than two
        # views' width beside the attempts' list
        self.views_grid = QGridLayout()
        self.views: list[FrameView] = []
        self.status = QLabel("No recording to show.")
        self.status.setObjectName("playerStatus")
        self.editable = False  # markers may be dragged (the reviewer may correct)
        self._build_controls()

    def _build_controls(self) -> None:
        def button(text: str, tip: str, slot: Any) -> QPushButton:
            b = QPushButton(text)
            b.setToolTip(tip)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(slot)
            return b

        self.first_button = button("First", "First frame (Home)", lambda: self.seek(0))
        self.back_button = button("◀", "A frame back (←)", lambda: self.step(-1))
        self.play_button = button("Play", "Play or pause (Space, K)", self.toggle)
        self.play_button.setMinimumWidth(70)
        self.on_button = button("▶", "A frame on (→)", lambda: self.step(1))
        self.last_button = button("Last", "Last frame (End)", lambda: self.seek(self.last))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("playerSlider")
        self.slider.valueChanged.connect(self._on_slider)
        self.frame_box = QSpinBox()
        self.frame_box.setObjectName("playerFrame")
        self.frame_box.setToolTip("The first camera's stored frame index")
        self.frame_box.editingFinished.connect(lambda: self.seek(self.frame_box.value()))
        self.speed_box = QComboBox()
        self.speed_box.setToolTip("Playing speed")
        for speed in SPEEDS:
            self.speed_box.addItem(f"{speed:g}×", speed)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_box.currentIndexChanged.connect(
            lambda i: self._set_speed(float(self.speed_box.itemData(i)))
        )
        controls = QHBoxLayout()
        for w in (self.first_button, self.back_button, self.play_button, self.on_button):
            controls.addWidget(w)
        controls.addWidget(self.last_button)
        controls.addWidget(self.slider, 1)
        controls.addWidget(QLabel("Frame"))
        controls.addWidget(self.frame_box)
        controls.addWidget(self.speed_box)
        self.looking = LookBar()
        self.looking.go.connect(self._on_look)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.views_grid, 1)
        layout.addLayout(controls)
        layout.addWidget(self.looking)
        layout.addWidget(self.status)
        self._enable(False)

    # -- what is shown -------------------------------------------------------------------------

    @property
    def last(self) -> int:
        return max(self.media.frame_count - 1, 0) if self.media is not None else 0

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    @property
    def busy(self) -> bool:
        """Reading a result's recording, or decoding a frame."""
        return self._latest.busy or self._loads.busy

    def load(
        self,
        read: Callable[[], ResultMedia],
        *,
        keep_frame: bool,
        wanted: Callable[[ResultMedia], bool],
        then: Callable[[ResultMedia], None] | None = None,
    ) -> None:
        """Read what to show with ``read`` off the GUI thread (a newer load overtakes it), then
        show it if ``wanted`` still says so: with ``keep_frame``, when it is the result on screen,
        only its tracks are replaced (after a correction); else from its first frame. ``then``
        runs after it is shown."""

        def loaded(media: ResultMedia) -> None:
            if not wanted(media):
                return  # another result was chosen meanwhile
            same = self.media is not None and self.media.result_id == media.result_id
            if keep_frame and same:
                if media.rig_overlays is None:  # a rig's markers do not change with revisions
                    self.set_overlays(media.overlays)
            else:
                self.set_media(media)
            if then is not None:
                then(media)

        self._loads.request(
            read,
            loaded,
            lambda error: self.status.setText(f"Could not open the recording: {say_error(error)}"),
        )

    def set_media(self, media: ResultMedia | None) -> None:
        """Show ``media`` (None: nothing), from its first frame."""
        self.pause()
        self.media = media
        for view in self.views:
            self.views_grid.removeWidget(view)
            view.deleteLater()
        self.views = []
        self.shown_index, self.shown_frames = None, []
        self.looking.clear()
        if media is None or not media.cameras:
            self._enable(False)
            self.status.setText("No recording to show.")
            return
        for n, (camera, overlays) in enumerate(
            zip(media.cameras, media.overlays_by_camera, strict=True)
        ):
            view = FrameView(f"camera {n + 1}")
            view.setToolTip(f"{camera.device_id}, {camera.width}×{camera.height}")
            view.overlays = overlays
            if n == 0:
                view.editable = self.editable
                view.dragged.connect(self._on_dragged)
            self.views.append(view)
            self.views_grid.addWidget(view, *divmod(n, VIEWS_ABREAST))
        self.slider.blockSignals(True)
        self.slider.setRange(0, self.last)
        self.slider.blockSignals(False)
        self.frame_box.setRange(0, self.last)
        self._enable(True)
        self._list_suspicious()
        self.seek(0)

    def set_overlays(self, overlays: Sequence[Overlay]) -> None:
        """New tracks to draw (after a correction), the frame kept."""
        if self.views:
            self.views[0].overlays = overlays
            self.views[0].update()
            self._list_suspicious()

    def set_editable(self, editable: bool) -> None:
        """Whether markers on the first camera may be dragged to a new position."""
        self.editable = editable
        if self.views:
            self.views[0].editable = editable

    @Slot(str, int, float, float)
    def _on_dragged(self, track_id: str, frame: int, x: float, y: float) -> None:
        if self.media is not None:
            self.marker_moved.emit(track_id, frame, *self.media.tracked_px(x, y))

    def _enable(self, on: bool) -> None:
        for w in (
            self.first_button,
            self.back_button,
            self.play_button,
            self.on_button,
            self.last_button,
            self.slider,
            self.frame_box,
            self.speed_box,
            self.looking,
        ):
            w.setEnabled(on)

    def _list_suspicious(self) -> None:
        overlays = self.views[0].overlays if self.views else ()
        rig = self.media.rig_looks if self.media is not None else None
        self.looking.list_overlays(overlays, self.last, rig)

    @Slot(int)
    def _on_look(self, frame: int) -> None:
        self.pause()
        self.seek(frame)

    # -- moving --------------------------------------------------------------------------------

    def seek(self, index: int) -> None:
        """Show the first camera's frame ``index`` (clamped), and the others' at its time; while
        playing, play on from there."""
        self._show(index)
        if self.playing:
            self._rebase()

    def _show(self, index: int) -> None:
        media = self.media
        if media is None:
            return
        self.position = min(max(int(index), 0), self.last)
        wanted = media.frames_at(self.position)
        self._latest.request(
            lambda: self._decode(media, wanted),
            lambda frames: self._on_decoded(media, wanted, frames),
            self._on_failed,
        )

    def step(self, frames: int) -> None:
        self.pause()
        self.seek(self.position + frames)

    @Slot()
    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play(1)

    def play(self, direction: int) -> None:
        if self.media is None:
            return
        if direction > 0 and self.position >= self.last:
            self.seek(0)  # from the start again, as a video player does
        self._pace.direction = direction
        self._rebase()
        # ticks twice a frame period: the frame due is shown within half a period of its time
        self.timer.start(max(5, round(500 / (self.media.fps * self._pace.speed))))
        self.play_button.setText("Pause")

    def pause(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def _set_speed(self, speed: float) -> None:
        self._pace.speed = speed
        if self.playing:
            self.play(self._pace.direction)

    def _rebase(self) -> None:
        """Pace playing from the frame asked for last, from now."""
        if self.media is not None and self.media.cameras:
            self._pace.start(self.media.cameras[0].times_s, self.position)

    @Slot()
    def _on_tick(self) -> None:
        media = self.media
        if media is None or not media.cameras:
            self.pause()
            return
        wanted = min(self._pace.due(media.cameras[0].times_s), self.last)
        if wanted == self.position:
            ends = self.last if self._pace.direction > 0 else 0
            if wanted == ends:
                self.pause()
            return
        if self._latest.busy:
            return  # still decoding the frame before: this one is dropped, the pace kept
        self._show(wanted)

    @Slot(int)
    def _on_slider(self, value: int) -> None:
        if value != self.position:
            self.seek(value)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Left:
            self.step(-1)
        elif key == Qt.Key.Key_Right:
            self.step(1)
        elif key == Qt.Key.Key_Home:
            self.pause()
            self.seek(0)
        elif key == Qt.Key.Key_End:
            self.pause()
            self.seek(self.last)
        elif key in (Qt.Key.Key_Space, Qt.Key.Key_K):
            self.toggle()
        elif key == Qt.Key.Key_L:
            if self.playing and self._pace.direction > 0:
                faster = [s for s in SPEEDS if s > self._pace.speed]
                if faster:
                    self.speed_box.setCurrentIndex(SPEEDS.index(faster[0]))
            else:
                self.play(1)
        elif key == Qt.Key.Key_J:
            self.play(-1)
        elif key == Qt.Key.Key_N:
            self.looking.next()
        elif key == Qt.Key.Key_P:
            self.looking.previous()
        elif key in (Qt.Key.Key_I, Qt.Key.Key_O):
            self.range_marked.emit("from" if key == Qt.Key.Key_I else "to", self.position)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    # -- decoding (pool thread) and showing (GUI thread) -----------------------------------------

    def _decode(self, media: ResultMedia, wanted: list[int | None]) -> list[Any]:
        if self._reader_of != media.result_id:
            for reader in self._readers:
                reader.close()
            self._readers, self._reader_of = media.readers(), media.result_id
        return [
            None if index is None or index >= reader.frame_count else picture(reader.frame(index))
            for reader, index in zip(self._readers, wanted, strict=True)
        ]

    def _on_decoded(self, media: ResultMedia, wanted: list[int | None], frames: list[Any]) -> None:
        if media is not self.media:
            return  # another result was chosen meanwhile
        self.shown_frames = [None if f is None else f[0] for f in frames]
        for view, index, frame in zip(self.views, wanted, frames, strict=True):
            view.show_frame(None if frame is None else frame[1], index)
        self.shown_index = wanted[0]
        self.slider.blockSignals(True)
        self.slider.setValue(self.position)
        self.slider.blockSignals(False)
        self.frame_box.setValue(self.position)
        time_s = float(media.cameras[0].times_s[self.position]) if media.cameras else 0.0
        self.status.setText(
            f"Frame {self.position} of {media.frame_count} · {time_s:.3f} s · "
            f"{len(media.cameras)} camera(s)"
        )
        self.looking.shown(self.position)
        if self.shown_index is not None:
            self.frame_shown.emit(self.shown_index)

    def _on_failed(self, error: Exception) -> None:
        self.pause()
        self.status.setText(f"Could not show the frame: {say_error(error)}")

    def shut_down(self, timeout_ms: int) -> None:
        """Stop playing and wait for the decoding thread, then close the files it read."""
        self.pause()
        self._decoding.wait(timeout_ms)
        for reader in self._readers:
            reader.close()
        self._readers, self._reader_of = [], None
