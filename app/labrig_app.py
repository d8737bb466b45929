"""Launcher frozen by the installer: everything else lives in the labrig package.

Frozen, ``sys.executable`` is this program, not a Python interpreter, so the commands
that start a helper in a child process (``labrig.health.module_command``: the Qt probe of
``labrig doctor``, ``labrig --self-test`` and the window's launch) run
``labrig -m labrig.<module> …``. This launcher accepts that form for Labrig's own modules,
as ``python -m`` would, and nothing else.
"""

import runpy
import sys


def _run_module(argv: list[str]) -> int:
    module = argv[2]
    if not module.startswith("labrig."):
        print(f"labrig: -m runs only Labrig's own modules, not {module!r}", file=sys.stderr)
        return 2
    sys.argv = [module, *argv[3:]]
    # the module raises SystemExit itself
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "-m":
        # a helper starts fast: the CLI and the core are not imported
        sys.exit(_run_module(sys.argv))
    from labrig.__main__ import main  # the console script's entry: imports without the collector

    sys.exit(main())
