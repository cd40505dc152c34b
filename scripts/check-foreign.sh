#!/usr/bin/env bash
# Lints the workspace for the two foreign targets, Windows and macOS (aarch64-apple-darwin),
# with warnings denied: the platform code (process facts, detached start, autostart, paths,
# hook commands) is compiled for the systems it is written for, on this Linux machine.
#
# Windows is linted by scripts/build-windows.sh, in the build of the Windows programs the Wine
# suite runs (x86_64-pc-windows-gnu; clippy's driver wraps the workspace's compiler there, so
# one Windows standard library and one compilation of every dependency serve both). macOS is
# checked only: nothing is linked and nothing runs; what it proves is that the code compiles
# and passes clippy there.
#
# The rustup toolchain here has no foreign standard library and none can be downloaded, so
# this uses Debian's own Rust (rustc-web, with clippy and the standard library's sources) and
# builds `std` for each target (`-Zbuild-std`, allowed on a stable compiler by
# RUSTC_BOOTSTRAP=1, for this command only).
#
# What is left out, and why: on macOS, the dashboard (`fabric-companion`): wry turns on
# objc2's `exception` feature, whose helper is Objective-C compiled against the macOS SDK by a
# build script, and the SDK is not available off a Mac. The dashboard's platform code lives in
# the `companion-*` crates, which are checked. (The tray's macOS notifications use objc2 bindings, not
# notify-rust's C backend, so the tray is checked whole.) See the README.
#
# Usage: scripts/check-foreign.sh [windows|macos]...   (default: both)
# The target folder is kept between runs ($FABRIC_FOREIGN_TARGET_DIR, default
# <cargo target dir>/foreign): a warm run takes seconds, a cold one several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/packages.sh
ensure_packages rustc-web cargo-web rust-web-src rust-web-clippy

# Debian's toolchain, not rustup's proxies: cargo, the compiler, clippy's driver.
debian_cargo=/usr/bin/cargo
for tool in "$debian_cargo" /usr/bin/rustc /usr/bin/cargo-clippy /usr/bin/clippy-driver; do
  [ -x "$tool" ] || { echo "check-foreign: $tool is missing" >&2; exit 1; }
done

if [ -z "${FABRIC_FOREIGN_TARGET_DIR:-}" ]; then
  target_root=$("$debian_cargo" metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  FABRIC_FOREIGN_TARGET_DIR="$target_root/foreign"
fi

lint() {
  local triple=$1
  shift
  echo "== clippy for $triple: $*"
  # RUSTC_WORKSPACE_WRAPPER is how cargo-clippy runs clippy-driver; cargo-clippy finds its
  # driver beside itself and the cargo to run in $CARGO.
  CARGO="$debian_cargo" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
    nice /usr/bin/cargo-clippy clippy \
    -Zbuild-std=std,panic_abort --target "$triple" \
    --target-dir "$FABRIC_FOREIGN_TARGET_DIR" --locked --keep-going --all-targets "$@" -- -D warnings
}

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(windows macos)
for target in "${targets[@]}"; do
  case "$target" in
    windows)
      bash scripts/build-windows.sh >/dev/null
      ;;
    macos)
      lint aarch64-apple-darwin --workspace --exclude fabric-companion
      ;;
    *)
      echo "check-foreign: unknown target '$target' (windows or macos)" >&2
      exit 2
      ;;
  esac
done
