"""The catalog on PostgreSQL: opened and migrated like SQLite, refusing what is not its own,
append-only too."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text

from labrig.access import AccessControl
from labrig.bootstrap import bootstrap
from labrig.errors import (
    DatabaseUnreachableError,
    ForeignDatabaseError,
    NetworkFilesystemError,
    SchemaTooNewError,
    UnsupportedDatabaseError,
)
from labrig.store import Store, open_store
from labrig.store.migrate import head_revision
from labrig.store.paths import refuse_network_filesystem
from tests.conftest import PostgresDatabases

pytestmark = pytest.mark.postgresql


def test_a_postgresql_catalog_is_migrated_to_head_with_media_in_the_data_folder(
    pg_store: Store,
) -> None:
    assert pg_store.dialect == "postgresql"
    assert pg_store.revision() == head_revision()
    assert pg_store.meta("app") == "labrig"
    assert pg_store.media_dir.is_dir()


def test_labrig_db_in_the_environment_chooses_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: PostgresDatabases
) -> None:
    monkeypatch.setenv("LABRIG_DB", postgres.url())
    store = open_store(tmp_path / "store")
    try:
        assert store.dialect == "postgresql" and not (tmp_path / "store" / "labrig.db").exists()
    finally:
        store.close()


def test_a_database_of_another_program_is_refused_untouched(
    tmp_path: Path, postgres: PostgresDatabases
) -> None:
    name = postgres.cluster.create_database()
    with psycopg.connect(
        postgres.cluster.url(name).replace("postgresql+psycopg", "postgresql"), autocommit=True
    ) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(ForeignDatabaseError, match="belongs to another program"):
        open_store(tmp_path / "store", db=postgres.cluster.url(name))
    with psycopg.connect(
        postgres.cluster.url(name).replace("postgresql+psycopg", "postgresql")
    ) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ]
    assert tables == ["invoices"]


def test_a_schema_from_a_newer_labrig_is_refused(pg_store: Store, tmp_path: Path) -> None:
    url = pg_store.engine.url.render_as_string(hide_password=False)
    with pg_store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
    pg_store.close()
    with pytest.raises(SchemaTooNewError, match="newer Labrig"):
        open_store(tmp_path / "again", db=url)


def test_an_unreachable_server_and_a_wrong_url_are_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(DatabaseUnreachableError, match="Check that the server runs") as caught:
        open_store(tmp_path / "store", db="postgresql+psycopg://labrig:secret@127.0.0.1:1/labrig")
    assert "secret" not in str(caught.value)  # passwords never reach a message
    with pytest.raises(UnsupportedDatabaseError, match="takes a PostgreSQL URL"):
        open_store(tmp_path / "store", db="mysql://x@y/z")


def test_an_sqlite_catalog_on_a_network_filesystem_is_refused() -> None:
    mounts = "fileserver:/lab /mnt/lab nfs4 rw,relatime 0 0\n/dev/vda1 / ext4 rw 0 0\n"
    with pytest.raises(NetworkFilesystemError, match="--db postgresql") as caught:
        refuse_network_filesystem(Path("/mnt/lab/labrig"), mounts)
    assert caught.value.code == "LABRIG_SQLITE_ON_NETWORK_FS"
    refuse_network_filesystem(Path("/home/lab/labrig"), mounts)  # a local disk is fine
    with pytest.raises(NetworkFilesystemError):
        refuse_network_filesystem(Path("//fileserver/lab/labrig"))


def test_the_audit_chain_and_append_only_tables_hold_on_postgresql(pg_store: Store) -> None:
    services = bootstrap(store=pg_store, access=AccessControl(pg_store, user=lambda: "ana"))
    services.governance.access.set_role("ana", "admin", "first admin of the lab")
    services.governance.access.set_role("ben", "reviewer", "reviews the reach study")
    report = services.governance.audit.verify()
    assert report.intact and report.entries == 2
    for statement in (
        "UPDATE audit_entries SET reason = 'nothing happened'",
        "DELETE FROM audit_entries",
        "TRUNCATE audit_entries",
        "DELETE FROM role_assignments",
    ):
        with pytest.raises(Exception, match="append-only"), pg_store.engine.begin() as conn:
            conn.execute(text(statement))
    assert services.governance.audit.verify().entries == 2


def test_two_workstations_appending_to_the_audit_chain_at_once_both_succeed(
    pg_store: Store, tmp_path: Path
) -> None:
    import threading

    url = pg_store.engine.url.render_as_string(hide_password=False)
    first = bootstrap(store=pg_store, access=AccessControl(pg_store, user=lambda: "ana"))
    first.governance.access.set_role("ana", "admin", "first admin")
    # another workstation: its own engine and connections
    second_store = open_store(tmp_path / "second", db=url)
    second = bootstrap(store=second_store, access=AccessControl(second_store, user=lambda: "ana"))
    errors: list[BaseException] = []

    def assign(services: object, prefix: str) -> None:
        try:
            for i in range(15):
                services.governance.access.set_role(f"{prefix}{i}", "technician", "joined the lab")  # type: ignore[attr-defined]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=assign, args=(s, p)) for s, p in ((first, "a"), (second, "b"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    second_store.close()
    assert errors == []
    report = first.governance.audit.verify()
    assert report.intact and report.entries == 31
