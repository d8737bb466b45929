"""The one composition root: builds the store, the event dispatcher and (later) the
queue and capture services. The CLI, the worker, the GUI and the tests all start here;
tests pass their own parts instead of patching.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from labrig.access import AccessControl
from labrig.events import AuditTrail, Dispatcher, DispatcherThread
from labrig.jobs import BUILTIN_STAGES, Clock, JobQueue, LeaseTerms, StageRegistry
from labrig.pipeline import analysis_stages
from labrig.releases import HealthCheck, active_release_digest, no_health_check
from labrig.results import PUBLISHER, WATCHED, load_jobs, publish_when_done
from labrig.storage import StorageMonitor
from labrig.store import Store, open_store
from labrig.sync import INDEXED, SYNC_INDEXER, DestinationFactory, FolderDestination, index_for_sync

if TYPE_CHECKING:
    from labrig.calibration import CalibrationService
    from labrig.capture import CaptureService, FrameClock, Mode, RecoveryReport
    from labrig.export import ExportService
    from labrig.releases import ReleaseService
    from labrig.review import ReprocessService, ReviewedResults, RevisionService
    from labrig.sync import SyncService


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
    """Everything a front end (GUI, CLI, worker) talks to. What a worker runs on (the store, the
    dispatcher and its consumers, the queue) is built at once; the services it never uses (releases,
    governance, sync, capture, calibration, export) are built, and their modules loaded, on first
    use: a separate ``labrig worker`` process starts sooner."""

    store: Store
    dispatcher: Dispatcher
    dispatcher_thread: DispatcherThread
    queue: JobQueue
    storage: StorageMonitor
    access: AccessControl  # who the acting user is, for the services built on first use
    health_check: HealthCheck = no_health_check  # what checking a release runs
    sync_destination: DestinationFactory = FolderDestination  # made from its stored configuration
    frame_clock: Callable[[Mode], FrameClock] | None = None  # for the capture service (bootstrap)

    @cached_property
    def releases(self) -> ReleaseService:
        from labrig.releases import ReleaseService

        return ReleaseService(self.store, self.queue, self.health_check, self.access)

    @cached_property
    def governance(self) -> Governance:
        from labrig.review import ReprocessService, ReviewedResults, RevisionService

        revisions = RevisionService(self.store, self.access)
        reprocess = ReprocessService(self.queue, self.access)
        return Governance(
            access=self.access,
            revisions=revisions,
            audit=AuditTrail(self.store),
            reviewed=ReviewedResults(revisions, reprocess),
            reprocess=reprocess,
        )

    @cached_property
    def sync(self) -> SyncService:
        """Batches run by `labrig sync` (or a front end's own thread), not by :meth:`start`."""
        from labrig.sync import SyncService

        return SyncService(self.store, self.dispatcher, self.access, self.sync_destination)

    @cached_property
    def capture(self) -> CaptureService:
        from labrig.capture import CaptureService

        storage, access = self.storage, self.access
        return CaptureService(self.store, storage, access=access, frame_clock=self.frame_clock)

    def recording_now(self) -> bool:
        """Whether a recording this process started is running or being saved (none can be before
        the capture service is built)."""
        return "capture" in self.__dict__ and self.capture.recording_now()

    @cached_property
    def calibration(self) -> CalibrationService:
        from labrig.calibration import CalibrationService

        return CalibrationService(self.store)

    @cached_property
    def export(self) -> ExportService:
        from labrig.export import ExportService

        return ExportService(self.store, self.access)

    def start(self) -> None:
        self.dispatcher_thread.start()

    def recover(self) -> RecoveryReport:
        """Start-up recovery: every provisional capture resolved (:func:`labrig.capture.recover`),
        then every rig recording a crash left unsaved made an attempt of its salvaged captures,
        marked interrupted (listed as ``rig attempt``, or ``rig not saved`` when no camera had
        recorded a frame)."""
        from labrig.capture.recovery import Recovered, any_rig_unsaved, recover

        report = recover(self.store)  # the capture service is not needed, and not built
        if not any_rig_unsaved(self.store):
            return report
        from labrig.pipeline import save_interrupted_rigs

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
    dispatcher.register(PUBLISHER, publish_when_done, names=WATCHED, prefetch=load_jobs)
    dispatcher.register(SYNC_INDEXER, index_for_sync, names=INDEXED)
    storage = StorageMonitor(store)
    queue = JobQueue(
        store,
        registry or default_registry(store),
        clock or Clock(),
        lease or LeaseTerms(),
        heavy_paused=storage.heavy_jobs_paused,
    )
    services = Services(
        store=store,
        dispatcher=dispatcher,
        dispatcher_thread=DispatcherThread(dispatcher, poll_seconds),
        queue=queue,
        storage=storage,
        access=access or AccessControl(store),
        health_check=health_check,
        sync_destination=sync_destination,
        frame_clock=frame_clock,
    )
    # recording comes first: while this workstation records, analysis claims nothing new
    queue.paused = services.recording_now
    return services
