"""The status fills every screen shares: light colours that keep black text readable in both the
default and a dark palette's tables and badges.

Green is sound, amber is usable with a caveat (degraded, revised, expired), red is refused or
blocked, grey is not yet known or no longer current.
"""

from __future__ import annotations

GREEN, AMBER, RED, GREY = "#c8ecc8", "#ffe2a8", "#f6c0c0", "#e2e2e2"
