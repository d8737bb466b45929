"""docs/export-sync.md names every refusal code and schema that export and sync use."""

from __future__ import annotations

import importlib
import inspect

from labrig.errors import LabrigError
from tests.contract import REPO

DOC = (REPO / "docs" / "export-sync.md").read_text(encoding="utf-8")
MODULES = (
    "labrig.export.paths",
    "labrig.export.bundle",
    "labrig.export.snapshot",
    "labrig.export.verify",
    "labrig.export.service",
    "labrig.export.interchange",
    "labrig.export.formats.opensim",
    "labrig.sync.destination",
    "labrig.sync.service",
)


def test_every_refusal_code_is_documented() -> None:
    classes = [
        (name, cls)
        for name in MODULES
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass)
    ]
    codes = {
        cls.code for name, cls in classes if issubclass(cls, LabrigError) and cls.__module__ == name
    }
    assert len(codes) >= 10
    assert sorted(c for c in codes if f"`{c}`" not in DOC) == []


def test_every_schema_is_documented() -> None:
    from labrig.export.documents import PROVENANCE_SCHEMA, RESULT_SCHEMA
    from labrig.export.verify import EXPORT_SCHEMA
    from labrig.sync.destination import MARKER_SCHEMA
    from labrig.sync.index import RESULT_MANIFEST_SCHEMA
    from labrig.sync.service import BATCH_SCHEMA

    for schema in (
        EXPORT_SCHEMA,
        RESULT_SCHEMA,
        PROVENANCE_SCHEMA,
        MARKER_SCHEMA,
        RESULT_MANIFEST_SCHEMA,
        BATCH_SCHEMA,
    ):
        assert f"`{schema}`" in DOC or f"({schema})" in DOC or f" {schema}:" in DOC, schema
