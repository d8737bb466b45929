#!/usr/bin/env bash
# Build Labrig's one-folder bundle (PyInstaller, app/labrig.spec), run its self-test, and wrap it
# in a Debian package. IT's guide: docs/install.md.
#
#   installer/build.sh [--bundle-only] [--out DIR]
#
#   --bundle-only  stop after the bundle and its self-test (no .deb; any Linux, or the first step on Windows)
#   --out DIR      where dist/labrig/ and labrig_VERSION_ARCH.deb go (default: dist/ in the repository)
#
# Needs the venv that `./setup.sh test` makes (it installs the `bundle` extra with PyInstaller), or
# PYTHON=/path/to/python of an environment with `pip install '.[bundle]'`. The .deb needs dpkg-deb.
# Exits 1 when a step fails (nothing half-built is left in --out), 2 on a wrong argument.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

usage() { echo "usage: installer/build.sh [--bundle-only] [--out DIR]" >&2; exit 2; }
fail() { echo "build.sh: $*" >&2; exit 1; }

OUT="$REPO/dist"
BUNDLE_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle-only) BUNDLE_ONLY=1; shift ;;
    --out) [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
mkdir -p "$OUT" || fail "cannot create the output folder $OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-$REPO/.venv/bin/python}

# Runtime libraries the bundle loads from the system rather than shipping them (ldd on the bundled
# Qt platform plugins offscreen, xcb and wayland, xcbglintegrations and the Qt libraries; the
# rest of the bundle, OpenCV and numpy included, carries its own). Checked on a bare Debian 12 by
# installer/test_deb_debian.sh. Essential packages (libc6, zlib1g, …) are left out.
DEPENDS="libgl1, libegl1, libglib2.0-0, libfontconfig1, libfreetype6, libdbus-1-3, libxkbcommon0,
  libx11-6, libx11-xcb1, libxcb1, libxcb-cursor0, libxcb-glx0, libxcb-icccm4, libxcb-image0, libxcb-keysyms1,
  libxcb-randr0, libxcb-render0, libxcb-render-util0, libxcb-shape0, libxcb-shm0, libxcb-sync1,
  libxcb-util1, libxcb-xfixes0, libxcb-xkb1, libxkbcommon-x11-0, libwayland-client0, libwayland-cursor0,
  libwayland-egl1, fonts-dejavu-core"

step() { printf '\n== %s\n' "$*"; }
seconds() { echo $(( $(date +%s) - $1 )); }

if [ "$(uname -s)" = Linux ]; then  # PyInstaller resolves libraries with ldd and tells binaries by objdump
  command -v objdump >/dev/null || fail "objdump not found: sudo apt-get install binutils"
  command -v ldd >/dev/null || fail "ldd not found: sudo apt-get install libc-bin"
fi
"$PY" -c 'import PyInstaller' 2>/dev/null || fail "PyInstaller is not installed for $PY.
  Run ./setup.sh test (it installs the 'bundle' extra), or: $PY -m pip install -e '.[bundle]'"

step "Bundle: PyInstaller app/labrig.spec -> $OUT/labrig"
started=$(date +%s)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/labrig-build.XXXXXX")  # PyInstaller's work files; --clean rebuilds anyway
STAGE=""
trap 'rm -rf "$WORK" ${STAGE:+"$STAGE"}' EXIT
rm -rf "$OUT/labrig"
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN --distpath "$OUT" --workpath "$WORK" \
  app/labrig.spec || { rm -rf "$OUT/labrig"; fail "PyInstaller failed (see above); nothing was written to $OUT/labrig"; }
EXE="$OUT/labrig/labrig"
[ -x "$EXE" ] || EXE="$OUT/labrig/labrig.exe"
echo "built in $(seconds "$started") s; $(du -sm "$OUT/labrig" | cut -f1) MB on disk"

step "Self-test of the frozen bundle"
if ! QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} "$EXE" --self-test; then
  rm -rf "$OUT/labrig"
  fail "the frozen bundle failed its self-test; it was removed so it cannot be shipped"
fi
[ "$BUNDLE_ONLY" -eq 1 ] && exit 0

command -v dpkg-deb >/dev/null || fail "dpkg-deb not found: build the .deb on Debian/Ubuntu, or use --bundle-only"
VERSION=$("$EXE" --version | awk '{print $2}')
ARCH=$(dpkg --print-architecture)
DEB="$OUT/labrig_${VERSION}_${ARCH}.deb"
step "Debian package $DEB"
started=$(date +%s)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/labrig-deb.XXXXXX")
mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
  "$STAGE/usr/share/icons/hicolor/256x256/apps" "$STAGE/usr/share/doc/labrig"
cp -a "$OUT/labrig" "$STAGE/opt/labrig"
ln -s /opt/labrig/labrig "$STAGE/usr/bin/labrig"  # the bootloader finds _internal/ through /proc/self/exe
install -m 644 installer/labrig.desktop "$STAGE/usr/share/applications/labrig.desktop"
install -m 644 resources/icons/labrig.png "$STAGE/usr/share/icons/hicolor/256x256/apps/labrig.png"
install -m 644 docs/install.md "$STAGE/usr/share/doc/labrig/install.md"
cat > "$STAGE/DEBIAN/control" <<EOF
Package: labrig
Version: $VERSION
Architecture: $ARCH
Maintainer: Labrig maintainers <labrig@localhost>
Section: science
Priority: optional
Installed-Size: $(du -sk "$STAGE" | cut -f1)
Depends: $(echo "$DEPENDS" | tr -s ' \n' ' ')
Description: Capture-and-analysis workstation for labs
 Records verified cameras and instruments into durable captures and runs calibrated,
 quality-gated analysis on them. Installed in /opt/labrig (a frozen bundle with its own Python,
 Qt and OpenCV); run 'labrig --self-test' to check an installation.
EOF
find "$STAGE" -type d -exec chmod 755 {} +
# zstd: several times faster than xz on 400 MB of libraries; dpkg reads it since Debian 12 / Ubuntu 21.10
dpkg-deb --root-owner-group -Zzstd -z6 --build "$STAGE" "$DEB.partial" >/dev/null \
  || fail "dpkg-deb failed; no package was written"
mv "$DEB.partial" "$DEB"
echo "packaged in $(seconds "$started") s; $(du -m "$DEB" | cut -f1) MB"
echo "Install with: sudo apt-get install $DEB"
