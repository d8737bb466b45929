"""What every sub-command opens and closes: the store, or the whole set of services."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from labrig.bootstrap import Services, bootstrap
from labrig.store import Store, open_store


@contextmanager
def store_for(args: argparse.Namespace) -> Iterator[Store]:
    store = open_store(args.store)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def services_for(args: argparse.Namespace) -> Iterator[Services]:
    services = bootstrap(args.store)
    try:
        yield services
    finally:
        services.close()
