#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what it needs, then checks
# formatting, lints with warnings denied (for Linux, and for Windows and macOS cross-checked
# from here), and runs every test: the hooks' and installer's
# integration tests, watch-mail, jumping to a session (`focus`, under Xvfb with openbox, xterm
# and tmux), the tray (under Xvfb with dunst, and trayer or a real StatusNotifierItem host:
# status-notifier-watcher with gtk-sni-tray-standalone), the real desktop shells headless
# (tests/desktop-shells: GNOME Shell with its AppIndicator extension, KWin with Plasma's tray
# and notifications, foot, kitty and konsole; and the same suite on GNOME Shell 48/50 and
# Plasma 6.3/6.7 in Debian 13 and forky roots, tests/desktop-roots), the dashboard's
# unit, browser (Debian's Chromium) and end-to-end tests (the real WebKit webview through
# tauri-driver), the real agent hosts, and the Linux package installed and removed; and,
# beside them in the background, Windows: the workspace built and linted for Windows, the
# Windows package made, and the Wine suite (tests/wine) run under Wine; and fabric-session
# for aarch64 remotes, built in the background too, then run under qemu-user
# (hookbin/tests/aarch64.rs) and shipped in the package.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every step's line starts with the minutes since the start and the disk left, so a slow or
# full machine shows where. One build per target folder: incremental compilation only costs
# time and disk here (CI builds once).
export CARGO_INCREMENTAL=0
say() {
  printf '== [%d:%02d, %s free] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) \
    "$(df -h --output=avail . | tail -1 | tr -d ' ')" "$*"
}

# ---- system packages (installed only when missing) ---------------------------------------
. scripts/packages.sh
packages=(
  "${BUILD_PACKAGES[@]}"
  xvfb xauth x11-utils xdotool imagemagick dbus dbus-x11 dunst trayer webkit2gtk-driver chromium
  fish zsh
  openbox xterm tmux strace
  # the remotes' real OpenSSH bench (tests/test-support ssh_remote): sshd is started by the
  # tests themselves; policy-rc.d below keeps the package's own sshd from starting
  openssh-server openssh-client
  # a dev container as a remote (tray/tests/robustness/containers.rs): Podman with runc (this
  # kernel's hybrid cgroups are refused by crun), and Docker (the test starts its own dockerd
  # on a socket of its own; policy-rc.d below keeps the package's from starting)
  podman runc docker.io
  haskell-status-notifier-item-utils haskell-gtk-sni-tray-utils
  # the desktop shells, headless (tests/desktop-shells): GNOME Shell 43, its AppIndicator
  # extension and its notification daemon (gjs); KWin with Qt's Wayland platform, Plasma's
  # shell and tray (plasma-desktop, plasma-workspace's kded module); real terminals
  gnome-shell gnome-shell-extension-appindicator gjs libglib2.0-bin
  kwin-wayland qtwayland5 plasma-workspace plasma-desktop kactivitymanagerd qdbus-qt5
  foot kitty konsole gnome-terminal gnome-console alacritty
  # today's desktops in Debian 13 and forky roots (tests/desktop-roots)
  mmdebstrap
  # Windows under Wine (tests/wine): Debian's Rust builds the Windows standard library
  rustc-web cargo-web rust-web-src rust-web-clippy gcc-mingw-w64-x86-64 wine64 nsis
  # fabric-session for aarch64 remotes (scripts/build-hook-binary.sh --aarch64, with the same
  # Debian Rust): the cross linker and arm64 glibc; run under qemu-user (hookbin/tests/aarch64.rs)
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
)
# Installing openssh-server (or docker.io) starts the system's sshd (dockerd) through
# invoke-rc.d where services run: a policy-rc.d denying every start while apt-get runs keeps
# port 22 free (a container without one, or with its own, is left as it was).
policy_rc=""
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if [ ! -e /usr/sbin/policy-rc.d ] && [ "$(id -u)" = 0 ] &&
  { ! installed openssh-server || ! installed docker.io; }; then
  policy_rc=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' >"$policy_rc" && chmod 755 "$policy_rc"
