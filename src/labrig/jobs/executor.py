"""The plain-thread executor behind ``labrig worker``: claims only for free slots, runs, repeats.

The GUI's QThreadPool executor (``labrig.ui.qt_executor``) drives the same
:func:`~labrig.jobs.runner.run_claim`; only the threads differ.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from labrig.jobs.fenced import FencedWrites
from labrig.jobs.queue import JobQueue
from labrig.jobs.runner import ProgressCallback, RunResult, run_claim

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
        running: set[Future[RunResult]] = set()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="labrig-job") as pool:
            while not self.stopping.is_set():
                claims = self.queue.claim(self.workers - len(running))
                running |= {pool.submit(run_claim, self.writes, self.queue.registry, c, self.on_progress,
                                        self.stopping) for c in claims}
                if drain and not running and self.queue.idle():
                    break
                if not claims:
                    self._wait(running)
                running = self._collect(running, stats)
            for result in wait(running).done:
                stats.add(result.result())
        return stats

    def _wait(self, running: set[Future[RunResult]]) -> None:
        if running and len(running) >= self.workers:
            wait(running, timeout=self.poll_seconds, return_when=FIRST_COMPLETED)
        else:
            self._wake.wait(self.poll_seconds)
            self._wake.clear()

    @staticmethod
    def _collect(running: set[Future[RunResult]], stats: ExecutorStats) -> set[Future[RunResult]]:
        for future in [f for f in running if f.done()]:
            stats.add(future.result())
        return {f for f in running if not f.done()}
