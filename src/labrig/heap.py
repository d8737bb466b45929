"""What a long-lived process made at start-up, kept out of Python's full garbage collections.

CPython's cyclic collector examines every tracked object at each full (oldest-generation)
collection. A Labrig process holds several hundred thousand of them once it has started
(SQLAlchemy, the catalog's mapped classes, Qt's wrappers), and a full collection comes
whenever enough new objects have outlived the younger generations: in the window, every few
hundred list reads. Each one then stopped the thread that triggered it for 40 ms and more (the
Results screen's page of 200 attempts: 15 ms, and 60 ms when a full collection fell inside it).

:func:`frozen_heap` moves the objects alive when the process is ready into the collector's
permanent generation (:func:`gc.freeze`) for as long as the process runs its loop, so a full
collection examines only what was made since: about 1 ms. They are still freed by reference
counting; only a reference cycle among them outlives the loop, and the context gives them back
to the collector when it ends (:func:`gc.unfreeze`) and collects them there, so a process that
runs the loop twice (the tests) frees the first loop's cycles on the thread that ran it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def started_uncollected(start: Callable[[], T]) -> T:
    """Run ``start`` (a process's imports) with the cyclic collector off, then leave what it made
    out of later collections (:func:`gc.freeze`) and turn the collector back on.

    Importing SQLAlchemy, the mapped classes and a command's modules makes some 140,000 objects
    that live as long as the process, few of them garbage: the collector's passes over them while
    they were made (about 200, three of them full) were 40 ms of a `labrig worker`'s 0.5 s start.
    For a process's entry point only: a library import must not turn the collector off.
    """
    gc.disable()
    try:
        return start()
    finally:
        gc.freeze()
        gc.enable()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Run the block with every object alive now left out of the collector's passes."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        # their cycles (a closed window's Qt wrappers) freed now, in this thread: not by a full
        # collection some pool thread sets off later, where Qt objects must not be destroyed
        gc.collect()
