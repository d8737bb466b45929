"""What a read sent to the database, and how the database means to run it: the statements caught
on their way to the driver, and each one's plan (SQLite's ``EXPLAIN QUERY PLAN``, PostgreSQL's
``EXPLAIN``), for tests that pin a list's queries to their indexes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from labrig.store import Store

#: transaction control: not statements of the read
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")


@contextmanager
def statements(store: Store) -> Iterator[list[tuple[str, Any]]]:
    """The statements (SQL, parameters) sent to ``store``'s database meanwhile, in order, without
    transaction control."""
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        if statement.split(None, 1)[0].upper() not in CONTROL:
            sent.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        yield sent
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)


def plans(store: Store, sent: list[tuple[str, Any]], table: str | None = None) -> list[str]:
    """The plan of each statement of ``sent`` (those reading ``FROM table``, when given), its steps
    joined by `` | ``."""
    explain = "EXPLAIN " if store.dialect == "postgresql" else "EXPLAIN QUERY PLAN "
    found = []
    with store.read() as session:
        connection = session.connection()
        for statement, parameters in sent:
            if table is None or f"FROM {table}" in statement:
                rows = connection.exec_driver_sql(explain + statement, parameters).all()
                found.append(" | ".join(str(row[-1]) for row in rows))
    return found


def plan_of(store: Store, statement: Any) -> str:
    """The plan of ``statement`` (a select, its values written into it), its steps joined by
    `` | ``."""
    with store.read() as session:
        sql = statement.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
    return plans(store, [(str(sql), ())])[0]
