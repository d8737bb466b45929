"""The schema revisions Labrig reads from its migration files without Alembic (every start-up that
finds the catalog current skips loading Alembic) are Alembic's own, in its order."""

from __future__ import annotations

from alembic.script import ScriptDirectory

from labrig.store import migrate


def test_the_revisions_read_from_the_files_are_alembics_in_its_order() -> None:
    scripts = ScriptDirectory.from_config(migrate._config())
    oldest_first = [script.revision for script in reversed(list(scripts.walk_revisions()))]
    assert list(migrate.revisions()) == oldest_first
    assert migrate.head_revision() == scripts.get_current_head()
