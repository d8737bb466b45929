"""Processes that open one new catalog at the same moment: each opens it, one makes it.

(A window and a worker after an upgrade, or the worker services a workstation starts at boot.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from labrig.store import migrate, open_store
from tests.conftest import BACKENDS

REPO = Path(__file__).resolve().parents[2]
#: waits, with the store's code imported, for a line on stdin; then opens the catalog
OPENER = (
    "import sys\n"
    "from labrig.store import open_store\n"
    "sys.stdin.readline()\n"
    "open_store(sys.argv[1], db=sys.argv[2] or None).close()\n"
    "print('opened')\n"
)


def _open_at_once(root: Path, url: str, processes: int) -> list[subprocess.CompletedProcess[str]]:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(root), url],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for child in children:  # each is waiting, its imports done: they open within a moment
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    done = []
    for child in children:
        out, err = child.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    return done


@pytest.mark.parametrize("backend", BACKENDS)
def test_processes_opening_a_new_catalog_at_once_all_open_it(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    for round_ in range(3):
        root = tmp_path / f"store-{round_}"
        url = ""
        if backend == "postgresql":  # an empty database: the first opener migrates it
            postgres: Any = request.getfixturevalue("postgres")
            url = postgres.cluster.url(postgres.cluster.create_database())
        results = _open_at_once(root, url, 4)
        said = [(r.returncode, r.stderr[-600:]) for r in results]
        assert all(r.returncode == 0 and r.stdout == "opened\n" for r in results), said
        store = open_store(root, db=url or None)
        try:
            with store.read() as session:
                version = session.scalar(text("SELECT version_num FROM alembic_version"))
            assert version == migrate.head_revision()
        finally:
            store.close()
