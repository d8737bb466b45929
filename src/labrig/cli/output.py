"""Small printing helpers shared by the sub-commands."""

from __future__ import annotations

import json
import sys
from typing import Any

from labrig.store.search import Tally


def print_line(text: str) -> None:
    """``text`` and its newline in one write, flushed: where several processes share the output
    (``labrig worker --processes``), their lines never run into each other, even unbuffered
    (``PYTHONUNBUFFERED``, where ``print`` writes the text and its newline apart)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")


def print_json_line(data: Any) -> None:
    sys.stdout.write(json.dumps(data, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def add_page_arguments(parser: Any, noun: str) -> None:
    """``--newest-first``, ``--limit`` and ``--offset``: a list read a page at a time."""
    parser.add_argument("--newest-first", action="store_true", help="newest first (else oldest)")
    parser.add_argument("--limit", type=int, metavar="N", help=f"at most N {noun} (a page)")
    parser.add_argument("--offset", type=int, default=0, metavar="N", help="skip the first N")


def page_asked(args: Any) -> dict[str, Any]:
    """``--since``, ``--until``, ``--newest-first``, ``--limit`` and ``--offset`` as the keywords
    of a list's query (the review list's, the jobs', the captures')."""
    from labrig.cli.when import period

    since, until = period(args)
    return {
        "since": since,
        "until": until,
        "newest_first": args.newest_first,
        "limit": args.limit,
        "offset": args.offset,
    }


def is_page(args: Any) -> bool:
    """Whether the command asked for part of a list (``--limit`` or ``--offset``)."""
    return bool(args.limit is not None or args.offset > 0)


def narrowed(args: Any) -> bool:
    """Whether ``--offset``, ``--since`` or ``--until`` leaves rows out: an empty list is then
    "nothing matches", not "nothing yet"."""
    return bool(args.offset or args.since or args.until)


def print_page_line(noun: str, offset: int, shown: int, total: int | Tally) -> None:
    """The line that ends a page: ``Jobs 51–100 of 1200.``, ``Jobs 1–50 of more than 10000.``
    when the count stopped there (nothing for an empty page)."""
    said: object = total
    if isinstance(total, Tally):
        said = f"more than {total.n}" if total.more else total.n
    if shown:
        print(f"{noun} {offset + 1}–{offset + shown} of {said}.")
