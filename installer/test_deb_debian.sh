#!/usr/bin/env bash
# Install Labrig's .deb on a bare Debian the way IT would, and run its self-test there.
#
#   sudo installer/test_deb_debian.sh DEB [--suite bookworm] [--mirror URL] [--keep]
#
# Creates a minimal Debian root with debootstrap (installed with apt-get when missing), installs
# DEB in it with `apt-get install ./labrig_….deb` (its Depends pull the Qt runtime libraries;
# recommended packages are not installed, so Depends alone must be enough), then as a plain user:
#   * `labrig --self-test` with QT_QPA_PLATFORM=offscreen, which must pass, and whose qt-xcb line
#     must be PASS (the window's plugin loads: the xcb libraries came with Depends);
#   * ldd on the bundle's Qt platform plugins: no library may be missing.
# Needs root (debootstrap, chroot, mount) and a Debian mirror. Takes ~2 minutes here (docs/install.md).
# Exits 0 when all passed, 1 on a failure, 2 on a wrong argument.
set -euo pipefail

usage() { echo "usage: $0 DEB [--suite bookworm] [--mirror URL] [--keep]" >&2; exit 2; }
fail() { echo "test_deb_debian.sh: $*" >&2; exit 1; }

DEB="" SUITE=bookworm MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian} KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) [ $# -ge 2 ] || usage; SUITE=$2; shift 2 ;;
    --mirror) [ $# -ge 2 ] || usage; MIRROR=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test_deb_debian.sh: unknown option '$1'" >&2; usage ;;
    *) [ -z "$DEB" ] || usage; DEB=$1; shift ;;
  esac
done
[ -n "$DEB" ] || usage
[ -f "$DEB" ] || fail "no such package file: $DEB (build it with installer/build.sh)"
case "$DEB" in *.deb) ;; *) fail "$DEB is not a .deb file" ;; esac
dpkg-deb --field "$DEB" Package >/dev/null 2>&1 || fail "$DEB is not a readable Debian package"
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot and mount): run it with sudo"

step() { printf '\n== %s\n' "$*"; }
t0=$(date +%s)
lap() { echo "   ($(( $(date +%s) - t0 )) s so far)"; }

if ! command -v debootstrap >/dev/null; then
  step "Installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
    || fail "could not install debootstrap with apt-get"
fi

ROOT=$(mktemp -d "${TMPDIR:-/var/tmp}/labrig-debian.XXXXXX")
chmod 755 "$ROOT"  # mktemp makes it 0700: the plain user (and apt's _apt) must reach /
cleanup() {
  mountpoint -q "$ROOT/proc" && umount "$ROOT/proc"
  if [ "$KEEP" -eq 1 ]; then echo "kept the Debian root in $ROOT"; else rm -rf "$ROOT"; fi
}
trap cleanup EXIT

step "debootstrap --variant=minbase $SUITE from $MIRROR into $ROOT"
debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" > "$ROOT.debootstrap.log" 2>&1 || {
  tail -20 "$ROOT.debootstrap.log" >&2; rm -f "$ROOT.debootstrap.log"
  fail "debootstrap could not build a Debian root from $MIRROR (see above)"; }
rm -f "$ROOT.debootstrap.log"
lap

step "apt-get install ./$(basename "$DEB") in the bare root"
mount -t proc proc "$ROOT/proc"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
cp "$DEB" "$ROOT/tmp/"
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -qq || fail "apt-get update failed inside the Debian root"
in_root sh -c "cd /tmp && apt-get install -y -q --no-install-recommends ./$(basename "$DEB")" \
  || fail "apt-get could not install $(basename "$DEB") on bare Debian $SUITE (see above)"
in_root useradd --create-home lab
lap

step "ldd on the bundled Qt platform plugins (no library may be missing)"
missing=$(in_root sh -c 'cd /opt/labrig/_internal/PySide6/Qt/plugins &&
  for f in platforms/libqoffscreen.so platforms/libqxcb.so platforms/libqwayland.so xcbglintegrations/*.so; do
    LD_LIBRARY_PATH=/opt/labrig/_internal ldd "$f" | sed -n "s|^\s*\(\S*\) => not found|$f: \1|p"; done')
[ -z "$missing" ] || fail "libraries missing on bare Debian (add their packages to Depends in installer/build.sh):
$missing"
echo "all found"

step "labrig --self-test as a plain user, offscreen"
out=$(chroot --userspec=lab:lab "$ROOT" env -i HOME=/home/lab PATH=/usr/bin:/bin QT_QPA_PLATFORM=offscreen \
  labrig --self-test 2>&1) && rc=0 || rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "the installed Labrig failed its self-test on bare Debian $SUITE (exit $rc)"
grep -q "PASS  qt-xcb" <<<"$out" || fail "the window's platform plugin (xcb) does not load on bare Debian $SUITE"
lap
echo "bare Debian $SUITE: installed with apt-get and self-test passed in $(( $(date +%s) - t0 )) s"
