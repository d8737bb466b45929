"""What the line under a paged list says of the page shown (BrowseBar.describe): the numbers of
its rows, when rows were made since a deep page was reached."""

from __future__ import annotations

from labrig.store.search import Tally
from labrig.ui.common.browse_bar import BrowseBar, PageOfRows


def _page(rows: int, total: int, offset: int, older: bool | None) -> PageOfRows[int]:
    page = PageOfRows(list(range(rows)), Tally(total), offset, None)
    page.older = older
    return page


def test_the_last_of_the_older_pages_is_numbered_from_the_end_of_the_count() -> None:
    """Reached from a position while 1 attempt was made: its 50 rows are the count's last."""
    said = BrowseBar.describe(_page(50, 451, 400, older=False), "attempt", "attempts")
    assert said == "Attempts 402–451 of 451"
    # rows follow it: numbered as it was reached
    said = BrowseBar.describe(_page(200, 451, 200, older=True), "attempt", "attempts")
    assert said == "Attempts 201–400 of 451"


def test_the_first_page_is_numbered_from_its_start_whatever_the_count_read_after_it() -> None:
    """Its rows and its count are read one after the other: an attempt made in between leaves
    the count one ahead, and the first page still starts at 1."""
    said = BrowseBar.describe(_page(200, 201, 0, older=False), "attempt", "attempts")
    assert said == "Attempts 1–200 of 201"
