"""``python -m labrig.ui.shell.probe [--grab | --plugin NAME]``: can Qt start here? One
JSON line, exit 0.

Run in a subprocess (``labrig doctor``, ``labrig --self-test`` and the window's
launch do) because a missing or broken Qt platform plugin aborts the whole
process instead of raising. The frozen ``labrig`` accepts the same ``-m``
arguments (see ``app/labrig_app.py``).

``--grab`` goes further, as the self-test asks: a QApplication, a widget with
text, and a grab of it, which exercises the style, the fonts and the raster
paint engine; exit 1 if the grab comes back blank. ``--plugin NAME`` loads the
platform plugin NAME (e.g. ``xcb``) without starting it, which needs no display
and proves its shared libraries are installed; exit 1 with the loader's error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import PySide6
from PySide6.QtCore import QLibraryInfo, QPluginLoader, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel


def _grab() -> str | None:
    """Render a label and grab it; ``WxH`` of a grab with text drawn on it, else None."""
    label = QLabel("Labrig self-test")
    label.setStyleSheet("background: white; color: black; padding: 8px")
    label.adjustSize()
    image = label.grab().toImage()
    if image.isNull() or image.width() == 0:
        return None
    colours = {image.pixel(x, image.height() // 2) for x in range(image.width())}
    return f"{image.width()}x{image.height()}" if len(colours) > 1 else None


def _load_plugin(name: str) -> int:
    folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
    candidates = sorted(folder.glob(f"*q{name}.*"))
    if not candidates:
        print(
            f"Could not find the Qt platform plugin '{name}' in {folder}",
            file=sys.stderr,
            flush=True,
        )
        return 1
    loader = QPluginLoader(str(candidates[0]))
    if not loader.load():
        print(
            f"Could not load {candidates[0].name}: {loader.errorString()}",
            file=sys.stderr,
            flush=True,
        )
        return 1
    print(
        json.dumps(
            {
                "plugin": name,
                "path": str(candidates[0]),
                "qt": qVersion(),
                "pyside": PySide6.__version__,
            }
        ),
        flush=True,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv if argv is None else argv
    parser = argparse.ArgumentParser(prog="labrig.ui.shell.probe")
    parser.add_argument("--grab", action="store_true", help="also render and grab a widget")
    parser.add_argument(
        "--plugin", metavar="NAME", help="only load the platform plugin NAME (no display needed)"
    )
    args = parser.parse_args(argv[1:])
    if args.plugin:
        return _load_plugin(args.plugin)
    # a QGuiApplication is enough to load the platform plugin, and shows nothing
    app = QApplication(argv[:1]) if args.grab else QGuiApplication(argv[:1])
    facts = {"platform": app.platformName(), "qt": qVersion(), "pyside": PySide6.__version__}
    if args.grab:
        size = _grab()
        if size is None:
            print(
                "Qt started, but the grab of a widget came back blank: "
                "no fonts, or no raster paint",
                file=sys.stderr,
                flush=True,
            )
            return 1
        facts["grab"] = size
    print(json.dumps(facts), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
