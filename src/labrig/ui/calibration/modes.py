"""What the Calibration screen's two modes (one camera, a rig) share: stored calibrations listed on
the left with the form below them, the selected one in detail on the right, the recordings on
offer read again for the form with the list, and one calibration at a time on a thread of its own.

Threading contract: GUI thread only. Reads run on the page's pool threads when it is first shown
and again when the :class:`~labrig.ui.shell.bridge.EventBridge` reports ``calibration.validated``,
``capture.committed`` or ``attempt.created`` (a hidden page notes it is stale and reads when next
shown). A calibration runs on a thread of its own, so reads never wait behind a solve; the form is
disabled until it ends, while its bar shows the progress and a Cancel button stops it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from labrig.domain.events import EventName
from labrig.events import EventRecord
from labrig.tasks import Task
from labrig.ui.common.list_detail import ListDetailPage
from labrig.ui.common.rows_model import RowsTableModel
from labrig.ui.common.task_bar import TaskBar
from labrig.ui.shell.background import BackgroundCalls, say_error
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.latest import Latest

LIST_WIDTH = 560  # px: device, mode, age, RMS and verdict fit without scrolling
REFRESHING = frozenset(
    {EventName.CALIBRATION_VALIDATED, EventName.CAPTURE_COMMITTED, EventName.ATTEMPT_CREATED}
)

Row = TypeVar("Row")
Detail = TypeVar("Detail")
Row_co = TypeVar("Row_co", covariant=True)
Detail_co = TypeVar("Detail_co", covariant=True)
Detail_contra = TypeVar("Detail_contra", contravariant=True)


class Calibrations(Protocol[Row_co, Detail_co]):
    """A mode's service: its stored calibrations, one in detail, the recordings on offer."""

    def calibrations(self) -> Sequence[Row_co]: ...
    def detail(self, calibration_id: str) -> Detail_co: ...
    def recordings(self) -> Sequence[Any]: ...


class Form(Protocol):
    button: QPushButton
    status: QLabel
    progress: TaskBar

    def set_running(self, running: bool) -> None: ...


class DetailView(Protocol[Detail_contra]):
    def show_calibration(self, detail: Detail_contra) -> None: ...
    def show_message(self, text: str) -> None: ...


class CalibrationMode(ListDetailPage[Row, Detail], Generic[Row, Detail]):
    """A mode of the Calibration screen; a subclass builds its form and detail view, says how its
    rows are keyed and what an empty list says, offers the recordings to its form and starts its
    solve with :meth:`solve`."""

    empty_text: ClassVar[str] = "Nothing calibrated yet."

    def __init__(
        self,
        service: Calibrations[Row, Detail],
        model: RowsTableModel[Row],
        form: Form,
        detail: DetailView[Detail],
        bridge: EventBridge,
        names: tuple[str, str, str],  # the list's, its status line's and the splitter's
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(bridge, model, names[0], names[1], parent)
        self._service = service
        self._solves = BackgroundCalls(threads=1, parent=self)
        self._offer_reads = Latest(self._reads)
        self._form, self._detail = form, detail
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName(names[2])  # positions kept between runs by name
        assert isinstance(form, QWidget) and isinstance(detail, QWidget)
        split.addWidget(self.list_column(form))
        split.addWidget(detail)
        split.setStretchFactor(1, 2)
        split.setSizes([LIST_WIDTH, 2 * LIST_WIDTH])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)

    def offer(self, recordings: Any) -> None:
        """Hand the recordings on offer to the form."""
        raise NotImplementedError

    @property
    def busy(self) -> bool:
        """A read or a calibration is running or queued."""
        return self._reads.busy or self._solves.busy

    def refresh(self) -> None:
        """Read the calibrations and the recordings on offer again (off the GUI thread)."""
        super().refresh()
        self._offer_reads.request(self._service.recordings, self.offer, self._on_list_failed)

    def shut_down(self, timeout_ms: int) -> None:
        """Wait for a running calibration and for reads, so none outlives the store."""
        self._solves.wait(timeout_ms)
        super().shut_down(timeout_ms)

    def read_list(self) -> list[Row]:
        return list(self._service.calibrations())

    def read_detail(self, key: str) -> Detail:
        return self._service.detail(key)

    def show_detail(self, detail: Detail) -> None:
        self._detail.show_calibration(detail)

    def show_placeholder(self, text: str) -> None:
        self._detail.show_message(text)

    def describe_list(self, rows: list[Row]) -> str:
        return f"{len(rows)} stored, newest first." if rows else self.empty_text

    def refreshes(self, event: EventRecord) -> bool:
        return event.name in REFRESHING

    def solve(
        self,
        what: str,
        work: Callable[[Task], Any],
        done: Callable[[Any], tuple[str, str]],
    ) -> None:
        """Run ``work`` (given the bar's task) on the solve thread, the form disabled meanwhile;
        ``done`` turns its outcome into what the form says and the id of the calibration stored,
        which is then selected."""
        form = self._form
        form.set_running(True)
        form.status.clear()
        task = form.progress.begin(what)

        def finished(outcome: Any) -> None:
            form.progress.end()
            form.set_running(False)
            said, stored_id = done(outcome)
            form.status.setText(said)
            self.select_when_listed(stored_id)
            self.refresh()

        def failed(error: Exception) -> None:
            form.progress.end()
            form.set_running(False)
            form.status.setText(f"Not calibrated: {say_error(error)}")

        self._solves.submit(lambda: work(task), finished, failed)
