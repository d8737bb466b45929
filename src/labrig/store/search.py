"""Conditions a search or a page of a list is written with, so that each reads a range of an index
rather than every row: an id's prefix, text taken literally in a LIKE pattern, a page's bounds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    CompoundSelect,
    FunctionElement,
    Select,
    String,
    and_,
    bindparam,
    distinct,
    func,
    select,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import InstrumentedAttribute

from labrig.errors import UsageError

#: what may begin an id (a UUID's text)
_ID_START = re.compile(r"[0-9a-f][0-9a-f-]*")


def search_words(search: str | None) -> str | None:
    """``search`` without its surrounding spaces, or None when nothing is left."""
    return search.strip() or None if search else None


def id_like(text: str) -> bool:
    """Whether ``text`` may begin an id (ids are lower-case hexadecimal with dashes)."""
    return _ID_START.fullmatch(text.lower()) is not None


def starts_with(
    column: InstrumentedAttribute[str] | InstrumentedAttribute[str | None], key: str
) -> ColumnElement[bool]:
    """``column`` (an indexed id) starts with ``key``: a range of the index that holds its first
    group of hexadecimal digits (any collation orders those alike, and 'z' after them all), then
    the exact prefix."""
    head = key.split("-", 1)[0]
    return and_(column >= head, column < head + "z", column.like(escaped(key) + "%", escape="\\"))


def escaped(text: str) -> str:
    """``text`` for a LIKE pattern with ``\\`` as its escape: % and _ taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def ordered_page(
    statement: Select[Any],
    when: InstrumentedAttribute[Any],
    key: InstrumentedAttribute[Any],
    *,
    newest_first: bool,
    limit: int | None,
    offset: int,
) -> Select[Any]:
    """``statement``'s rows by ``when`` then ``key`` (an index on both serves the order), oldest
    or newest first, the page from ``offset`` of at most ``limit`` (None: every row)."""
    order = (when.desc(), key.desc()) if newest_first else (when, key)
    return statement.order_by(*order).offset(offset or None).limit(limit)


#: how far past a page's start a list counts its rows: past it the screens and the commands say
#: "more than" (a count of a whole history, or of a third of the catalog, reads every row of it)
COUNT_AHEAD = 5_000


@dataclass(frozen=True)
class Tally:
    """How many rows a list finds, counted no further than needed: ``n``, or more than ``n``
    when ``more``."""

    n: int
    more: bool = False

    def __str__(self) -> str:
        return f"more than {self.n:,}" if self.more else f"{self.n:,}"


def bounded_count(
    session: Any, statement: Select[Any] | CompoundSelect[Any], at_most: int
) -> Tally:
    """How many rows ``statement`` finds, reading at most ``at_most`` + 1 of them: a count of a
    whole history on PostgreSQL reads every row (its indexes do not know which rows are visible),
    ``count(*)`` of 1,000,000 jobs 160-210 ms."""
    found = select(func.count()).select_from(statement.limit(at_most + 1).subquery())
    n = int(session.scalar(found) or 0)
    return Tally(min(n, at_most), n > at_most)


def bounded_count_once(session: Any, statement: Select[Any], at_most: int) -> Tally:
    """How many different values (not NULL) of its one column ``statement`` finds, counted no
    further than ``at_most``, for a statement that rarely finds a value twice (a camera's attempts
    from its captures: an attempt with two captures of the camera). Its first ``at_most`` + 1 rows
    are counted, each value once; only when a value was found twice among them and there are more
    rows are they counted again by DISTINCT, which gathers every row found before it can stop (a
    camera's 49,000 captures on PostgreSQL: 40 ms, against 10 for its first 5,001)."""
    first = statement.limit(at_most + 1).subquery()
    value = next(iter(first.c))
    rows, values = session.execute(select(func.count(), func.count(distinct(value)))).one()
    if values > at_most or rows <= at_most:  # more than at_most, or every row read
        return Tally(min(values, at_most), values > at_most)
    return bounded_count(session, statement.distinct(), at_most)


def check_page(limit: int | None, offset: int) -> None:
    """A page's bounds as the command line gives them: ``LABRIG_USAGE`` when they cannot be."""
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    if offset < 0:
        raise UsageError(f"--offset cannot be negative ({offset})")


class unindexed(FunctionElement[Any]):  # lower case: used as a column, like func.lower
    """A column that SQLite is not to find rows through (``+column``): where a query names a
    selective column and one that only looks selective (a stage's id, shared by a fifth of the
    jobs), SQLite's planner, which knows no column's spread, may walk the wrong one's index. Other
    databases see the column itself (their planners keep statistics)."""

    inherit_cache = True
    name = "unindexed"

    def __init__(self, column: InstrumentedAttribute[Any]) -> None:
        super().__init__(column)
        self.type = column.type


@compiles(unindexed)
def _unindexed(element: unindexed, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.clauses, **kw))


@compiles(unindexed, "sqlite")
def _unindexed_sqlite(element: unindexed, compiler: Any, **kw: Any) -> str:
    return "+" + str(compiler.process(element.clauses, **kw))


class probed_in(FunctionElement[bool]):  # lower case: used as a condition, like exists()
    """``column IN (rows)``, where ``rows`` are a few thousand keys of an index on ``column``:
    each looked up there. PostgreSQL's planner would rather read the whole table and hash it
    (a device's 2,740 captures among 300,000 attempts' captures: 40 ms against 20); given the
    keys as an array computed first, it looks each one up. Other databases see ``IN``."""

    inherit_cache = True
    name = "probed_in"

    def __init__(self, column: InstrumentedAttribute[Any], rows: Select[Any]) -> None:
        super().__init__(column, rows.scalar_subquery())


@compiles(probed_in)
def _probed_in(element: probed_in, compiler: Any, **kw: Any) -> str:
    column, rows = (compiler.process(c, **kw) for c in element.clauses)
    return f"{column} IN {rows}"


@compiles(probed_in, "postgresql")
def _probed_in_postgresql(element: probed_in, compiler: Any, **kw: Any) -> str:
    column, rows = (compiler.process(c, **kw) for c in element.clauses)
    return f"{column} = ANY(ARRAY{rows})"


class among(FunctionElement[bool]):  # lower case: used as a condition, like probed_in
    """``column IN (keys)`` for a page's keys (hundreds of them). On PostgreSQL ``column =
    ANY(:keys)``, the keys one array parameter: the statement's text is the same for any number
    of keys, so the driver does not parse it again at every page, nor SQLAlchemy render a
    parameter for each key (4 ms of a page of 200 attempts and their 2,000 jobs). Not for no
    keys: a page without rows reads nothing more."""

    inherit_cache = True
    name = "among"

    def __init__(self, column: InstrumentedAttribute[Any], keys: Sequence[str]) -> None:
        if not keys:
            raise ValueError("among() needs at least one key")
        listed = list(keys)
        super().__init__(
            column,
            bindparam(None, listed, expanding=True),
            bindparam(None, listed, type_=ARRAY(String)),
        )


@compiles(among)
def _among(element: among, compiler: Any, **kw: Any) -> str:
    column, listed, _array = element.clauses
    return f"{compiler.process(column, **kw)} IN {compiler.process(listed, **kw)}"


@compiles(among, "postgresql")
def _among_postgresql(element: among, compiler: Any, **kw: Any) -> str:
    column, _listed, array = element.clauses
    return f"{compiler.process(column, **kw)} = ANY({compiler.process(array, **kw)})"
