"""PyInstaller hook for the labrig package: what static analysis of the launcher cannot see.

* every labrig module, for those imported late or by name (the Qt probe run as ``-m
  labrig.ui.shell.probe``, the window's modules imported inside ``labrig.cli.gui``);
* the Alembic migrations as source files: Alembic reads ``env.py`` and ``versions/*.py`` from
  disk, next to ``labrig/store/migrate.py`` (``MIGRATIONS_DIR``), not from the archive;
* ``labrig.resources`` (inventory, boards, icons), read with ``importlib.resources``. It is
  found through the import system because it lives outside ``src/`` (pyproject's package-dir);
* labrig's distribution metadata, which ``labrig.__version__`` reads.
"""

import importlib.util
from pathlib import Path

from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata


def _package_files(package: str) -> list[tuple[str, str]]:
    """Every file of ``package`` (not its Python source) as (source, destination folder) pairs."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, (
        f"{package} is not an installed package"
    )
    root = Path(next(iter(spec.submodule_search_locations)))
    dest = Path(*package.split("."))
    return [
        (str(p), str(dest / p.relative_to(root).parent))
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]


hiddenimports = collect_submodules("labrig")
datas = [
    *collect_data_files(
        "labrig.store.migrations", include_py_files=True, excludes=["**/__pycache__"]
    ),
    *_package_files("labrig.resources"),
    *copy_metadata("labrig"),
]
