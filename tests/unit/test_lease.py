"""Process liveness as leases see it: a zombie (killed, not yet reaped) is not alive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from labrig.jobs.lease import process_alive


def test_a_running_process_is_alive_and_a_reaped_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert process_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid)
    assert process_alive(os.getpid())
    assert not process_alive(0) and not process_alive(-5)


def test_a_killed_but_unreaped_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while process_alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not process_alive(child.pid)  # still a zombie: we have not waited on it yet
    child.wait()
