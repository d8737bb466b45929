"""The Results screen's Export dialog: which results, in which formats, with or without the
recordings, into which folder; then the export's progress with Cancel, and where the bundle went
and how to check it (or, refused, why, with the error's code).

The formats chosen and the folder are kept per user for the next export. Closing the dialog while
an export runs does not stop it: the page's Export… button shows the same dialog again.

Threading contract: GUI thread only. The export runs on the page's export thread (the
:class:`~labrig.ui.shell.background.BackgroundCalls` handed in), reporting to a
:class:`~labrig.ui.shell.tasks.QtTask` that the dialog's :class:`TaskBar` shows and cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QColor, QPalette, QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QFileDialog,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from labrig.errors import LabrigError
from labrig.export import ExportReport, ExportService
from labrig.export.interchange import DEFAULT_FORMATS, FORMATS
from labrig.results import AttemptSummary
from labrig.tasks import TaskCancelledError
from labrig.ui.common.task_bar import TaskBar
from labrig.ui.results.model import EXPORTABLE, STATUS_WORDS
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.window_state import ui_settings

EXPORT_FOLDER_KEY = "export/folder"  # the folder the last export went to, kept per user
EXPORT_FORMATS_KEY = "export/formats"  # the formats the last export wrote, comma-separated
EXPORT_SPECIES_KEY = "export/nwb-species"  # the species the last NWB export named
NAMES_SHOWN = 6  # selected results named one a line; the rest are counted
OUTCOME_LINES = 6  # the room the outcome keeps, in lines of text
MINIMUM_WIDTH = 600  # px: each format's explanation fits on one line
#: each format's name and what it is for, in one line
FORMAT_WORDS: dict[str, tuple[str, str]] = {
    "csv": ("Tidy CSV", "One row per frame × marker; automatic values beside those in force"),
    "c3d": ("C3D", "For Visual3D, Mokka and other biomechanics tools"),
    "trc": ("TRC + MOT", "For OpenSim (needs a calibrated result)"),
    "nwb": ("NWB", "Neurodata Without Borders with ndx-pose, for DANDI"),
    "video": ("Overlay video", "Each camera with the markers drawn, for talks"),
}
MEDIA_WORDS = "Each result's recordings, timestamps and manifest, copied and checked by SHA-256"
ALWAYS_WRITTEN = "Every export also writes result.json, the CSVs, plots, provenance and SHA256SUMS."


def export_start_folder() -> str:
    """Where an export goes first: the last export's folder, else the user's documents."""
    kept = ui_settings().value(EXPORT_FOLDER_KEY)
    if isinstance(kept, str) and Path(kept).is_dir():
        return kept
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return documents if documents and Path(documents).is_dir() else str(Path.home())


def kept_formats() -> tuple[str, ...]:
    """The formats of the last export (the defaults before the first one)."""
    kept = ui_settings().value(EXPORT_FORMATS_KEY)
    if not isinstance(kept, str):
        return DEFAULT_FORMATS
    names = set(kept.split(","))
    return tuple(f for f in FORMATS if f in names)


def attempt_name(row: AttemptSummary) -> str:
    """``S-1, attempt 2``: how the list names an attempt."""
    return f"{row.subject_code}, attempt {row.number}"


def refusal_words(error: Exception) -> str:
    """A refusal in words, then its code for a support request (a cancel is no refusal)."""
    if isinstance(error, TaskCancelledError):
        return "Export cancelled at your request: nothing was kept of the unfinished bundle."
    if isinstance(error, LabrigError):
        message = error.message[:1].upper() + error.message[1:]
        return f"Not exported: {message.rstrip('.')}.\nError code: {error.code}"
    return f"Not exported: {say_error(error)}."


def _hint(text: str) -> QLabel:
    """An explanation, not a control: word-wrapped, its text a little lighter than a label's (as
    readable in a dark palette as in a light one)."""
    label = QLabel(text)
    label.setWordWrap(True)
    palette = label.palette()
    ink = palette.color(QPalette.ColorRole.WindowText)
    paper = palette.color(QPalette.ColorRole.Window)
    mix = QColor.fromRgbF(
        0.7 * ink.redF() + 0.3 * paper.redF(),
        0.7 * ink.greenF() + 0.3 * paper.greenF(),
        0.7 * ink.blueF() + 0.3 * paper.blueF(),
    )
    palette.setColor(QPalette.ColorRole.WindowText, mix)
    label.setPalette(palette)
    return label


class ExportDialog(QDialog):
    """What to export, the formats, the recordings, the folder; Export and Close."""

    def __init__(
        self, export: ExportService, calls: BackgroundCalls, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export results")
        self._export, self._calls = export, calls
        self._chosen: list[str] = []  # the selected results' ids that can be exported
        self.selected_choice = QRadioButton("The selected results")
        self.selected_choice.setObjectName("exportSelected")
        self.everything_choice = QRadioButton("Every published result in the store")
        self.everything_choice.setObjectName("exportEverything")
        self._scope = QButtonGroup(self)
        self._scope.addButton(self.selected_choice)
        self._scope.addButton(self.everything_choice)
        self._scope.buttonToggled.connect(self._update_buttons)
        self.selection = QLabel("")
        self.selection.setObjectName("exportSelection")
        self.selection.setWordWrap(True)
        self.not_exportable = QLabel("")
        self.not_exportable.setObjectName("exportNotExportable")
        self.not_exportable.setWordWrap(True)
        self.format_boxes = {f: QCheckBox(FORMAT_WORDS[f][0]) for f in FORMATS}
        for fmt, box in self.format_boxes.items():
            box.setObjectName(f"exportFormat-{fmt}")
        # what NWB records of a subject and Labrig's catalog does not: given here, or left out
        self.species = QLineEdit(str(ui_settings().value(EXPORT_SPECIES_KEY) or ""))
        self.species.setObjectName("exportSpecies")
        self.species.setPlaceholderText("species, e.g. Homo sapiens")
        self.species.setToolTip(
            "The subjects' species for the NWB files (Latin binomial); Labrig's catalog does not "
            "record it"
        )
        self.age = QLineEdit()
        self.age.setObjectName("exportAge")
        self.age.setPlaceholderText("age, e.g. P30Y")
        self.age.setToolTip(
            "The subjects' age for the NWB files, as ISO 8601: P30Y (30 years), P8W (8 weeks), "
            "P20Y/P40Y (a range)"
        )
        self.format_boxes["nwb"].toggled.connect(self._update_buttons)
        self.media = QCheckBox("Include the recordings (media)")
        self.media.setObjectName("exportMedia")
        self.folder = QLineEdit()
        self.folder.setObjectName("exportFolder")
        self.folder.setPlaceholderText("The folder to export into")
        self.folder.textChanged.connect(self._update_buttons)
        self.choose_button = QPushButton("Choose…")
        self.choose_button.setObjectName("exportChoose")
        self.choose_button.clicked.connect(self.choose_folder)
        self.task_bar = TaskBar("exportTask")
        self.outcome = QPlainTextEdit()
        self.outcome.setObjectName("exportOutcome")
        self.outcome.setReadOnly(True)  # selectable: the path and the command can be copied
        self.outcome.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.outcome.setFrameShape(QFrame.Shape.NoFrame)  # text on the dialog, not a text box
        self.outcome.viewport().setAutoFillBackground(False)
        self.outcome.setFixedHeight(
            self.outcome.fontMetrics().lineSpacing() * OUTCOME_LINES
            + 2 * round(self.outcome.document().documentMargin())
            + 2 * self.outcome.frameWidth()
        )
        self.export_button = QPushButton("Export")
        self.export_button.setObjectName("exportStart")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start)
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("exportClose")
        self.close_button.setToolTip("Close this window; an export under way goes on")
        self.close_button.clicked.connect(self.reject)
        self._lay_out()
        self.set_formats(kept_formats())

    def _lay_out(self) -> None:
        what = QGroupBox("What to export")
        column = QVBoxLayout(what)
        column.addWidget(self.selected_choice)
        column.addWidget(self.selection)
        column.addWidget(self.not_exportable)
        column.addWidget(self.everything_choice)
        formats = QGroupBox("Formats")
        grid = QGridLayout(formats)
        row = 0
        for fmt in FORMATS:
            box, hint = self.format_boxes[fmt], _hint(FORMAT_WORDS[fmt][1])
            # one line of explanation centred on its tick box; a wrapped one starts level with it
            hint.setMinimumHeight(box.sizeHint().height())
            hint.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            grid.addWidget(box, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(hint, row, 1)
            row += 1
            if fmt == "nwb":  # the subject's fields NWB asks for, under its line
                subject = QHBoxLayout()
                subject.addWidget(self.species, 2)
                subject.addWidget(self.age, 1)
                grid.addLayout(subject, row, 1)
                row += 1
        grid.addWidget(_hint(ALWAYS_WRITTEN), row, 0, 1, 2)
        grid.addWidget(self.media, row + 1, 0, 1, 2)
        grid.addWidget(_hint(MEDIA_WORDS), row + 2, 0, 1, 2)
        grid.setColumnStretch(1, 1)
        where = QGroupBox("Into the folder")
        folder_row = QHBoxLayout(where)
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(self.choose_button)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        for part in (what, formats, where, self.task_bar, self.outcome):
            layout.addWidget(part)
        layout.addLayout(buttons)
        self.setMinimumWidth(MINIMUM_WIDTH)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A window's layout does not grow its height for text that wraps at this width (Qt's
        minimum height is for the widest layout): ask for that height here, so no line is cut."""
        super().resizeEvent(event)
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            need = layout.totalHeightForWidth(self.width())
            if need != self.minimumHeight():
                self.setMinimumHeight(need)

    # -- what the page says --------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.task_bar.running

    def offer(self, selected: Sequence[AttemptSummary], folder: str | None = None) -> None:
        """Offer to export ``selected`` (the rows selected in the list), into ``folder`` (None:
        where the last export went); ignored while an export runs."""
        if self.running:
            return
        exportable = [r for r in selected if r.status in EXPORTABLE and r.result_id]
        others = [r for r in selected if r not in exportable]
        self._chosen = [r.result_id for r in exportable if r.result_id]
        self.selected_choice.setText(f"The selected results ({len(exportable)})")
        (self.selected_choice if exportable else self.everything_choice).setChecked(True)
        self.selection.setText(_names(exportable) or "No published result is selected.")
        self.not_exportable.setText(
            "Not exportable (only published results can be): "
            + "; ".join(f"{attempt_name(r)} ({STATUS_WORDS[r.status].lower()})" for r in others)
            if others
            else ""
        )
        self.not_exportable.setHidden(not others)
        self.folder.setText(folder or export_start_folder())
        self.outcome.setPlainText("")
        self._update_buttons()

    def formats(self) -> list[str]:
        return [f for f, box in self.format_boxes.items() if box.isChecked()]

    def set_formats(self, formats: Sequence[str]) -> None:
        for fmt, box in self.format_boxes.items():
            box.setChecked(fmt in formats)

    @property
    def everything(self) -> bool:
        return self.everything_choice.isChecked()

    # -- the folder ------------------------------------------------------------------------------

    def choose_folder(self) -> QFileDialog:
        """The folder dialog, opened where the folder field points (else the last export's)."""
        typed = Path(self.folder.text().strip()).expanduser()
        start = str(typed) if typed.is_dir() else export_start_folder()
        dialog = QFileDialog(self, "Export into a folder", start)
        dialog.setObjectName("exportFolderDialog")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        # the same dialog on every platform
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.folder.setText)
        dialog.open()  # window-modal, no nested event loop
        return dialog

    # -- exporting -------------------------------------------------------------------------------

    def start(self) -> None:
        """Export what is chosen off the GUI thread (the reviewer role is the service's check)."""
        folder = self.folder.text().strip()
        if self.running or not folder or not (self.everything or self._chosen):
            return
        formats = self.formats()
        settings = ui_settings()
        settings.setValue(EXPORT_FOLDER_KEY, folder)
        settings.setValue(EXPORT_FORMATS_KEY, ",".join(formats))
        subject = {"species": self.species.text(), "age": self.age.text()}
        if "nwb" in formats and subject["species"].strip():
            settings.setValue(EXPORT_SPECIES_KEY, subject["species"].strip())
        refs = [] if self.everything else list(self._chosen)
        everything, media = self.everything, self.media.isChecked()
        self.outcome.setPlainText("")
        task = self.task_bar.begin(f"Exporting into {folder}")
        self._update_buttons()
        export = self._export
        self._calls.submit(
            lambda: export.export(
                refs,
                Path(folder).expanduser(),
                everything=everything,
                media=media,
                formats=formats,
                subject=subject if "nwb" in formats else None,
                task=task,
            ),
            self._on_exported,
            self._on_failed,
        )

    def _on_exported(self, report: ExportReport) -> None:
        self.task_bar.end()
        self._update_buttons()
        self.outcome.setPlainText(_report_words(report))

    def _on_failed(self, error: Exception) -> None:
        self.task_bar.end()
        self._update_buttons()
        self.outcome.setPlainText(refusal_words(error))

    def _update_buttons(self, *_: object) -> None:
        """Everything but Cancel and Close waits while an export runs; Export needs a folder and
        something to export."""
        idle = not self.running
        for part in (self.selected_choice, self.everything_choice, self.media, self.folder):
            part.setEnabled(idle and (part is not self.selected_choice or bool(self._chosen)))
        for box in self.format_boxes.values():
            box.setEnabled(idle)
        for field in (self.species, self.age):
            field.setEnabled(idle and self.format_boxes["nwb"].isChecked())
        self.choose_button.setEnabled(idle)
        self.export_button.setEnabled(
            idle and bool(self.folder.text().strip()) and (self.everything or bool(self._chosen))
        )


def _names(rows: Sequence[AttemptSummary]) -> str:
    """The results to export, one a line, the rest counted."""
    lines = [f"• {attempt_name(r)} ({STATUS_WORDS[r.status].lower()})" for r in rows]
    if len(lines) > NAMES_SHOWN:
        lines = [*lines[: NAMES_SHOWN - 1], f"• and {len(lines) - NAMES_SHOWN + 1} more"]
    return "\n".join(lines)


def _report_words(report: ExportReport) -> str:
    """Where the bundle is, how to check it, and any format a result could not be written in."""
    count = len(report.results)
    skipped = sorted(
        {f"{fmt} ({why})" for r in report.results for fmt, why in r["formats_skipped"].items()}
    )
    return "\n".join(
        [
            f"Exported {count} result{'' if count == 1 else 's'} ({report.files} files) into:",
            str(report.bundle),
            "To check it later, in a terminal:",
            f'cd "{report.bundle}"',
            "sha256sum -c --strict SHA256SUMS",
            *([f"Left out: {'; '.join(skipped)}."] if skipped else []),
        ]
    )
