"""The plain-thread executor behind ``labrig worker``: claims only for free slots, runs, repeats.

Pool threads only run stages (:func:`~labrig.jobs.runner.execute_claim`); the
loop commits their outcomes. Whatever runs have ended by the time the loop comes
round are committed together, with the claim of as many new jobs as there are
free slots (started in the same transaction), in one write transaction: one
durable commit per batch instead of three per job. Each outcome is still fenced
on its own (see :meth:`~labrig.jobs.fenced.FencedWrites.finish`). New claims are
handed to the pool before that transaction commits, so their runs overlap the
commit's fsync; a run whose claim did not commit is void and writes nothing.

The GUI's QThreadPool executor (``labrig.ui.shell.qt_executor``) runs the same
:func:`~labrig.jobs.runner.run_claim`; only the threads differ.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from labrig.jobs.completions import Outcome
from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue, Left
from labrig.jobs.runner import RunResult, execute_claim, yield_to_recording
from labrig.jobs.views import Claim
from labrig.tasks import KeyedProgress

#: after the first run ends, wait at most this long for the others to end too,
#: to commit them together
GATHER_SECONDS = 0.002

#: how soon a draining executor with nothing to run looks again while other workers hold the
#: queue's last jobs: their ends wake only their own processes (the poll interval kept it up to
#: a quarter of a second past the last job, a tenth of a 2,000-job drain in four processes)
DRAIN_POLL_SECONDS = 0.02

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

    def __init__(
        self,
        queue: JobQueue,
        workers: int = 2,
        poll_seconds: float = 0.25,
        on_progress: KeyedProgress | None = None,
    ) -> None:
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
        running: set[_Run] = set()
        with _Pool(self.workers, self._execute, self._wake.set) as pool:
            early = _EarlyStart(pool, running)
            while not self.stopping.is_set():
                # a run ending or an event committed from now on wakes the wait below
                self._wake.clear()
                ended = self._gather(running)
                running -= ended
                before = len(running)
                slots = 0 if early.voided else self.workers - len(running)
                results, claims = self.writes.finish(
                    early.outcomes(ended), slots, start=True, early=early
                )
                for result in results:
                    stats.add(result)
                for claim in claims:  # claimed on a session path: started after the commit
                    early.submit(claim)
                claimed = len(running) > before
                wait = self.poll_seconds
                if drain and not running:
                    left = self.queue.left_to_drain()
                    if left is Left.NOTHING:
                        break
                    if left is Left.HELD:  # by other workers, whose commits do not wake this
                        wait = min(wait, DRAIN_POLL_SECONDS)  # one; the drain ends soon after
                if not claimed and not ended:
                    self._wake.wait(wait)
            while not all(r.done for r in running):  # stopping: the runs hand their jobs back
                self._wake.wait(self.poll_seconds)
                self._wake.clear()
            for result in self.writes.finish(early.outcomes(set(running)))[0]:
                stats.add(result)
        return stats

    def _execute(self, claim: Claim) -> Outcome:
        return execute_claim(
            self.writes, self.queue.registry, claim, self.on_progress, self.stopping
        )

    def _gather(self, running: set[_Run]) -> set[_Run]:
        """The runs that have ended; once one has, wait a moment for the rest so they
        commit together."""
        ended = {r for r in running if r.done}
        if ended and len(ended) < len(running):
            deadline = time.monotonic() + GATHER_SECONDS
            while len(ended) < len(running) and (left := deadline - time.monotonic()) > 0:
                self._wake.wait(left)
                self._wake.clear()
                ended = {r for r in running if r.done}
        return ended


class _Run:
    """One claim handed to the pool: once ``done``, its outcome
    (or the exception the run raised)."""

    __slots__ = ("claim", "done", "error", "outcome")

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.done = False
        self.outcome: Outcome | None = None
        self.error: BaseException | None = None

    def result(self) -> Outcome:
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


class _Pool:
    """``workers`` threads that run the claims handed to them, calling ``on_done`` after each.

    Lighter than a ``ThreadPoolExecutor`` (no Future with its own lock and
    condition per run): the committing thread hands over every claim itself,
    inside its write transaction, so what a hand-over costs is paid per job on
    the one thread that every commit waits for.
    """

    def __init__(
        self, workers: int, run: Callable[[Claim], Outcome], on_done: Callable[[], None]
    ) -> None:
        self._run, self._on_done = run, on_done
        self._todo: queue.SimpleQueue[_Run | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"labrig-job_{i}", daemon=True)
            for i in range(workers)
        ]

    def __enter__(self) -> _Pool:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _error: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        for _ in self._threads:
            self._todo.put(None)
        for thread in self._threads:
            thread.join()

    def submit(self, claim: Claim) -> _Run:
        run = _Run(claim)
        self._todo.put(run)
        return run

    def _work(self) -> None:
        yield_to_recording()  # a job thread: below any recording of this process
        while (run := self._todo.get()) is not None:
            try:
                run.outcome = self._run(run.claim)
            except BaseException as exc:  # noqa: BLE001 - handed to the loop, which raises it (as Future did)
                run.error = exc
            finally:
                run.done = True
                self._on_done()


class _EarlyStart:
    """Starts claims on the pool inside the transaction that leases them, so runs overlap
    the commit's fsync.

    A claim whose transaction then fails to commit is void: its run's outcome is
    reported lost (nothing is written for it) and no new claims are made until
    every void run has ended, since a new claim of the same job could carry the
    same fencing token.
    """

    def __init__(self, pool: _Pool, running: set[_Run]) -> None:
        self.pool, self.running = pool, running
        self._void: set[tuple[str, int]] = set()

    @property
    def voided(self) -> bool:
        return bool(self._void)

    def submit(self, claim: Claim) -> None:
        self.running.add(self.pool.submit(claim))

    def start(self, claims: list[Claim]) -> None:
        for claim in claims:
            self.submit(claim)

    def void(self, claims: list[Claim]) -> None:
        self._void.update((c.job_id, c.token) for c in claims)

    def outcomes(self, ended: set[_Run]) -> list[Outcome]:
        """The ended runs' outcomes, a void run's as ``lost``."""
        out = []
        for run in ended:
            outcome = run.result()
            key = (outcome.claim.job_id, outcome.claim.token)
            if key in self._void:
                self._void.discard(key)
                outcome = Outcome(outcome.claim, "lost")
            out.append(outcome)
        return out
