#!/usr/bin/env bash
# Create (if missing) the private virtualenv for the aniposelib benchmark peer
# (tests/benchmarks/anipose_peer.py) and print its python path on stdout.
#
#   PY=$(bash tests/benchmarks/anipose_env.sh [VENV_DIR])   # default /tmp/anipose-venv
#   "$PY" tests/benchmarks/anipose_peer.py IN.npz OUT.json
#
# aniposelib 0.8.x lives in its own venv because its dependencies (opencv-contrib-python,
# numba, jax/jaxlib, pandas, scipy, ...) may clash with ours.  Its metadata already
# pulls in everything it needs at run time (jax is imported lazily by triangulate()).
# Idempotent: an existing venv that imports aniposelib, cv2 and jax is left alone;
# a missing or broken one is (re)created / completed.  Progress goes to stderr.
set -euo pipefail

VENV="${1:-/tmp/anipose-venv}"
PY="$VENV/bin/python"
SPEC="aniposelib>=0.8,<0.9"
CHECK='import aniposelib, cv2, jax, numba, scipy; print(aniposelib.__version__, cv2.__version__, jax.__version__)'

if [ -x "$PY" ] && "$PY" -c "$CHECK" >/dev/null 2>&1; then
    echo "$PY"
    exit 0
fi

if [ ! -x "$PY" ]; then
    echo "anipose_env: creating $VENV" >&2
    python3 -m venv "$VENV" >&2
fi
echo "anipose_env: installing $SPEC into $VENV" >&2
"$PY" -m pip install --disable-pip-version-check -q "$SPEC" >&2

if ! versions=$("$PY" -c "$CHECK" 2>&1); then
    echo "anipose_env: import check failed in $VENV:" >&2
    echo "$versions" >&2
    echo "anipose_env: (opencv-contrib-python is the GUI build; on a bare system it" \
         "needs libGL.so.1 / libglib: apt-get install libgl1 libglib2.0-0)" >&2
    exit 1
fi
echo "anipose_env: ready (aniposelib cv2 jax: $versions)" >&2
echo "$PY"
