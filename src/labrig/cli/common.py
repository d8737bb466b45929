"""What every sub-command opens and closes: the store, or the whole set of services."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from labrig.store import Store, open_store

if TYPE_CHECKING:
    from labrig.bootstrap import Services
    from labrig.releases.health import HealthReport


@contextmanager
def store_for(args: argparse.Namespace, *, allow_missing_catalog: bool = False) -> Iterator[Store]:
    store = open_store(args.store, allow_missing_catalog=allow_missing_catalog)
    try:
        yield store
    finally:
        store.close()


def workstation_services(store_root: str | Path | None) -> Services:
    """The services a front end runs on: the composition root, given the release health
    check from above it. Imported here: a command that reads only the store (a page of results)
    does not load the capture, calibration and export packages at all."""
    from labrig.bootstrap import bootstrap

    return bootstrap(store_root, health_check=_release_health_check)


def _release_health_check() -> HealthReport:
    """The reference check of a release (:mod:`labrig.scenarios`: the virtual cameras and rig),
    imported when a release is checked, not at every command's start."""
    from labrig.scenarios import release_health_check

    return release_health_check()


@contextmanager
def services_for(args: argparse.Namespace) -> Iterator[Services]:
    services = workstation_services(args.store)
    try:
        yield services
    finally:
        services.close()
