"""Numbers as a technician reads them."""

from __future__ import annotations


def human_bytes(count: int) -> str:
    """Decimal units, as disk vendors and file managers report free space."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"
