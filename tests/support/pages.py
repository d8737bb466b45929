"""Damage to an SQLite catalog's pages, made in the file itself (issue 16): an index whose key no
longer matches its table's row, which SQLite's ``integrity_check`` reports and the ``quick_check``
run at every open does not."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

#: imported_sources' primary key (source_sha256): the index that keeps a file from being imported
#: twice, and the last page of a store made by a few imports
IMPORTED_INDEX = "sqlite_autoindex_imported_sources_1"
#: what integrity_check then says, after "row N " (N the table row whose key was changed, which
#: depends on the order of the digests, so on the bytes OpenCV's encoder wrote)
MISSING_ROW = f"missing from index {IMPORTED_INDEX}"


def pragma(db: Path, check: str) -> list[str]:
    """``PRAGMA check`` on a closed database, read as immutable (nothing is created beside it)."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True) as conn:
        return [row[0] for row in conn.execute(f"PRAGMA {check}")]


def rows(db: Path, tables: tuple[str, ...]) -> dict[str, int]:
    """How many rows each table of the closed database ``db`` holds."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def damage_the_imported_index(db: Path) -> None:
    """Change the last hex digit of the smallest digest stored in the root page of
    :data:`IMPORTED_INDEX`, in the closed database file ``db``: the page stays well-formed
    (quick_check passes), but its key no longer matches the row (integrity_check:
    :data:`MISSING_ROW`), so a lookup of that digest finds nothing."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True) as conn:
        [root] = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (IMPORTED_INDEX,)
        ).fetchone()
        [page_size] = conn.execute("PRAGMA page_size").fetchone()
        [key] = conn.execute("SELECT min(source_sha256) FROM imported_sources").fetchone()
    data = bytearray(db.read_bytes())
    page = page_size * (root - 1)
    at = data.index(key.encode(), page, page + page_size) + len(key) - 1
    data[at] = ord("0" if chr(data[at]) != "0" else "1")
    db.write_bytes(bytes(data))
    assert pragma(db, "quick_check") == ["ok"]  # what every open runs
    [finding] = pragma(db, "integrity_check")
    assert re.fullmatch(rf"row \d+ {MISSING_ROW}", finding), finding
