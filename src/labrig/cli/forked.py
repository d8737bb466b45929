"""Several processes of one command, forked after its start-up: ``labrig worker --processes N``.

The parent has imported what the command needs (its start-up; the entry point moved those objects
out of the collector's reach, so the children share their pages instead of copying them) and
has opened nothing: no catalog, no connection, no thread. Each child then runs the command as a
process of its own (its own store, connections and threads) and exits with its own code.

The parent only waits. Ctrl-C or SIGTERM is passed on to every child, which stops as one
``labrig worker`` does (running jobs hand themselves back). A child that ends with an error has
the others stopped too, and the parent exits with its code: a service manager then restarts the
whole pool rather than leave it short of a process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def can_fork() -> bool:
    return hasattr(os, "fork")


def run_forked(count: int, child: Callable[[int], int]) -> int:
    """``child(n)`` for n = 1 … ``count``, each in a process forked from this one; the first error
    code a child ended with (the others are then stopped), else 0."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # else what the parent buffered is written again by every child
    # children are waited for here, not reaped behind its back (an inherited SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    running: dict[int, int] = {}
    asked: list[int] = []  # the stop signals the parent was sent

    def pass_on(sig: int, _frame: FrameType | None) -> None:
        asked.append(sig)
        for pid in list(running):
            _signal(pid, sig)

    # a stop waits while the processes are forked: each child takes it once it has its own
    # handlers, the parent once it can pass it on to every child forked
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    previous = {sig: signal.signal(sig, pass_on) for sig in STOP_SIGNALS}
    try:
        try:
            for n in range(1, count + 1):
                pid = os.fork()
                if pid == 0:
                    os._exit(_child_code(child, n))
                running[pid] = n
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        return _wait(running, count, asked)
    finally:
        # only if something failed here: no child is left running unwatched
        for pid in running:
            _signal(pid, signal.SIGTERM)
        for pid in list(running):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _child_code(child: Callable[[int], int], n: int) -> int:
    """In a child: run it, as the command line would, and the code it exits with."""
    from labrig.cli import reported

    # a process group of its own: a terminal's Ctrl-C reaches it once, passed on by the parent
    os.setpgid(0, 0)
    for sig in STOP_SIGNALS:  # until the command sets its own: a stop while it starts
        signal.signal(sig, signal.default_int_handler)

    def run() -> int:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # one sent meanwhile comes here
        return child(n)

    try:
        code = reported(run)
    except BaseException:  # noqa: BLE001 - reported; the child's code says it failed
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a closed pipe: nothing more to say
            stream.flush()
    return code


def _wait(running: dict[int, int], count: int, asked: list[int]) -> int:
    """In the parent: wait for every child in ``running`` (each removed as it ends); the first
    error code."""
    failed = 0
    while running:
        pid, status = os.wait()
        n = running.pop(pid, None)
        if n is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        if code == 0 or failed:
            continue
        failed = code if code > 0 else 128 - code  # killed by a signal: as a shell says
        if not asked:  # not a stop the operator asked for: the pool is short of a process
            for other in running:
                _signal(other, signal.SIGTERM)
            with contextlib.suppress(OSError):  # one write: the children share this output
                sys.stderr.write(
                    f"labrig: worker process {n} of {count} ended with code {failed}; "
                    "stopping the others\n"
                )
                sys.stderr.flush()
    return failed


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has just ended; the wait collects it
        os.kill(pid, sig)
