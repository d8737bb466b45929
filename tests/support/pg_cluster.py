"""A throwaway PostgreSQL cluster for the tests: initdb in a temporary folder,
listening on 127.0.0.1.

The server binaries come from Debian's ``postgresql`` package (``setup.sh test``
installs it when missing). PostgreSQL refuses to run as root, so as root the
cluster is created and run as the ``postgres`` system user. Each test gets a
database of its own, created from a migrated template (``CREATE DATABASE …
TEMPLATE``), so no test sees another's rows and none pays for the migrations.

Run it by hand to get a server for ``labrig --db`` or the benchmarks::

    .venv/bin/python -m tests.support.pg_cluster   # prints the URL; Ctrl-C or kill removes it
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

SERVER_USER = "postgres"
SUPERUSER = "labrig"


def _bin_dir() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    if not versions:
        raise RuntimeError(
            "PostgreSQL's server binaries are not installed: run ./setup.sh test (it installs "
            "Debian's postgresql package) or apt-get install postgresql"
        )
    return versions[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One server in a temporary folder; :meth:`stop` removes it."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="labrig-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self._names = itertools.count(1)
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.as_root:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True)

    def start(self) -> Cluster:
        if self.as_root:
            shutil.chown(self.folder, SERVER_USER)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        options = (
            f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=on -c max_connections=200 "
            "-c shared_buffers=64MB"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, FileNotFoundError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname=postgres", autocommit=True
        )

    def create_database(self, template: str | None = None) -> str:
        """A new empty database (or a copy of ``template``); its name."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            conn.execute(
                f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")
            )
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster]:
    cluster = Cluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    # SIGTERM (kill) and a SIGINT to a process started in the background, which the shell starts
    # with SIGINT ignored, stop and remove the cluster as Ctrl-C does
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, _interrupt)
    with running_cluster() as c:
        print(c.url(), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
