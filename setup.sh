#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian/Ubuntu machine:
#   ./setup.sh app    install Labrig into .venv and start the window
#   ./setup.sh test   install Labrig with its test and bundle tools into .venv and run the tests
# Extra arguments go to labrig (app) or pytest (test). System libraries Qt needs are
# installed with apt-get only when they are missing (with sudo when not root).
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-}
case "$mode" in
  app|test) shift ;;
  *) echo "usage: ./setup.sh app|test [arguments for labrig or pytest]" >&2; exit 2 ;;
esac
PY=${PYTHON:-python3}

if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Labrig needs Python 3.11 or newer; '$PY' is $("$PY" --version 2>&1). Set PYTHON=/path/to/python3.11." >&2
  exit 1
fi

# shared library -> Debian package that provides it (Qt offscreen needs these; the window needs xcb too)
libs="libGL.so.1:libgl1 libEGL.so.1:libegl1 libxkbcommon.so.0:libxkbcommon0 libX11.so.6:libx11-6
      libglib-2.0.so.0:libglib2.0-0 libfontconfig.so.1:libfontconfig1 libfreetype.so.6:libfreetype6
      libdbus-1.so.3:libdbus-1-3"
if [ "$mode" = app ]; then
  libs="$libs libxcb-cursor.so.0:libxcb-cursor0 libxkbcommon-x11.so.0:libxkbcommon-x11-0
        libxcb-icccm.so.4:libxcb-icccm4 libxcb-keysyms.so.1:libxcb-keysyms1 libxcb-shape.so.0:libxcb-shape0
        libxcb-render-util.so.0:libxcb-render-util0 libxcb-image.so.0:libxcb-image0 libxcb-xkb.so.1:libxcb-xkb1"
fi
missing=()
for pair in $libs; do
  ldconfig -p 2>/dev/null | grep -q "${pair%%:*}" || missing+=("${pair##*:}")
done
"$PY" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
# the frozen-bundle test (tests/e2e/test_bundle.py): PyInstaller reads binaries with objdump
[ "$mode" = app ] || command -v objdump >/dev/null || missing+=(binutils)
# the PostgreSQL half of the queue tests starts a throwaway cluster with the server binaries
[ "$mode" = app ] || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "Installing system packages: ${missing[*]}"
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "warning: missing system packages (${missing[*]}); install them with your package manager" >&2
  fi
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
# setuptools cautions, on every editable install of a package-dir mapping like ours, that a folder
# named like the package in the working directory would win imports; there is none here (the code
# is under src/), and the caution reads like a failure, so it is silenced for these installs only
pip() { PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip -q --disable-pip-version-check "$@"; }
pip install --upgrade pip
if [ "$mode" = app ]; then
  pip install -e .
  exec .venv/bin/labrig "$@"
fi
# bundle: PyInstaller, for the test that builds and runs the frozen bundle
pip install -e '.[dev,bundle]'
# two test processes (pytest-xdist), each test handed to whichever is free: the suite is half
# subprocesses and I/O, so two processes take ~16 min where one took ~23 (`-n 0`: one process)
exec env QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -n 2 --dist worksteal "$@"
