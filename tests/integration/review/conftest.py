"""Review test parts: a template store with real results (built once), copied into
each test's folder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from labrig.access import AccessControl
from labrig.bootstrap import Services, bootstrap
from labrig.store import Store, open_store
from tests.support.results import TemplateResults, copy_store, make_results


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TemplateResults]:
    root = tmp_path_factory.mktemp("review-template") / "store"
    return root, make_results(root)


def as_user(store: Store, user: str) -> AccessControl:
    """The access control of ``user`` logged in on the workstation ``bench-1``."""
    return AccessControl(store, user=lambda: user, host=lambda: "bench-1")


@dataclass
class Rig:
    root: Path
    store: Store
    services: Services  # acting as "alice"
    published_id: str
    blocked_id: str

    def services_as(self, user: str) -> Services:
        return bootstrap(store=self.store, access=as_user(self.store, user))


@pytest.fixture
def rig(template: tuple[Path, TemplateResults], tmp_path: Path) -> Iterator[Rig]:
    root = copy_store(template[0], tmp_path / "store")
    store = open_store(root)
    yield Rig(
        root,
        store,
        bootstrap(store=store, access=as_user(store, "alice")),
        template[1].published_id,
        template[1].blocked_id,
    )
    store.close()
