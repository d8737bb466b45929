"""The plain-thread executor behind ``labrig worker``: claims only for free slots, runs, repeats.

Pool threads only run stages (:func:`~labrig.jobs.runner.execute_claim`); the
loop commits their outcomes. Whatever runs have ended by the time the loop comes
round are committed together, with the claim of as many new jobs as there are
free slots (started in the same transaction), in one write transaction: one
durable commit per batch instead of three per job. Each outcome is still fenced
on its own (see :meth:`~labrig.jobs.fenced.FencedWrites.finish`). New claims are
handed to the pool before that transaction commits, so their runs overlap the
commit's fsync; a run whose claim did not commit is void and writes nothing.

The GUI's QThreadPool executor (``labrig.ui.qt_executor``) runs the same
:func:`~labrig.jobs.runner.run_claim`; only the threads differ.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from labrig.jobs.fenced import FencedWrites, Outcome
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import ProgressCallback, RunResult, execute_claim
from labrig.jobs.views import Claim

#: after the first run ends, wait at most this long for the others to end too, to commit them together
GATHER_SECONDS = 0.002

log = logging.getLogger(__name__)


@dataclass
class ExecutorStats:
    finished: int = 0
    lease_lost: int = 0
    by_state: dict[str, int] = field(default_factory=dict)

    def add(self, result: RunResult) -> None:
        if result.view is None:
            self.lease_lost += 1
            return
        self.finished += 1
        self.by_state[result.view.state.value] = self.by_state.get(result.view.state.value, 0) + 1


class ThreadExecutor:
    """Runs jobs on ``workers`` threads until stopped, or (drain) until no job can run."""

    def __init__(self, queue: JobQueue, workers: int = 2, poll_seconds: float = 0.25,
                 on_progress: ProgressCallback | None = None) -> None:
        self.queue, self.workers, self.poll_seconds = queue, workers, poll_seconds
        self.writes = FencedWrites(queue)
        self.on_progress = on_progress
        self.stopping = threading.Event()
        self._wake = threading.Event()
        queue.store.on_events_committed(self._wake.set)  # a local enqueue wakes us at once

    def stop(self) -> None:
        """Ask running stages to hand their jobs back, and the loop to end (any thread)."""
        self.stopping.set()
        self._wake.set()

    def run(self, drain: bool = False) -> ExecutorStats:
        stats = ExecutorStats()
        running: set[Future[Outcome]] = set()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="labrig-job") as pool:
            early = _EarlyStart(self, pool, running)
            while not self.stopping.is_set():
                self._wake.clear()  # a run ending or an event committed from now on wakes the wait below
                ended = self._gather(running)
                running -= ended
                before = len(running)
                slots = 0 if early.voided else self.workers - len(running)
                results, claims = self.writes.finish(early.outcomes(ended), slots, start=True, early=early)
                for result in results:
                    stats.add(result)
                for claim in claims:  # claimed on a session path: started after the commit
                    early.submit(claim)
                claimed = len(running) > before
                if drain and not running and self.queue.idle():
                    break
                if not claimed and not ended:
                    self._wake.wait(self.poll_seconds)
            ended = set(wait(running).done)
            for result in self.writes.finish(early.outcomes(ended))[0]:
                stats.add(result)
        return stats

    def _gather(self, running: set[Future[Outcome]]) -> set[Future[Outcome]]:
        """The runs that have ended; once one has, wait a moment for the rest so they commit together."""
        ended = {f for f in running if f.done()}
        if ended and len(ended) < len(running):
            deadline = time.monotonic() + GATHER_SECONDS
            while len(ended) < len(running) and (left := deadline - time.monotonic()) > 0:
                self._wake.wait(left)
                self._wake.clear()
                ended = {f for f in running if f.done()}
        return ended


class _EarlyStart:
    """Starts claims on the pool inside the transaction that leases them, so runs overlap the commit's fsync.

    A claim whose transaction then fails to commit is void: its run's outcome is
    reported lost (nothing is written for it) and no new claims are made until
    every void run has ended, since a new claim of the same job could carry the
    same fencing token.
    """

    def __init__(self, executor: ThreadExecutor, pool: ThreadPoolExecutor, running: set[Future[Outcome]]) -> None:
        self.executor, self.pool, self.running = executor, pool, running
        self._void: set[tuple[str, int]] = set()

    @property
    def voided(self) -> bool:
        return bool(self._void)

    def submit(self, claim: Claim) -> None:
        ex = self.executor
        future = self.pool.submit(execute_claim, ex.writes, ex.queue.registry, claim, ex.on_progress, ex.stopping)
        future.add_done_callback(lambda _f: ex._wake.set())
        self.running.add(future)

    def start(self, claims: list[Claim]) -> None:
        for claim in claims:
            self.submit(claim)

    def void(self, claims: list[Claim]) -> None:
        self._void.update((c.job_id, c.token) for c in claims)

    def outcomes(self, ended: set[Future[Outcome]]) -> list[Outcome]:
        """The ended runs' outcomes, a void run's as ``lost``."""
        out = []
        for future in ended:
            outcome = future.result()
            key = (outcome.claim.job_id, outcome.claim.token)
            if key in self._void:
                self._void.discard(key)
                outcome = Outcome(outcome.claim, "lost")
            out.append(outcome)
        return out
