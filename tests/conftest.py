"""Shared test set-up. Qt must be told to run offscreen before any QApplication exists."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest

from labrig.store import Store, open_store


@pytest.fixture(autouse=True)
def _no_ambient_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may touch the user's real data folder."""
    monkeypatch.setenv("LABRIG_STORE", str(tmp_path / "ambient-store"))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A fresh store (real SQLite file, migrated) in this test's own folder."""
    s = open_store(tmp_path / "store")
    yield s
    s.close()
