"""The Results screen's first paint on a catalog, for ``bench_catalog.py``.

    .venv/bin/python tests/benchmarks/catalog_window.py DIR    (QT_QPA_PLATFORM=offscreen)

The child process opens the real window the way ``labrig`` does (``check_window``: Qt tried in a
child process; ``workstation_services`` before Qt is imported; ``build_main_window``; then, as
``run_gui`` does once it is shown: start-up recovery, the dispatcher thread and the catalog's page
check), but on the Results screen, and without the job executor, so no job of the catalog runs and
the catalog is not changed. It watches the attempt list's viewport and prints, as one JSON line,
the wall-clock times (``time.time()``) it reached each stage, ``painted`` being the first paint of
the list with rows in it. :func:`first_paint` runs it and times it from just before the process is
started. Only the standard library is imported before the clock is read, so the figures include
every import the window needs.
"""

from __future__ import annotations

import time

STARTED = time.time()

import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

TIMEOUT_S = 120


def first_paint(root: Path, db: str | None, runs: int = 3) -> dict[str, float]:
    """The median of ``runs`` (after one to warm) of the window's stages, s from just before its
    process was started; ``painted`` is the first paint."""
    env = {k: v for k, v in os.environ.items() if k != "LABRIG_DB"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    if db:
        env["LABRIG_DB"] = db
    done = []
    for _ in range(runs + 1):
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S + 60,
        )
        if out.returncode:
            raise SystemExit(f"catalog_window: the window failed:\n{out.stderr[-3000:]}")
        marks = json.loads(out.stdout.strip().splitlines()[-1])
        done.append({k: v if k == "rows" else v - started for k, v in marks.items()})
    return sorted(done[1:], key=lambda d: d["painted"])[len(done[1:]) // 2]


def main(root: str) -> int:
    marks = {"python": STARTED}
    # as ``labrig`` opens its window (labrig.cli.gui.launch): Qt is checked in a child process and
    # the services are built before Qt is imported, then the window
    from labrig.cli.common import workstation_services
    from labrig.cli.gui import check_window

    check_window()
    marks["checked"] = time.time()
    services = workstation_services(root)
    marks["services"] = time.time()
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from labrig.ui.app import build_main_window
    from labrig.ui.results.page import ResultsPage
    from labrig.ui.shell.recovery_dialog import recover_and_report

    marks["imported"] = time.time()
    scratch = tempfile.mkdtemp(prefix="labrig-paint-")
    # the window as it first opens: no size, splitter or page kept from the user's own runs
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, scratch)
    app = QApplication([sys.argv[0]])
    QCoreApplication.setApplicationName("Labrig")
    gui = build_main_window(services)
    window = gui.window
    window.show_page("results")  # builds the Results page alone
    shown = window.page("results")
    assert isinstance(shown, ResultsPage)
    page: ResultsPage = shown
    marks["window"] = time.time()

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            first = event.type() == QEvent.Type.Paint and "painted" not in marks
            if first and page.model.rowCount() > 0:
                marks["painted"] = time.time()
                QTimer.singleShot(0, app.quit)
            return False

    watch = Watch()
    page.table.viewport().installEventFilter(watch)
    window.show()
    recover_and_report(services, window)
    services.start()
    gui.catalog_check.start()
    marks["shown"] = time.time()
    QTimer.singleShot(TIMEOUT_S * 1000, app.quit)
    app.exec()
    rows = page.model.rowCount()
    window.shut_down(10_000)
    gui.catalog_check.stop(10_000)
    gui.executor.shutdown(0)
    services.close()
    shutil.rmtree(scratch, ignore_errors=True)
    if "painted" not in marks:
        print(f"the list was not painted with rows within {TIMEOUT_S} s", file=sys.stderr)
        return 1
    print(json.dumps(marks | {"rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
