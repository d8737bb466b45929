"""Run as a separate process by the dispatcher race test: one dispatcher pass loop
on a shared store."""

from __future__ import annotations

import sys

from sqlalchemy.orm import Session

from labrig.events import EventRecord
from labrig.events.dispatcher import Dispatcher
from labrig.store import open_store
from labrig.store.models import Meta


def count(event: EventRecord, session: Session) -> None:
    row = session.get(Meta, "count")
    assert row is not None
    row.value = str(int(row.value) + 1)


def main(root: str, passes: int) -> None:
    store = open_store(root)
    dispatcher = Dispatcher(store, batch=7)
    dispatcher.register("counter", count)
    for _ in range(passes):
        dispatcher.dispatch_once()
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