fi
ensure_packages "${packages[@]}" || { [ -z "$policy_rc" ] || rm -f "$policy_rc"; exit 1; }
[ -z "$policy_rc" ] || rm -f "$policy_rc"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v tauri-driver >/dev/null 2>&1; then
  say "installing tauri-driver"
  cargo install tauri-driver --locked --quiet
fi

# ---- the dashboard's front end (the Tauri crate embeds ui/dist) ---------------------------
say "ui: npm ci, build, unit tests, lint, format check"
(cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test)
(cd ui && npm run lint && npm run format:check)
say "docs: links and images"
bash scripts/check-docs.sh

# ---- Windows, under Wine, in the background (tests/wine) ----------------------------------
# Independent of the Linux suites below, so it runs beside them (niced: the foreground keeps
# the CPU it needs). scripts/build-windows.sh builds the workspace for x86_64-pc-windows-gnu
# with clippy's warnings denied in the same compilation (one Windows standard library for
# both), scripts/build-windows-installer.sh makes the Windows package from those programs,
# then the Wine suite's test program (built by the foreground's cargo, below) runs them, each
# test in a fresh Wine prefix. Its output is printed at the end; a failure fails the run.
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
wine_dir=$(mktemp -d)
wine_log="$wine_dir/windows.log"
wine_suite="$wine_dir/suite"    # the foreground writes the test program's path here
say "Windows under Wine: started in the background (its output at the end)"
# shellcheck disable=SC2016 # the inner bash expands them
setsid bash -c '
  set -euo pipefail
  started=$(date +%s)
  bin_dir=$(bash scripts/build-windows.sh)
  echo "== Windows build and clippy: $(( $(date +%s) - started )) s"
  installer=$(FABRIC_WINE_BIN_DIR="$bin_dir" bash scripts/build-windows-installer.sh --debug)
  echo "== the Windows package: $installer"
  while [ ! -s "$1" ]; do sleep 2; done
  suite_started=$(date +%s)
  FABRIC_REQUIRE_DESKTOP_TESTS=1 FABRIC_WINE_BIN_DIR="$bin_dir" FABRIC_WINE_INSTALLER="$installer" \
    nice "$(cat "$1")" --test-threads 2
  echo "== Wine suite: $(( $(date +%s) - suite_started )) s; Windows in all: $(( $(date +%s) - started )) s"
' wine-suite "$wine_suite" >"$wine_log" 2>&1 &
wine_pid=$!
trap 'kill -- -"$wine_pid" 2>/dev/null || true' EXIT

# ---- fabric-session for aarch64, in the background -----------------------------------------
# The program `remote add` copies to an aarch64 remote, built as it ships
# (scripts/build-hook-binary.sh --aarch64: static, release, its own target folder and standard
# library, kept between runs). Beside the clippy and build steps below (niced); the workspace's
# tests wait for it: hookbin/tests/aarch64.rs runs it under qemu-user against the native
# program, and the package (scripts/build-deb.sh) ships it. A failure fails the run. Cold it
# is about 9 CPU-minutes (aarch64's standard library and every dependency, thin LTO), 9 min 47 s
# alone on a busy 2-core machine; after a change in our crates about 3.
aarch64_log="$wine_dir/aarch64.log"
aarch64_path="$wine_dir/aarch64-path"
say "fabric-session for aarch64: built in the background"
# shellcheck disable=SC2016 # the inner bash expands them
setsid bash -c '
  set -euo pipefail
  started=$(date +%s)
  nice bash scripts/build-hook-binary.sh --aarch64 >"$1"
  echo "== fabric-session for aarch64: $(cat "$1") ($(du -k "$(cat "$1")" | cut -f1) KiB), built in $(( $(date +%s) - started )) s"
