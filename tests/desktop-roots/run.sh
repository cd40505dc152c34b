#!/usr/bin/env bash
# The desktop-shells suite on today's desktops: GNOME Shell 48 and KWin/Plasma 6.3 (Debian 13,
# trixie), GNOME Shell 50 and KWin/Plasma 6.7 (forky), each in a Debian root built once with
# mmdebstrap (tests/desktop-roots/build-root.sh; cached under $FABRIC_ROOTS_DIR, default
# /var/cache/fabric-roots, rebuilt only when missing) with our debug .deb installed by apt-get.
# The suite's test programs, built here on Debian 12 (glibc is forward compatible), run inside
# each root: a private mount namespace (unshare -m --propagation private) with proc, /sys,
# /dev, a fresh /run and /tmp, this checkout and the target folder bound at their own paths,
# then chroot. FABRIC_DESKTOP_INSTALLED=1 makes them use the installed programs (/usr/bin)
# and the GNOME Shell extension the package linked; each test adapts to the shell it finds
# (gnome-shell --version, kwin_wayland --version).
#
#   tests/desktop-roots/run.sh [suite…]        # default: trixie forky
#   FABRIC_DEB=<path>                          # a .deb already built (else build-deb.sh --debug)
#   FABRIC_ROOT_TESTS="gnome_tray gnome_jump"  # which test files (default: all of the suite)
#
# Needs root (mmdebstrap --mode=root, chroot, mounts), as CI runs. Prints one line per root
# with what ran and the time; the full log of each root is kept beside the test artefacts.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie forky)
roots_dir=${FABRIC_ROOTS_DIR:-/var/cache/fabric-roots}
tests=(${FABRIC_ROOT_TESTS:-gnome_tray gnome_jump gnome_extension_states kde terminal_tabs})

if [ "$(id -u)" != 0 ]; then
  echo "tests/desktop-roots: needs root (mmdebstrap, chroot, mounts)" >&2
  [ "${FABRIC_REQUIRE_DESKTOP_TESTS:-0}" = 1 ] && exit 1
  exit 0
fi
command -v mmdebstrap >/dev/null || apt-get install -y -q mmdebstrap >/dev/null

target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
logs="$target_dir/e2e-shots/desktop-roots"
mkdir -p "$logs"

# ---- the roots (cached) -------------------------------------------------------------------
# Each root's folder is named by build-root.sh's hash: a changed package list builds anew.
key=$(bash tests/desktop-roots/build-root.sh key)
for suite in "${suites[@]}"; do
  if [ ! -e "$roots_dir/$suite-$key/.fabric-root-ok" ]; then
    started=$(date +%s)
    bash tests/desktop-roots/build-root.sh "$suite" "$roots_dir/$suite-$key" >"$logs/build-$suite.log" 2>&1 \
      || { cat "$logs/build-$suite.log"; echo "tests/desktop-roots: cannot build the $suite root" >&2; exit 1; }
    echo "== the $suite root built in $(( $(date +%s) - started )) s"
  fi
done

# ---- our package and the suite's test programs --------------------------------------------
deb=${FABRIC_DEB:-}
if [ -z "$deb" ]; then
  deb=$(bash scripts/build-deb.sh --debug)
fi
cargo test --locked -p desktop-shells --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]:
        print(m["target"]["name"], m["executable"])' >"$logs/programs"

# ---- each root ----------------------------------------------------------------------------
# Inside the namespace: the mounts, our package installed, the chosen tests run.
inside='
set -euo pipefail
root=$1 deb=$2 repo=$3 target=$4 logs=$5
shift 5
# The root a mount point of its own: the `unshare -m` of the tests inside the chroot makes "/"
# private, which needs "/" to be a mount.
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
chmod 1777 "$root/tmp"
for dir in "$repo" "$target"; do
  mkdir -p "$root$dir"
  mount --bind "$dir" "$root$dir"
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp "$deb" "$root/tmp/fabric-companion.deb"
export DEBIAN_FRONTEND=noninteractive
if ! chroot "$root" apt-get install -y -q --no-install-recommends /tmp/fabric-companion.deb >"$logs/apt.log" 2>&1; then
  chroot "$root" apt-get update -q >>"$logs/apt.log" 2>&1
  chroot "$root" apt-get install -y -q --no-install-recommends /tmp/fabric-companion.deb >>"$logs/apt.log" 2>&1 \
    || { tail -20 "$logs/apt.log"; echo "cannot install the package"; exit 1; }
fi
echo "installed: $(chroot "$root" dpkg-query -W -f "\${Version}" fabric-companion), extension $(readlink "$root/usr/share/gnome-shell/extensions/fabric-companion-focus@passioncode.ai")"
echo "desktops: $(chroot "$root" gnome-shell --version), $(chroot "$root" kwin_wayland --version 2>/dev/null | tail -1)"
status=0
for program in "$@"; do
  name=${program%%=*}
  exe=${program#*=}
  if chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 FABRIC_E2E_SHOTS="$logs/shots" FABRIC_DESKTOP_INSTALLED=1 FABRIC_REQUIRE_DESKTOP_TESTS=1 \
      RUST_BACKTRACE=1 FABRIC_GNOME_STARTS=${FABRIC_GNOME_STARTS:-9} "$exe" --nocapture --test-threads 2 >"$logs/$name.log" 2>&1; then
    echo "  $name: $(grep -E "^test result" "$logs/$name.log" | tail -1)"
    # A test that cannot run in a root says so, with why, on one line each.
    grep -E "^NOT RUN" "$logs/$name.log" | sed "s/^/    /" || true
  else
    echo "  $name: FAILED ($(grep -E "^test result" "$logs/$name.log" | tail -1))"
    grep -E "^test .* FAILED|panicked at" "$logs/$name.log" | head -10 | sed "s/^/    /"
    status=1
  fi
done
chroot "$root" apt-get remove -y -q fabric-companion >>"$logs/apt.log" 2>&1 || true
exit $status
'
status=0
for suite in "${suites[@]}"; do
  started=$(date +%s)
  suite_logs="$logs/$suite"
  rm -rf "$suite_logs"
  mkdir -p "$suite_logs"
  programs=()
  for test in "${tests[@]}"; do
    exe=$(awk -v t="$test" '$1 == t { print $2 }' "$logs/programs" | tail -1)
    [ -n "$exe" ] || { echo "tests/desktop-roots: no test program $test" >&2; exit 1; }
    programs+=("$test=$exe")
  done
  echo "== $suite"
  if ! unshare -m --propagation private bash -c "$inside" inside "$roots_dir/$suite-$key" "$deb" "$repo" \
      "$target_dir" "$suite_logs" "${programs[@]}"; then
    status=1
  fi
  echo "== $suite: $(( $(date +%s) - started )) s (logs: $suite_logs)"
done
exit $status
