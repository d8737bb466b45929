"""Above a list that pages through the whole catalog: a search box and the buttons to the newer and
older pages, with the words that say which rows are shown (the Results and Review screens).

The search is taken when typing pauses (or on Enter) and starts again at the first page; the page
asked for is plain data (:attr:`BrowseBar.words`, :attr:`BrowseBar.offset`) that a read on a pool
thread may take. Threading contract: GUI thread only.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QSizePolicy, QWidget

Row = TypeVar("Row")
#: how long typing must pause before the search is run
SETTLE_MS = 300
SEARCH_TIP = (
    "Type the start of a subject code, protocol or operator (any letter case), or of an id: every "
    "page of the catalog is searched"
)


class PageOfRows(list[Row], Generic[Row]):
    """The rows of one page, with how many rows there are on every page and where this one
    starts."""

    def __init__(self, rows: list[Row], total: int, offset: int, search: str | None) -> None:
        super().__init__(rows)
        self.total, self.offset, self.search = total, offset, search


class BrowseBar(QWidget):
    """The search box and the page buttons; :attr:`changed` asks for the list to be read again."""

    changed = Signal()

    def __init__(
        self,
        page_size: int,
        placeholder: str,
        parent: QWidget | None = None,
        tip: str = SEARCH_TIP,
    ) -> None:
        super().__init__(parent)
        self.page_size = page_size
        self.words: str | None = None  # the search in force (None: every row)
        self.offset = 0  # the first row of the page asked for
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
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.search, 1)
        row.addWidget(self.newer)
        row.addWidget(self.older)

    def show_page(self, page: PageOfRows[Row]) -> None:
        """Enable the buttons for the page read (it may be of an older search)."""
        current = page.search == self.words and page.offset == self.offset
        self.newer.setEnabled(current and page.offset > 0)
        self.older.setEnabled(current and page.offset + len(page) < page.total)

    def status(self, page: PageOfRows[Row], noun: str, plural: str, none_yet: str) -> str:
        """The line under the list for ``page`` (``none_yet`` when the catalog has none), with the
        buttons set for it."""
        self.show_page(page)
        if not page.total and page.search is None:
            return none_yet
        said = self.describe(page, noun, plural)
        return f"{said}, newest first." if page else f"{said}."

    @staticmethod
    def describe(page: PageOfRows[Row], noun: str, plural: str) -> str:
        """``Attempts 201–400 of 99,900``; ``3 attempts found for 'S0001'``; ``12 attempts`` when
        every one is on this page."""
        shown = f"{page.offset + 1:,}–{page.offset + len(page):,}"
        if page.search is not None:
            if not page.total:
                return f"Nothing found for '{page.search}'"
            word = noun if page.total == 1 else plural
            found = f"{page.total:,} {word} found for '{page.search}'"
            return found + (f", {shown} shown" if page.total > len(page) else "")
        if not page:
            return f"No {plural} on this page: {page.total:,} in all"
        if page.offset == 0 and page.total == len(page):  # all on one page
            return f"{page.total:,} {noun if page.total == 1 else plural}"
        return f"{plural.capitalize()} {shown} of {page.total:,}"

    @Slot()
    def _take_search(self) -> None:
        self._settle.stop()
        words = self.search.text().strip() or None
        if words != self.words:
            self.words, self.offset = words, 0
            self.changed.emit()

    def _turn(self, pages: int) -> None:
        self.offset = max(0, self.offset + pages * self.page_size)
        self.newer.setEnabled(False)
        self.older.setEnabled(False)
        self.changed.emit()