' aarch64-build "$aarch64_path" >"$aarch64_log" 2>&1 &
aarch64_pid=$!
trap 'kill -- -"$wine_pid" 2>/dev/null || true; kill -- -"$aarch64_pid" 2>/dev/null || true' EXIT
# An aarch64 program exec'd runs under qemu through binfmt_misc: Debian's qemu-user-static
# registers qemu-aarch64 at boot (systemd-binfmt); where nothing did (a container, a machine
# without systemd), root registers it here from the package's own entry, and leaves it, as
# the package would. hookbin/tests/aarch64.rs then sets up an aarch64 remote with `remote
# add`; without the entry that test fails (FABRIC_REQUIRE_DESKTOP_TESTS=1) saying so.
binfmt=/proc/sys/fs/binfmt_misc
if [ "$(id -u)" = 0 ] && [ ! -e "$binfmt/qemu-aarch64" ]; then
  if { [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"; } &&
    cat /usr/lib/binfmt.d/qemu-aarch64.conf >"$binfmt/register"; then
    say "binfmt_misc: qemu-aarch64 registered"
  else
    say "binfmt_misc: qemu-aarch64 could not be registered (the aarch64 remote test will say so)"
  fi
fi

# ---- today's desktops' roots, built in the background when missing (tests/desktop-roots) --
# mmdebstrap mostly waits on the mirror: building the Debian 13 and forky roots beside the
# Rust builds (niced) hides most of their cold time. The roots step below waits for it.
roots_dir=${FABRIC_ROOTS_DIR:-/var/cache/fabric-roots}
roots_build_log="$wine_dir/roots-build.log"
roots_pid=
if [ "$(id -u)" = 0 ]; then
  say "Debian 13 and forky roots: built in the background when missing (cached in $roots_dir)"
  command -v mmdebstrap >/dev/null
  # shellcheck disable=SC2016 # the inner bash expands them
  setsid bash -c '
    set -euo pipefail
    # The same folders run.sh uses: named by build-root.sh'"'"'s hash.
    key=$(bash tests/desktop-roots/build-root.sh key)
    for suite in trixie forky; do
      [ -e "$1/$suite-$key/.fabric-root-ok" ] && { echo "== the $suite root: cached"; continue; }
      started=$(date +%s)
      nice bash tests/desktop-roots/build-root.sh "$suite" "$1/$suite-$key"
      echo "== the $suite root built in $(( $(date +%s) - started )) s"
    done
  ' roots-build "$roots_dir" >"$roots_build_log" 2>&1 &
  roots_pid=$!
  trap 'kill -- -"$wine_pid" 2>/dev/null || true; kill -- -"$aarch64_pid" 2>/dev/null || true; [ -z "$roots_pid" ] || kill -- -"$roots_pid" 2>/dev/null || true' EXIT
fi

# ---- Rust ---------------------------------------------------------------------------------
say "cargo fmt --check"
cargo fmt --all -- --check
say "cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings
say "clippy for macOS, from here (warnings denied; scripts/check-foreign.sh; Windows is linted in the background build)"
bash scripts/check-foreign.sh macos
say "cargo build (the binaries the end-to-end tests start)"
cargo build --workspace --locked
# The Wine suite's test program, for the background job above.
cargo test -p wine-bench --test windows --no-run --locked --message-format=json \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "windows":
        print(m["executable"])' >"$wine_suite.tmp"
mv "$wine_suite.tmp" "$wine_suite"
say "cargo test"
shells_log="$target_dir/desktop-shells-tests.log"
# The tray's end-to-end test opens the real dashboard, and its load test (tray/tests/load.rs,
# a minute: FABRIC_LOAD_SECS) runs it beside the tray under load (built by the cargo build
# above). Here a desktop test may never skip itself: FABRIC_REQUIRE_DESKTOP_TESTS=1 turns "no
# virtual desktop" (or no dashboard) into a failure. The dashboard's page types must be what the Rust types give (a
# test of fabric-companion compares ui/src/types.ts with them).
cargo test --workspace --locked --no-run
# The aarch64 program, for hookbin/tests/aarch64.rs (under qemu-aarch64-static) and the package.
say "waiting for the aarch64 build"
if ! wait "$aarch64_pid"; then
  cat "$aarch64_log"
  echo "fabric-session for aarch64 could not be built" >&2
  exit 1
fi
cat "$aarch64_log"
FABRIC_AARCH64_BIN=$(cat "$aarch64_path")
export FABRIC_AARCH64_BIN
FABRIC_REQUIRE_DESKTOP_TESTS=1 FABRIC_E2E_COMPANION="$target_dir/debug/fabric-companion" \
  cargo test --workspace --locked --exclude desktop-shells --exclude wine-bench
# The real desktop shells (tests/desktop-shells: GNOME Shell, KWin and Plasma, headless), after
# the rest rather than beside it: they measure how soon a board change reaches GNOME's top
# bar (median of seven within 200 ms), and the rest of the suite beside them (the tray's load
# test keeps both CPUs busy for a minute) once made that 0.3 s. Each test has its own buses,
# compositor and folders; their log is kept.
say "the desktop shells (tests/desktop-shells; log: $shells_log)"
if ! FABRIC_REQUIRE_DESKTOP_TESTS=1 cargo test --locked -p desktop-shells -- --nocapture >"$shells_log" 2>&1; then
  cat "$shells_log"
  echo "the desktop shells' tests failed" >&2
  exit 1
fi
grep -E "^(GNOME Shell|NOT RUN|test result)" "$shells_log" || true
# Today's desktops (tests/desktop-roots): the same suite inside Debian 13 (GNOME Shell 48,
# Plasma 6.3) and forky (GNOME Shell 50, Plasma 6.7) roots, against our debug package
# installed there with apt-get. The roots are built once with mmdebstrap and cached under
# ${FABRIC_ROOTS_DIR:-/var/cache/fabric-roots} (about 10 minutes each cold on a busy 2-core
# machine, 2 GB each; built in the background above); the package built here is reused by the
# installed-package step below.
roots_log="$target_dir/desktop-roots-tests.log"
if [ -n "$roots_pid" ]; then
  say "waiting for the roots' background build"
  if ! wait "$roots_pid"; then
    cat "$roots_build_log"
    echo "the desktop roots could not be built" >&2
    exit 1
  fi
  roots_pid=
  grep "^==" "$roots_build_log" || true
fi
say "today's desktops in Debian roots (tests/desktop-roots; log: $roots_log)"
FABRIC_DEB=$(bash scripts/build-deb.sh --debug)
export FABRIC_DEB
if ! FABRIC_REQUIRE_DESKTOP_TESTS=1 bash tests/desktop-roots/run.sh >"$roots_log" 2>&1; then
  cat "$roots_log"
  echo "the desktop roots' tests failed" >&2
  exit 1
fi
grep -E "^(==|  [a-z_]+:)" "$roots_log" || true

# ---- browser and end-to-end ---------------------------------------------------------------
say "ui: browser tests (Chromium, IPC mocked)"
(cd ui && npm run test:browser)
say "dashboard end to end (WebKit webview through tauri-driver)"
FABRIC_E2E_BIN_DIR="$target_dir/debug" bash tests/e2e-dashboard/run.sh

# ---- real agent hosts (tests/real-hosts) --------------------------------------------------
# Installs the pinned Claude Code, Codex and Kimi Code from npm into their own cache folder
# (${FABRIC_TEST_HOSTS_CACHE:-~/.cache/fabric-companion-test-hosts}, reused; about 40 s and
# 1.1 GB cold) and runs whole sessions of each with our hooks against a local model stand-in.
# FABRIC_SKIP_REAL_HOSTS=1 leaves this block out (the suite's tests then say "not run").
if [ "${FABRIC_SKIP_REAL_HOSTS:-0}" = 1 ]; then
  say "real hosts: skipped (FABRIC_SKIP_REAL_HOSTS=1)"
else
  say "real hosts: Claude Code, Codex, Kimi Code (tests/real-hosts/run.sh)"
  bash tests/real-hosts/run.sh
fi

# ---- the package, tested as installed (tests/installed-package) ---------------------------
# Builds the debug .deb once (scripts/build-deb.sh --debug), installs it with apt-get, checks
# it as a person would under Xvfb (tray from the autostart entry, dashboard from the desktop
# entry, hooks through the dashboard, a real hook run, the shipped Claude Code plugin with the
# cached real Claude Code), then removes and purges it. Needs root, as CI runs.
say "the package, installed (tests/installed-package/run.sh)"
FABRIC_REQUIRE_DESKTOP_TESTS=1 bash tests/installed-package/run.sh

# ---- Windows under Wine: its result ---------------------------------------------------------
say "Windows under Wine (waiting for the background job)"
wine_status=0
wait "$wine_pid" || wine_status=$?
trap - EXIT
cat "$wine_log"
rm -rf "$wine_dir"
if [ "$wine_status" != 0 ]; then
  echo "== Windows under Wine FAILED (exit $wine_status)" >&2
  exit "$wine_status"
fi
say "all passed"
