"""The moments a command takes (``--since``, ``--until``): a local date, a date and time, or a
number of days ago."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

from labrig.errors import UsageError

WHEN_HELP = "a local date (2026-12-01), a date and time (2026-12-01T08:00) or days ago (7d)"


def moment(text: str, option: str = "--since") -> datetime:
    """``text`` as an aware time: a local date or date and time, or a number of days ago."""
    value = text.strip()
    if value.endswith("d") and value[:-1].isdigit():
        return days_ago(int(value[:-1]))
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"{option} takes a date (2026-12-01), a date and time (2026-12-01T08:00) or a number "
            f"of days ago (7d), not '{text}'"
        ) from None
    return when if when.tzinfo is not None else when.astimezone()  # local time


def days_ago(days: int) -> datetime:
    if days < 0:
        raise UsageError(f"a number of days cannot be negative ({days}); give 0 or more")
    return datetime.now(UTC) - timedelta(days=days)


def add_period_arguments(parser: Any, what: str) -> None:
    """``--since`` and ``--until``: what was made in a period (``--until`` excluded)."""
    parser.add_argument("--since", metavar="WHEN", help=f"only {what} since WHEN: {WHEN_HELP}")
    parser.add_argument("--until", metavar="WHEN", help=f"only {what} before WHEN (same forms)")


def period(args: argparse.Namespace) -> tuple[datetime | None, datetime | None]:
    """The ``--since`` and ``--until`` given, as aware times (None where not given)."""
    since = moment(args.since, "--since") if args.since is not None else None
    until = moment(args.until, "--until") if args.until is not None else None
    return since, until
