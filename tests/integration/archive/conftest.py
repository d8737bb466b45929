"""Export and sync test parts: a template store with real results (recorded once from the virtual
camera), copied into each test's folder, and services acting as a named user."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.store import Store, open_store
from labrig.sync.destination import FolderDestination
from labrig.sync.service import DestinationFactory
from tests.support.results import TemplateResults, copy_store, make_results


@pytest.fixture(scope="session")
def archive_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("archive-template") / "store"
    return root, make_results(root)


def as_user(store: Store, user: str) -> AccessControl:
    return AccessControl(store, user=lambda: user, host=lambda: "bench-1")


@dataclass
class Lab:
    root: Path
    store: Store
    services: Services  # acting as "ada"
    published_id: str
    blocked_id: str

    def services_as(
        self, user: str, destination: DestinationFactory = FolderDestination
    ) -> Services:
        return bootstrap(
            store=self.store, access=as_user(self.store, user), sync_destination=destination
        )


@pytest.fixture
def lab(archive_template: tuple[Path, TemplateResults], tmp_path: Path) -> Iterator[Lab]:
    root = copy_store(archive_template[0], tmp_path / "store")
    store = open_store(root)
    yield Lab(
        root,
        store,
        bootstrap(store=store, access=as_user(store, "ada")),
        archive_template[1].published_id,
        archive_template[1].blocked_id,
    )
    store.close()


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    """An archive folder on a 'share' (a folder of the test's own)."""
    folder = tmp_path / "share" / "labrig"
    folder.mkdir(parents=True)
    return folder
