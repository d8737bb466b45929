"""docs/architecture.md is pinned to the code: its layers are pyproject.toml's, and it
names every package."""

from __future__ import annotations

import re
import tomllib

from tests.contract import REPO

DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SRC = REPO / "src" / "labrig"


def _documented_layers() -> list[list[str]]:
    blocks = re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)
    return [tomllib.loads(block)["layers"] for block in blocks]


def _children(folder: str) -> set[str]:
    root = SRC / folder if folder else SRC
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in root.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return packages | modules


def test_the_layers_quoted_are_the_contracts_in_pyproject() -> None:
    contracts = [c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert [c["layers"] for c in contracts] == _documented_layers()


def test_every_layer_contract_is_exhaustive_so_a_new_package_must_be_placed() -> None:
    contracts = [c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert contracts and all(c.get("exhaustive") for c in contracts)


def test_every_package_and_top_level_module_is_described() -> None:
    rows = "\n".join(line for line in DOC.splitlines() if line.startswith("| `"))
    named = set(re.findall(r"`(\w+)(?:/|\.py)`", rows))
    missing = (_children("") - {"ui"}) - named
    assert not missing, f"docs/architecture.md does not describe {sorted(missing)}"
    missing_ui = _children("ui") - named
    assert not missing_ui, f"docs/architecture.md does not describe ui's {sorted(missing_ui)}"
