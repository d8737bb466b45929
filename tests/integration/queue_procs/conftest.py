"""The ``workers`` fixture: starts worker children and makes sure none outlives its test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from labrig.store import DB_ENV_VAR
from tests.conftest import BACKENDS

REPO = Path(__file__).resolve().parents[3]


class Workers:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path, self.procs = tmp_path, list[subprocess.Popen[bytes]]()

    def spawn(self, store_root: Path, mode: str, *args: str) -> subprocess.Popen[bytes]:
        """A worker child (worker_child.py) on ``store_root``; its stderr goes to
        ``child-N.err``."""
        err = self.tmp_path / f"child-{len(self.procs)}.err"
        with err.open("wb") as fh:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.integration.queue_procs.worker_child",
                    str(store_root),
                    mode,
                    *args,
                ],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=fh,
            )
        self.procs.append(proc)
        return proc

    def stderr(self, proc: subprocess.Popen[bytes]) -> str:
        return (self.tmp_path / f"child-{self.procs.index(proc)}.err").read_text()

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)  # a stopped process would ignore nothing else
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    w = Workers(tmp_path)
    try:
        yield w
    finally:
        w.kill_all()


@pytest.fixture(autouse=True, params=BACKENDS)
def catalog(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every multi-process test runs on SQLite and on PostgreSQL: the worker children
    inherit LABRIG_DB."""
    if request.param == "postgresql":
        monkeypatch.setenv(DB_ENV_VAR, request.getfixturevalue("postgres").url())
    return str(request.param)
