"""File ▸ Import video…: video files picked in a dialog become attempts of the open session.

Each file is copied into the store as a committed capture and made an attempt with its analysis
requested (:func:`~labrig.pipeline.import_attempt`); a file that is not a video, is truncated or was
imported before is refused in words and stores nothing, and the others go on. The dialog opens in
the folder of the last import. Threading contract: GUI thread only; the imports run on a pool
thread, one at a time.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from labrig.access import AccessControl
from labrig.calibration.images import VIDEO_SUFFIXES
from labrig.domain.roles import Action
from labrig.errors import LabrigError
from labrig.jobs import JobQueue
from labrig.pipeline import SavedRecording, import_attempt
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.window_state import ui_settings

FOLDER_KEY = "import/folder"  # the folder videos were last imported from, kept per user
Outcome = SavedRecording | str  # an attempt, or why a file was refused


class VideoImport(QObject):
    """The dialog and the imports; ``imported`` carries the attempts made and a sentence saying
    what happened, ``picked`` the files chosen in the dialog."""

    imported = Signal(list, str)  # list[SavedRecording], the sentence for the technician
    picked = Signal(list)  # list[Path]

    def __init__(self, queue: JobQueue, access: AccessControl, parent: QObject | None = None):
        super().__init__(parent)
        self._queue, self._access = queue, access
        self._calls = BackgroundCalls(1, self)

    def open_dialog(self, parent: QWidget) -> QFileDialog:
        dialog = QFileDialog(parent, "Import videos as attempts", self._folder())
        dialog.setObjectName("importDialog")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilter(f"Videos ({' '.join('*' + s for s in sorted(VIDEO_SUFFIXES))})")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the same everywhere
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.filesSelected.connect(lambda files: self.picked.emit([Path(f) for f in files]))
        dialog.open()  # window-modal, no nested event loop
        return dialog

    @staticmethod
    def _folder() -> str:
        kept = ui_settings().value(FOLDER_KEY)
        return kept if isinstance(kept, str) and Path(kept).is_dir() else str(Path.home())

    def start(self, paths: list[Path], session_id: str) -> None:
        """Import ``paths`` in order as attempts of ``session_id`` (the technician role once roles
        are enforced)."""
        ui_settings().setValue(FOLDER_KEY, str(paths[0].parent))
        queue, access = self._queue, self._access

        def run() -> list[Outcome]:
            queue.store.refuse_if_damaged()  # before a file is copied: refused whole
            access.require(Action.CAPTURE)
            done: list[Outcome] = []
            for path in paths:
                try:
                    done.append(import_attempt(queue, path, session_id))
                except LabrigError as exc:
                    done.append(f"{path.name} was not imported: {exc.message}.")
            return done

        self._calls.submit(run, self._on_done, self._on_failed)

    def wait(self, timeout_ms: int) -> bool:
        """Wait for an import in flight and deliver its outcome; False if it did not end in time."""
        return self._calls.wait(timeout_ms)

    def _on_done(self, done: list[Outcome]) -> None:
        saved = [row for row in done if isinstance(row, SavedRecording)]
        refused = [row for row in done if isinstance(row, str)]
        numbers = ", ".join(str(row.number) for row in saved)
        said = (
            f"Imported {len(saved)} video(s) as attempt(s) {numbers}; analysis requested. "
            if saved
            else ""
        )
        self.imported.emit(saved, said + " ".join(refused))

    def _on_failed(self, error: Exception) -> None:
        self.imported.emit([], f"Nothing was imported: {say_error(error)}")
