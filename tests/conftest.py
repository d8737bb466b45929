"""Shared test set-up. Qt must be told to run offscreen before any QApplication exists, on one
1280×800 screen: the size the window's layout is checked at (offscreen's own is 800×600)."""

from __future__ import annotations

import os
from pathlib import Path

_SCREEN = Path(__file__).parent / "support" / "offscreen_screen.json"
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_SCREEN}"

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from labrig.store import Store, open_store  # noqa: E402


@pytest.fixture(autouse=True)
def _no_ambient_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may touch the user's real data folder, nor the window settings kept in the user's
    profile: each test's own (Qt's user scope in-process, the XDG folder for an app it starts)."""
    monkeypatch.setenv("LABRIG_STORE", str(tmp_path / "ambient-store"))
    config = tmp_path / "user-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(config))


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """A fresh store (real SQLite file, migrated) in this test's own folder."""
    s = open_store(tmp_path / "store")
    yield s
    s.close()


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """The store of a test: SQLite, unless its suite's conftest runs it on both
    catalogs (see BACKENDS)."""
    return sqlite_store


# -- PostgreSQL: a throwaway cluster of the tests' own, started once when a test first needs it
# --------------


class PostgresDatabases:
    """Fresh databases on the session's cluster, each a copy of one migrated template."""

    TEMPLATE = "labrig_template"

    def __init__(self) -> None:
        from tests.support.pg_cluster import Cluster

        self.cluster = Cluster().start()
        with self.cluster.admin() as conn:
            conn.execute(f'CREATE DATABASE "{self.TEMPLATE}"')
        template = open_store(
            Path(self.cluster.folder) / "template-store", db=self.cluster.url(self.TEMPLATE)
        )
        template.close()  # a template must have no connections when it is copied

    def url(self) -> str:
        """The URL of a new database with Labrig's schema, for one test."""
        return self.cluster.url(self.cluster.create_database(template=self.TEMPLATE))

    def stop(self) -> None:
        self.cluster.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresDatabases]:
    databases = PostgresDatabases()
    yield databases
    databases.stop()


@pytest.fixture
def pg_store(tmp_path: Path, postgres: PostgresDatabases) -> Iterator[Store]:
    """A fresh store whose catalog is a database of its own on the test cluster (media in
    this test's folder)."""
    s = open_store(tmp_path / "store", db=postgres.url())
    yield s
    s.close()


#: the suites that run on both catalogs: request ``store`` through this in their conftest
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgresql),
]


def store_on(request: pytest.FixtureRequest, backend: str) -> Store:
    """The ``store`` (SQLite) or ``pg_store`` fixture's value, for a conftest
    parametrised over BACKENDS."""
    return request.getfixturevalue("sqlite_store" if backend == "sqlite" else "pg_store")  # type: ignore[no-any-return]
