"""Opening the window: the only CLI module that reaches into the Qt package.

Before anything is opened, three refusals, each a typed error with its code and no change to
the data folder: Qt cannot start here (checked in a child process, because a missing platform
plugin aborts the process that loads it; the services' modules load meanwhile, and nothing is
opened before its answer), the store would be refused (an unwritable folder, a
damaged, foreign or newer catalog, a missing one beside committed captures; checked before the
lock file is created, so a refused folder is left as it was), or another window has it open
(:mod:`labrig.instance_lock`). Where a screen can show it, a refusal is also shown in a message
box, since a window started from a menu has no terminal.
"""

from __future__ import annotations

import os
import sys

from labrig.cli.common import workstation_services
from labrig.errors import QtUnavailableError, StoreError
from labrig.health import QtCheck, Status
from labrig.instance_lock import InstanceLock
from labrig.store import DB_ENV_VAR, check_openable, paths


def check_window() -> None:
    """Refuse, with :class:`QtUnavailableError`, when Qt cannot start here. The services' modules,
    and numpy for the window's lists and plots, load while the child process tries Qt (a tenth of
    a second or more each). Before Qt, too: PySide6 reads the source of every module imported
    after it (its ``__feature__`` import hook), a third more time on numpy's."""
    checking = QtCheck()
    import numpy  # noqa: F401

    from labrig import bootstrap  # noqa: F401

    qt = checking.result()
    if qt.status is Status.FAIL:
        raise QtUnavailableError(
            f"the window cannot open. {qt.detail.rstrip('.')}. What to do: {qt.fix}"
        )


def launch(store_root: str | None) -> int:
    check_window()
    root = paths.resolve_root(store_root)
    # on a shared PostgreSQL catalog every workstation opens its own window on the shared folder
    lock = InstanceLock(root, shared_catalog=bool(os.environ.get(DB_ENV_VAR)))
    try:
        check_openable(root)  # before the lock file is created in it
        lock.acquire()  # before the store opens: opening the window recovers interrupted recordings
        services = workstation_services(root)
    except StoreError as exc:
        lock.release()
        from labrig.ui.shell.refusal import show_refusal

        show_refusal(exc)
        raise
    try:
        from labrig.ui.app import run_gui  # Qt loads only when the window is wanted

        return int(run_gui(services, sys.argv[:1]))
    finally:
        lock.release()
