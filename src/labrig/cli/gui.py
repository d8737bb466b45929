"""Opening the window: the only CLI module that reaches into the Qt package."""

from __future__ import annotations

import sys

from labrig.bootstrap import bootstrap


def launch(store_root: str | None) -> int:
    services = bootstrap(store_root)
    from labrig.ui.app import run_gui  # Qt loads only when the window is wanted

    return int(run_gui(services, sys.argv[:1]))
