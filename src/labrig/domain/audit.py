"""The audit chain: who did what, when, why, to which object, each entry hash-linked
to the one before.

An entry's hash is ``H(canonical_json({"prev": previous entry's hash, "entry": its content}))``
where the content is every stored column of the entry but the two hashes, as
stored text (so verifying never re-parses a time or a number). Changing, removing
or reordering any entry breaks the chain at that entry. Rewriting the whole chain
is caught by comparing its head with one recorded elsewhere (an export, a sync
batch): see :class:`ChainHead`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labrig.domain.idempotency import canonical_json, sha256_hex
from labrig.errors import LabrigError

GENESIS = "0" * 64  # the "previous hash" of the first entry
#: the hashed columns of an entry, in storage order (``seq`` first);
#: ``prev_hash`` and ``entry_hash`` follow
CONTENT = (
    "seq",
    "recorded_at",
    "actor",
    "host",
    "action",
    "object_type",
    "object_id",
    "reason",
    "change",
    "change_digest",
)
COLUMNS = (*CONTENT, "prev_hash", "entry_hash")


@dataclass(frozen=True)
class Actor:
    """Who does something, and on which workstation."""

    user: str
    host: str


class ReasonRequiredError(LabrigError):
    code = "LABRIG_REASON_REQUIRED"


def require_reason(reason: str | None, what: str) -> str:
    """The trimmed reason, or :class:`ReasonRequiredError` saying ``what`` needs one."""
    text = (reason or "").strip()
    if not text:
        raise ReasonRequiredError(
            f"{what} needs a reason (--reason TEXT); it is kept in the audit trail"
        )
    return text


def change_digest(change: str) -> str:
    return sha256_hex(change.encode())


def entry_hash(prev_hash: str, content: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_json({"prev": prev_hash, "entry": dict(content)}))


@dataclass(frozen=True)
class ChainHead:
    """The last entry of the chain: what an export or a sync batch carries to prove the trail later.

    A store whose chain no longer contains this entry with this hash (or whose
    entries before it no longer verify) was rewritten after the head was taken.
    """

    seq: int  # 0 when the trail is empty
    entry_hash: str  # GENESIS when the trail is empty

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "entry_hash": self.entry_hash}


@dataclass(frozen=True)
class ChainReport:
    """The outcome of recomputing the chain: intact, or the first broken entry and why."""

    entries: int
    head: ChainHead
    first_broken: int | None  # seq of the first entry that fails (None when intact)
    problem: str | None

    @property
    def intact(self) -> bool:
        return self.first_broken is None

    def to_json(self) -> dict[str, Any]:
        return {
            "intact": self.intact,
            "entries": self.entries,
            "head": self.head.to_json(),
            "first_broken": self.first_broken,
            "problem": self.problem,
        }


def _text(value: Any) -> str | None:
    """A stored value as text: bytes must be valid UTF-8
    (anything else was written outside Labrig)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _problem(row: Sequence[Any], expected_seq: int, prev: str) -> tuple[int, str] | None:
    """None when ``row`` is the intact entry ``expected_seq`` after ``prev``; else
    (entry to name, why)."""
    seq, *rest = row
    texts = [_text(v) for v in rest]
    if not isinstance(seq, int) or isinstance(seq, bool):
        return expected_seq, "its number is not what Labrig writes"
    if any(t is None for t in texts):
        return seq, "a stored value is not what Labrig writes (wrong type, or not UTF-8 text)"
    fields: dict[str, Any] = dict(zip(COLUMNS, [seq, *texts], strict=True))
    if seq < expected_seq:
        return seq, f"it is out of sequence (renumbered: entry {expected_seq} was expected here)"
    if seq > expected_seq:
        return (
            expected_seq,
            f"entry {expected_seq} is missing or was renumbered (found entry {seq} in its place)",
        )
    if fields["prev_hash"] != prev:
        return seq, "its link to the previous entry does not match that entry's hash"
    if change_digest(fields["change"]) != fields["change_digest"]:
        return seq, "its recorded change does not match its change digest"
    if entry_hash(prev, {k: fields[k] for k in CONTENT}) != fields["entry_hash"]:
        return seq, "its content does not match its hash (it was altered after it was written)"
    return None


def verify_chain(rows: Sequence[Sequence[Any]]) -> ChainReport:
    """Recompute the chain over ``rows`` (the :data:`COLUMNS` of each entry, in ``seq`` order).

    Values may be str or the raw bytes of stored text. The first entry that fails
    is named by its stored number or, when an entry is missing, by the missing number.
    """
    prev, head = GENESIS, ChainHead(0, GENESIS)
    for expected, row in enumerate(rows, start=1):
        broken = _problem(row, expected, prev)
        if broken is not None:
            return ChainReport(len(rows), head, *broken)
        prev = _text(row[-1]) or ""
        head = ChainHead(expected, prev)
    return ChainReport(len(rows), head, None, None)
