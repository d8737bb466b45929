"""The one composition root: builds the store, the event dispatcher and (later) the
queue and capture services. The CLI, the worker, the GUI and the tests all start here;
tests pass their own parts instead of patching.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from labrig.access import AccessControl
from labrig.calibration import CalibrationService
from labrig.capture import CaptureService, FrameClock, Mode, RecoveryReport
from labrig.capture.recovery import Recovered
from labrig.events import AuditTrail, Dispatcher, DispatcherThread
from labrig.export import ExportService
from labrig.jobs import BUILTIN_STAGES, Clock, JobQueue, LeaseTerms, StageRegistry
from labrig.pipeline import analysis_stages, save_interrupted_rigs
from labrig.releases import HealthCheck, ReleaseService, active_release_digest, no_health_check
from labrig.results import PUBLISHER, WATCHED, publish_when_done
from labrig.review import ReprocessService, ReviewedResults, RevisionService
from labrig.storage import StorageMonitor
from labrig.store import Store, open_store
from labrig.sync import (
    INDEXED,
    SYNC_INDEXER,
    DestinationFactory,
    FolderDestination,
    SyncService,
    index_for_sync,
)


@dataclass(frozen=True)
class Governance:
    """Who may do what, reviewers' revisions, and the audit trail that records both."""

    access: AccessControl
    revisions: RevisionService
    audit: AuditTrail
    reviewed: ReviewedResults  # what the Results and Review screens read and revise through
    reprocess: ReprocessService  # a result analysed again under the current calibrations


@dataclass
class Services:
    """Everything a front end (GUI, CLI, worker) talks to."""

    store: Store
    dispatcher: Dispatcher
    dispatcher_thread: DispatcherThread
    queue: JobQueue
    storage: StorageMonitor
    capture: CaptureService
    calibration: CalibrationService
    releases: ReleaseService
    governance: Governance
    export: ExportService
    sync: SyncService  # batches run by `labrig sync` (or a front end's own thread), not by start()

    def start(self) -> None:
        self.dispatcher_thread.start()

    def recover(self) -> RecoveryReport:
        """Start-up recovery: every provisional capture resolved (:func:`labrig.capture.recover`),
        then every rig recording a crash left unsaved made an attempt of its salvaged captures,
        marked interrupted (listed as ``rig attempt``, or ``rig not saved`` when no camera had
        recorded a frame)."""
        report = self.capture.recover()
        for rig in save_interrupted_rigs(self.queue):
            outcome = "rig attempt" if rig.attempt_id else "rig not saved"
            report.items.append(
                Recovered(rig.attempt_id or rig.recording_id, outcome, rig.frames, rig.detail)
            )
        return report

    def close(self) -> None:
        """Stop background threads, then release the database."""
        self.dispatcher_thread.stop()
        self.store.close()


def default_registry(store: Store) -> StageRegistry:
    """Every stage this build can run: the queue's own and the default analysis pipeline (whose jobs
    carry the active release's digest in their idempotency keys)."""
    return StageRegistry((*BUILTIN_STAGES, *analysis_stages(store, active_release_digest(store))))


def bootstrap(
    store_root: str | Path | None = None,
    *,
    store: Store | None = None,
    poll_seconds: float = 1.0,
    registry: StageRegistry | None = None,
    clock: Clock | None = None,
    lease: LeaseTerms | None = None,
    access: AccessControl | None = None,
    sync_destination: DestinationFactory = FolderDestination,
    health_check: HealthCheck = no_health_check,
    frame_clock: Callable[[Mode], FrameClock] | None = None,
) -> Services:
    """Build the services over ``store`` (or the store opened at ``store_root``).

    ``access`` decides who the acting user is (default: the operating-system login);
    ``sync_destination`` makes the sync destination from its stored configuration; ``health_check``
    is what checking a release runs (the front ends pass the reference check of
    :mod:`labrig.scenarios`, which sits above this module; without one, checking a release is
    refused with ``LABRIG_HEALTH_CHECK_MISSING``); ``frame_clock`` gives each new recording the
    clock its frames are stamped with (by default the virtual camera's own, the wall clock for
    others; see :meth:`CaptureService.frame_clock`). Nothing is started: call
    :meth:`Services.start` to run background delivery.
    """
    store = store or open_store(store_root)
    dispatcher = Dispatcher(store)
    dispatcher.register(PUBLISHER, publish_when_done, names=WATCHED)
    dispatcher.register(SYNC_INDEXER, index_for_sync, names=INDEXED)
    storage = StorageMonitor(store)
    queue = JobQueue(
        store,
        registry or default_registry(store),
        clock or Clock(),
        lease or LeaseTerms(),
        heavy_paused=storage.heavy_jobs_paused,
    )
    access = access or AccessControl(store)
    releases = ReleaseService(store, queue, health_check, access)
    revisions = RevisionService(store, access)
    reprocess = ReprocessService(queue, access)
    governance = Governance(
        access=access,
        revisions=revisions,
        audit=AuditTrail(store),
        reviewed=ReviewedResults(revisions, reprocess),
        reprocess=reprocess,
    )
    capture = CaptureService(store, storage, access=access, frame_clock=frame_clock)
    # recording comes first: while this workstation records, analysis claims nothing new
    queue.paused = capture.recording_now
    return Services(
        store=store,
        dispatcher=dispatcher,
        dispatcher_thread=DispatcherThread(dispatcher, poll_seconds),
        queue=queue,
        storage=storage,
        capture=capture,
        calibration=CalibrationService(store),
        releases=releases,
        governance=governance,
        export=ExportService(store, access),
        sync=SyncService(store, dispatcher, access, sync_destination),
    )
