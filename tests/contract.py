"""Reads the normative contract straight from the vendored seed-000 text, independently of our
code."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "docs" / "contract" / "seed-000.txt"


def seed_text() -> str:
    return SEED.read_text(encoding="utf-8")


def seed_event_names() -> list[str]:
    return re.findall(r"^\| EVT-\d\d \| ([a-z.]+) \|", seed_text(), flags=re.M)


def seed_states() -> list[str]:
    block = seed_text().split("Estados de job", 1)[1].split("- Created", 1)[0]
    return re.findall(r"[A-Z][A-Za-z]+", block)


def seed_transitions() -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for source, targets in re.findall(r"^- (\w+) -> (.+)$", seed_text(), flags=re.M):
        for target in targets.split("|"):
            pairs.add((source, target.split()[0]))
    return pairs
