"""The queue as the window sees it: one snapshot of the jobs, refreshed on events, for every page.

Threading contract: GUI thread only. Nothing here polls: the snapshot is read
again when the bridge reports an event, when the executor starts or ends a job,
or when an operator acts; live progress comes from the executor's signals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from labrig.domain.jobs import JobState
from labrig.events import EventRecord
from labrig.jobs import JobQueue, JobView
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.qt_executor import JobSignals

S = JobState
RUNNING_STATES = frozenset({S.LEASED, S.RUNNING, S.CHECKPOINTED})
# a job's state in the words the Capture and Results screens use
WORDS = {
    S.CREATED: "created",
    S.INPUTS_PENDING: "waiting for the previous stage",
    S.READY: "queued",
    S.SUCCEEDED: "done",
    S.SUCCEEDED_DEGRADED: "done (degraded)",
    S.RETRY_WAITING: "will retry",
    S.BLOCKED_BY_QUALITY: "blocked by a quality check",
    S.PERMANENT_FAILURE: "failed",
    S.CANCELLED: "cancelled",
}
JOBS_SHOWN = 500  # the newest, for the Capture screen's attempts (the Queue screen pages its own)


def queue_summary(counts: Mapping[JobState, int]) -> str:
    """The status bar's one line: jobs waiting for a worker, held by one, and failed for good."""
    running = sum(counts.get(s, 0) for s in RUNNING_STATES)
    return (
        f"Queue: {counts.get(S.READY, 0)} ready · {running} running · "
        f"{counts.get(S.PERMANENT_FAILURE, 0)} failed"
    )


class QueueMonitor(QObject):
    """The newest snapshot of the queue (``counts``, of the states not settled; ``jobs``, the
    newest, once a page follows them), re-read when something changed it.

    The newest jobs are read only after :meth:`follow_jobs` (the Capture screen shows its
    attempts' analysis from them): the window opens on a count, not on 500 rows read on its
    thread.

    A burst of reasons within one turn of the event loop (a hundred jobs enqueued
    at once) costs one read, not a hundred.
    """

    #: ``jobs`` and ``counts`` were re-read.
    snapshotChanged = Signal()
    #: The executor's :attr:`~labrig.ui.shell.qt_executor.JobSignals.jobProgressed`, forwarded.
    jobProgressed = Signal(str, float, str)

    def __init__(
        self,
        queue: JobQueue,
        bridge: EventBridge,
        jobs: JobSignals,
        parent: QObject | None = None,
        attempt_names: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
    ) -> None:
        """``attempt_names``: attempt id → how a technician names it ("DEMO-001 · attempt 2"),
        read with each snapshot (``capture.attempt_names`` over the store)."""
        super().__init__(parent)
        self._queue = queue
        self._attempt_names = attempt_names
        self.jobs: list[JobView] = []
        self.attempt_names: Mapping[str, str] = {}
        self.counts: dict[JobState, int] = {}
        self._following = False  # the newest jobs are read with each snapshot
        self._progressing: set[str] = set()  # jobs whose progress was reported, until they end
        # zero-delay single shot: coalesces a burst of requests into one read (not a poll)
        self._coalesce = QTimer(self)
        self._coalesce.setSingleShot(True)
        self._coalesce.setInterval(0)
        self._coalesce.timeout.connect(self.refresh_now)
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)
        jobs.jobStarted.connect(self._on_executor_job_started)
        jobs.jobFinished.connect(self._on_executor_job_finished)
        jobs.jobFailed.connect(self._on_executor_job_failed)
        jobs.jobProgressed.connect(self._on_executor_job_progressed)
        self.refresh_now()

    def refresh(self) -> None:
        """Re-read the snapshot on the next turn of the event loop."""
        if not self._coalesce.isActive():
            self._coalesce.start()

    @Slot()
    def refresh_now(self) -> None:
        """Re-read the snapshot at once (after an operator's action, so it shows its effect)."""
        self._coalesce.stop()
        if self._following:
            self.jobs = self._queue.jobs(limit=JOBS_SHOWN, newest_first=True)
            self.attempt_names = self.names_of(self.jobs)
        self.counts = self._queue.counts()
        self.snapshotChanged.emit()

    def follow_jobs(self) -> None:
        """Read the newest jobs with every snapshot from now on (at once, the first time)."""
        if not self._following:
            self._following = True
            self.refresh_now()

    def names_of(self, jobs: Sequence[JobView]) -> Mapping[str, str]:
        """How a technician names the attempts of ``jobs`` ("DEMO-001 · attempt 2"), by id."""
        if self._attempt_names is None:
            return {}
        return self._attempt_names(sorted({j.attempt_id for j in jobs if j.attempt_id}))

    @Slot(object)
    def _on_bridge_event_recorded(self, _event: EventRecord) -> None:
        self.refresh()

    @Slot(str)
    def _on_executor_job_started(self, _job_id: str) -> None:
        self.refresh()  # Ready → Leased → Running records no event

    @Slot(str, float, str)
    def _on_executor_job_progressed(self, job_id: str, fraction: float, message: str) -> None:
        # The worker moves Leased → Running just after jobStarted, recording no event: the first
        # progress shows the stage runs, so read once more then.
        if job_id not in self._progressing:
            self._progressing.add(job_id)
            self.refresh()
        self.jobProgressed.emit(job_id, fraction, message)

    @Slot(object)
    def _on_executor_job_finished(self, view: JobView) -> None:
        self._progressing.discard(view.id)
        self.refresh()

    @Slot(str, str, str)
    def _on_executor_job_failed(self, job_id: str, _code: str, _message: str) -> None:
        self._progressing.discard(job_id)
        self.refresh()
