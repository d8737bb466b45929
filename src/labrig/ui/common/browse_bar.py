"""Above a list that pages through the whole catalog: a search box and the buttons to the newer and
older pages, with the words that say which rows are shown (the Results and Review screens).

The search is taken when typing pauses (or on Enter) and starts again at the first page, as does a
period chosen (today, the last 7 or 30 days, the last 12 months); the page asked for is plain data
(:attr:`BrowseBar.words`, :attr:`BrowseBar.days`, :attr:`BrowseBar.offset`,
:attr:`BrowseBar.after`) that a read on a pool thread may take. An older page is read after the
shown page's last row when the list says where that row stands (:attr:`PageOfRows.next_after`), so
a page deep in the list costs what the first does; else by its offset. Threading contract: GUI
thread only.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from labrig.store.search import Tally

Row = TypeVar("Row")
#: where a row stands in its list's order (the values it is sorted by), what a page after it starts
#: from
Position = tuple[Any, ...]
#: how long typing must pause before the search is run
SETTLE_MS = 300
SEARCH_TIP = (
    "Type the start of a subject code, protocol or operator (any letter case), or of an id: every "
    "page of the catalog is searched"
)


#: the periods a list may be limited to: the words, and how many days back (0: since midnight;
#: None: any time)
PERIODS: tuple[tuple[str, int | None], ...] = (
    ("Any time", None),
    ("Today", 0),
    ("Last 7 days", 7),
    ("Last 30 days", 30),
    ("Last 12 months", 365),
)


def period_start(days: int | None, now: datetime | None = None) -> datetime | None:
    """When a period of ``days`` back (0: today, from local midnight) begins; None: any time."""
    if days is None:
        return None
    now = now or datetime.now().astimezone()
    if days == 0:
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    return now - timedelta(days=days)


def period_words(days: int | None) -> str | None:
    return next((w.lower() for w, d in PERIODS if d == days), None) if days is not None else None


class PageOfRows(list[Row], Generic[Row]):
    """The rows of one page, with how many rows there are on every page (more than ``total`` when
    ``more``: the count stopped there) and where this one starts, and the search and period it
    was read for."""

    def __init__(
        self,
        rows: list[Row],
        total: int | Tally,
        offset: int,
        search: str | None,
        days: int | None = None,
    ) -> None:
        super().__init__(rows)
        tally = total if isinstance(total, Tally) else Tally(total)
        self.total, self.more = tally.n, tally.more
        self.offset, self.search, self.days = offset, search, days
        # where the next older page starts: its last row's position in the list's order (None: the
        # older page is read by its offset)
        self.next_after: Position | None = None
        # whether rows follow this page, when the list read one row more to know (None: from the
        # count; rows made since a deep page was reached leave its count ahead of its rows)
        self.older: bool | None = None

    @property
    def total_words(self) -> str:
        """``1,234``, or ``more than 10,000`` when the count stopped there."""
        return f"more than {self.total:,}" if self.more else f"{self.total:,}"


class BrowseBar(QWidget):
    """The search box and the page buttons; :attr:`changed` asks for the list to be read again."""

    changed = Signal()

    def __init__(
        self,
        page_size: int,
        placeholder: str,
        parent: QWidget | None = None,
        tip: str = SEARCH_TIP,
        what: str = "rows",
        narrow: bool = False,
    ) -> None:
        super().__init__(parent)
        self.page_size = page_size
        self.words: str | None = None  # the search in force (None: every row)
        self.days: int | None = None  # the period in force, in days back (None: any time)
        self.offset = 0  # the first row of the page asked for
        # it starts after the row at this position (None: at the offset)
        self.after: Position | None = None
        # the pages turned past, to go back to: each one's offset and position
        self._turned: list[tuple[int, Position | None]] = []
        self._next_after: Position | None = None  # the shown page's PageOfRows.next_after
        self.period = QComboBox()
        self.period.setObjectName("browsePeriod")
        self.period.setToolTip(f"Only the {what} made in this period")
        for words, _days in PERIODS:
            self.period.addItem(words)
        self.period.currentIndexChanged.connect(self._take_period)
        self.search = QLineEdit()
        self.search.setObjectName("browseSearch")
        self.search.setPlaceholderText(placeholder)
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(tip)
        self.newer = QPushButton("◀ Newer")
        self.newer.setObjectName("browseNewer")
        self.newer.setToolTip(f"The {page_size} newer rows")
        self.older = QPushButton("Older ▶")
        self.older.setObjectName("browseOlder")
        self.older.setToolTip(f"The {page_size} older rows")
        for button in (self.newer, self.older):
            button.setEnabled(False)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._take_search)
        self.search.textChanged.connect(lambda _text: self._settle.start())
        self.search.returnPressed.connect(self._take_search)
        self.newer.clicked.connect(lambda: self._turn(-1))
        self.older.clicked.connect(lambda: self._turn(1))
        # the list keeps its own narrowest width: the bar gives way (the box shrinks first)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.search.setMinimumWidth(40)
        # one row above a wide table; above a narrow list (the Results and Review screens), the
        # search box has a row of its own, so its words are not cut off
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        if narrow:
            outer.addWidget(self.search)
            row.addWidget(self.period, 1)
        else:
            row.addWidget(self.period)
            row.addWidget(self.search, 1)
        row.addWidget(self.newer)
        row.addWidget(self.older)
        outer.addLayout(row)

    def show_page(self, page: PageOfRows[Row]) -> None:
        """Enable the buttons for the page read (it may be of an older search)."""
        current = (page.search, page.days, page.offset) == (self.words, self.days, self.offset)
        if current:
            self._next_after = page.next_after
        self.newer.setEnabled(current and page.offset > 0)
        follow = page.older
        if follow is None:
            follow = page.more or page.offset + len(page) < page.total
        self.older.setEnabled(current and follow)

    def status(
        self,
        page: PageOfRows[Row],
        noun: str,
        plural: str,
        none_yet: str,
        order: str = "newest first",
    ) -> str:
        """The line under the list for ``page`` in ``order`` (``none_yet`` when the catalog has
        none), with the buttons set for it."""
        self.show_page(page)
        if not page.total and page.search is None and page.days is None:
            return none_yet
        said = self.describe(page, noun, plural)
        return f"{said}, {order}." if page else f"{said}."

    @staticmethod
    def describe(page: PageOfRows[Row], noun: str, plural: str) -> str:
        """``Attempts 201–400 of 99,900``; ``3 attempts found for 'S0001'``; ``12 attempts`` when
        every one is on this page; each followed by its period (``… (last 7 days)``)."""
        when = period_words(page.days)
        said = BrowseBar._describe(page, noun, plural)
        if when is None:
            return said
        if not page.total and page.search is None:
            return f"No {plural} made {'today' if page.days == 0 else 'in the ' + when}"
        return f"{said} ({when})"

    @staticmethod
    def _describe(page: PageOfRows[Row], noun: str, plural: str) -> str:
        first = page.offset
        if page.offset and page.older is False and not page.more and page.total >= len(page):
            # an older page's rows are the last ones, however many were made since it was reached
            # (not the first page: its rows and its count are read one after the other)
            first = page.total - len(page)
        shown = f"{first + 1:,}–{first + len(page):,}"
        if page.search is not None:
            if not page.total:
                return f"Nothing found for '{page.search}'"
            word = noun if page.total == 1 and not page.more else plural
            found = f"{page.total_words} {word} found for '{page.search}'"
            return found + (f", {shown} shown" if page.more or page.total > len(page) else "")
        if not page:
            return f"No {plural} on this page: {page.total_words} in all"
        if page.offset == 0 and page.total == len(page) and not page.more:  # all on one page
            return f"{page.total:,} {noun if page.total == 1 else plural}"
        return f"{plural.capitalize()} {shown} of {page.total_words}"

    def restart(self) -> None:
        """The first page again (a filter or the order changed): the buttons wait for it, since
        the shown page's last row stands in the old order or filter."""
        self.offset, self.after, self._turned, self._next_after = 0, None, [], None
        self.newer.setEnabled(False)
        self.older.setEnabled(False)

    def since(self) -> datetime | None:
        """When the period in force begins, now (None: any time)."""
        return period_start(self.days)

    @Slot()
    def _take_search(self) -> None:
        self._settle.stop()
        words = self.search.text().strip() or None
        if words != self.words:
            self.words = words
            self.restart()
            self.changed.emit()

    @Slot(int)
    def _take_period(self, index: int) -> None:
        self.days = PERIODS[max(index, 0)][1]
        self.restart()
        self.changed.emit()

    def _turn(self, pages: int) -> None:
        if pages > 0:
            self._turned.append((self.offset, self.after))
            self.offset, self.after = self.offset + self.page_size, self._next_after
        elif self._turned:  # Newer is enabled past the first page only, reached by turning
            self.offset, self.after = self._turned.pop()
        self.newer.setEnabled(False)
        self.older.setEnabled(False)
        self.changed.emit()
