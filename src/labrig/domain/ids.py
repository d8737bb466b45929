"""Identifiers of rows that are written often: time-ordered UUIDs (RFC 9562 version 7).

A version-7 UUID starts with the Unix time in milliseconds, so ids made one after
another sort one after another. A job or event written in the same transaction as
others then lands on the last page of each index on its id, instead of on a random
page: a commit of a batch writes one index page, not one per row. The other 74 bits
are random, so ids made on different workstations (or in the same millisecond) do not
collide, as with version 4. The text form is the usual 36 characters.
"""

from __future__ import annotations

import os
import time

_VERSION_7 = 0x7 << 76
_VARIANT_RFC = 0b10 << 62


def time_ordered_id() -> str:
    """A new version-7 UUID as text: 48 bits of Unix milliseconds, then 74 random bits."""
    random = int.from_bytes(os.urandom(10), "big")  # 80 bits; 74 are used
    value = ((time.time_ns() // 1_000_000) << 80 | _VERSION_7 | (random >> 68) << 64
             | _VARIANT_RFC | random & ((1 << 62) - 1))
    digits = f"{value:032x}"  # formatted here: a uuid.UUID object only to print it costs as much again
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
