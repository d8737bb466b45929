"""The wheel carries what an installed Labrig needs at run time: resources and migrations."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_contains_the_inventory_and_every_migration(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = list(tmp_path.glob("labrig-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "labrig/resources/inventory.json" in names
    migrations = sorted(
        p.name for p in (REPO / "src/labrig/store/migrations/versions").glob("0*.py")
    )
    assert migrations and all(f"labrig/store/migrations/versions/{m}" in names for m in migrations)
    assert "labrig/store/migrations/env.py" in names
    packaged = {n.split("/")[1] for n in names if n.startswith("labrig/") and n.count("/") >= 2}
    on_disk = {p.name for p in (REPO / "src/labrig").iterdir() if (p / "__init__.py").exists()}
    assert on_disk <= packaged, f"packages missing from the wheel: {on_disk - packaged}"
