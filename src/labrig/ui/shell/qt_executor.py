"""The GUI's job executor: the core's :func:`~labrig.jobs.runner.run_claim` on a QThreadPool.

Same loop as :class:`~labrig.jobs.executor.ThreadExecutor`, driven by Qt instead
of a thread: claim only as many jobs as there are free worker slots, run each on
a pool thread, claim again when a slot frees up, a stage is requested, or the
slow fallback timer fires (for jobs enqueued by other processes).

Threading contract: build, start, poke and shut down on the GUI thread. Workers
run stages on pool threads, never touch widgets, and report only through a
private signal hop queued to the GUI thread; every public signal of
:class:`JobSignals` is emitted on the GUI thread, so any receiver (slot or
lambda) runs there and may touch widgets.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    QRunnable,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
    Slot,
)

from labrig.domain.events import EventName
from labrig.domain.jobs import JobState
from labrig.errors import LeaseLostError
from labrig.events import EventRecord
from labrig.jobs import (
    WORKER_STOPPED,
    Claim,
    FencedWrites,
    JobQueue,
    RunResult,
    run_claim,
    yield_to_recording,
)
from labrig.ui.shell.bridge import EventBridge
from labrig.ui.shell.tasks import ProgressRelay

log = logging.getLogger(__name__)

WORKER_ERROR = "LABRIG_WORKER_ERROR"  # run_claim itself raised (the store failed under the worker)
LEASE_LOST_MESSAGE = (
    "this worker lost the job's lease (taken over, or lapsed), so its result was discarded"
)
CLAIM_EVENTS = frozenset({EventName.STAGE_REQUESTED.value, EventName.STAGE_COMPLETED.value})
FAILED_STATES = frozenset(
    {JobState.RETRY_WAITING, JobState.BLOCKED_BY_QUALITY, JobState.PERMANENT_FAILURE}
)


class JobSignals(QObject):
    """What the executor reports. Every signal is emitted on the GUI thread."""

    #: A worker picked the job up: (job id).
    jobStarted = Signal(str)
    #: (job id, fraction 0–1, message); at most ~10 per second per job, the newest wins,
    #: the last always arrives.
    jobProgressed = Signal(str, float, str)
    #: The run ended and its outcome is written: the job's JobView,
    #: in whatever state the run left it.
    jobFinished = Signal(object)
    #: (job id, error code, message) when a run ends in RetryWaiting, BlockedByQuality or
    #: PermanentFailure (not when shutdown handed it back), when its lease was lost
    #: (``LABRIG_LEASE_LOST``, no jobFinished follows) or when the worker itself failed
    #: (the error's code, else ``LABRIG_WORKER_ERROR``).
    jobFailed = Signal(str, str, str)


class _WorkerSignals(QObject):
    """The private hop from pool threads to the executor: emitted from worker threads only."""

    started = Signal(str)
    ended = Signal(str, object)  # job id, the RunResult or the exception run_claim raised


class _JobRunnable(QRunnable):
    """Runs one claimed job on a pool thread; talks back only through ``hop`` and ``relay``."""

    def __init__(
        self,
        writes: FencedWrites,
        claim: Claim,
        relay: ProgressRelay,
        hop: _WorkerSignals,
        stopping: threading.Event,
    ) -> None:
        super().__init__()
        self._writes, self._claim, self._relay, self._hop, self._stopping = (
            writes,
            claim,
            relay,
            hop,
            stopping,
        )

    def run(self) -> None:
        yield_to_recording()  # the pool's threads run jobs only: below any recording
        job_id = self._claim.job_id
        self._hop.started.emit(job_id)
        outcome: RunResult | Exception
        try:
            outcome = run_claim(
                self._writes,
                self._writes.queue.registry,
                self._claim,
                self._relay.post,
                self._stopping,
            )
        except (
            Exception
        ) as exc:  # reported on the GUI thread, so the slot frees and nothing is lost
            log.exception("the worker running job %s failed", job_id)
            outcome = exc
        self._hop.ended.emit(job_id, outcome)


class QtJobExecutor(QObject):
    """Runs queued jobs on ``workers`` pool threads while the GUI stays responsive."""

    def __init__(
        self,
        queue: JobQueue,
        workers: int = 2,
        fallback_ms: int = 2000,
        progress_interval: float = 0.1,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.queue, self.workers = queue, workers
        self.signals = JobSignals(self)
        #: Set by :meth:`shutdown`; running stages hand their jobs back at their next check.
        self.stopping = threading.Event()
        self._writes = FencedWrites(queue)
        self._active = False
        self._running: set[str] = set()  # the jobs holding a slot
        self._relay = ProgressRelay(progress_interval, self)
        self._relay.progressed.connect(self.signals.jobProgressed)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(workers)
        self._hop = _WorkerSignals(self)
        queued = Qt.ConnectionType.QueuedConnection
        self._hop.started.connect(self._on_worker_started, queued)
        self._hop.ended.connect(self._on_worker_ended, queued)
        self._fallback = QTimer(self)
        self._fallback.setInterval(fallback_ms)
        self._fallback.timeout.connect(self.poke)

    @property
    def running_jobs(self) -> frozenset[str]:
        """Ids of the jobs this executor's workers hold now."""
        return frozenset(self._running)

    def attach(self, bridge: EventBridge) -> None:
        """Claim when the bridge reports a stage requested or completed (local or not)."""
        bridge.eventRecorded.connect(self._on_bridge_event_recorded)

    def start(self) -> None:
        """Begin claiming: now, on every poke, and on the fallback timer."""
        if self.stopping.is_set():
            return
        self._active = True
        self._fallback.start()
        self.poke()

    @Slot()
    def poke(self) -> None:
        """Claim as many ready jobs as there are free worker slots, and run them."""
        free = self.workers - len(self._running)
        if not self._active or free <= 0:
            return
        try:
            # Leased → Running in the claim: one commit fewer
            claims = self.queue.claim(free, start=True)
        except Exception:  # a busy or failing store must not end the GUI; the timer claims again
            log.exception("claiming jobs failed; trying again in %s ms", self._fallback.interval())
            return
        for claim in claims:
            self._running.add(claim.job_id)
            self._pool.start(
                _JobRunnable(self._writes, claim, self._relay, self._hop, self.stopping)
            )

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop claiming, ask running stages to hand their jobs back, and wait for the workers.

        Returns whether every worker ended within ``timeout_ms``. The reports they
        sent are delivered before this returns, so listeners see every outcome.
        """
        self._active = False
        self.stopping.set()
        self._fallback.stop()
        done = self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents(self._relay)  # the workers' last queued progress …
        QCoreApplication.sendPostedEvents(self)  # … and reports
        if not done:
            log.warning(
                "%d job(s) still running after %d ms; their leases will lapse",
                len(self._running),
                timeout_ms,
            )
        return done

    # -- slots, all on the GUI thread ----------------------------------------------------------

    @Slot(object)
    def _on_bridge_event_recorded(self, event: EventRecord) -> None:
        if event.name in CLAIM_EVENTS:
            self.poke()

    @Slot(str)
    def _on_worker_started(self, job_id: str) -> None:
        self.signals.jobStarted.emit(job_id)

    @Slot(str, object)
    def _on_worker_ended(self, job_id: str, outcome: RunResult | Exception) -> None:
        self._running.discard(job_id)
        self._relay.finish(job_id)  # its last progress, before its outcome
        self._report(job_id, outcome)
        self.poke()

    def _report(self, job_id: str, outcome: RunResult | Exception) -> None:
        if isinstance(outcome, Exception):
            self.signals.jobFailed.emit(
                job_id, getattr(outcome, "code", WORKER_ERROR), str(outcome)
            )
        elif outcome.view is None:
            self.signals.jobFailed.emit(job_id, LeaseLostError.code, LEASE_LOST_MESSAGE)
        else:
            view = outcome.view
            # handed back is no failure
            if view.state in FAILED_STATES and view.error_code != WORKER_STOPPED:
                self.signals.jobFailed.emit(
                    view.id, view.error_code or "", view.error_message or ""
                )
            self.signals.jobFinished.emit(view)
