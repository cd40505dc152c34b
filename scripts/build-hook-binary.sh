#!/usr/bin/env bash
# Builds fabric-session the way it ships and prints its path. On Linux it is linked
# statically and at a fixed address (glibc, not position-independent): a hook then pays
# neither the dynamic loader nor the relocation of its own image, which together were most of
# what starting it cost (callgrind: 457k instructions dynamic, 169k static PIE, 61k static for
# user-prompt-submit; /bin/true is 128k; bench/hooks.sh times it against the dynamic build).
# The price is no address randomisation for this one short-lived, memory-safe binary. The
# tray and the dashboard stay dynamic (GTK and WebKit need it); only this binary gets the
# flags, through an explicit --target so build scripts and proc-macros are untouched.
# Elsewhere it is an ordinary release build.
#
# --aarch64 builds the same program, with the same flags, for aarch64-unknown-linux-gnu: the
# copy `fabric-session remote add` puts on an aarch64 remote (shipped in the Linux package as
# /usr/lib/fabric-companion/fabric-session-aarch64). rustup here has only the host's standard
# library, so Debian's Rust (rustc-web, cargo-web, rust-web-src) builds aarch64's
# (-Zbuild-std, RUSTC_BOOTSTRAP=1 for this command only, as scripts/build-windows.sh does for
# Windows), linked by Debian's cross gcc against its arm64 glibc (gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross). Its target folder ($FABRIC_AARCH64_TARGET_DIR, default
# <cargo target dir>/aarch64) is its own, kept between runs. Run under qemu-user by
# hookbin/tests/aarch64.rs; never on real aarch64 hardware here.
#
# Usage: scripts/build-hook-binary.sh [--aarch64] [extra cargo args]   (prints the binary's path)
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# The one place the shipping link flags are written.
static_flags="-C target-feature=+crt-static -C relocation-model=static"

if [ "${1:-}" = --aarch64 ]; then
  shift
  . scripts/packages.sh
  ensure_packages rustc-web cargo-web rust-web-src gcc-aarch64-linux-gnu libc6-dev-arm64-cross >&2
  debian_cargo=/usr/bin/cargo
  for tool in "$debian_cargo" /usr/bin/rustc aarch64-linux-gnu-gcc; do
    command -v "$tool" >/dev/null || { echo "build-hook-binary: $tool is missing" >&2; exit 1; }
  done
  triple=aarch64-unknown-linux-gnu
  dir=${FABRIC_AARCH64_TARGET_DIR:-$target_dir/aarch64}
  env CARGO="$debian_cargo" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    RUSTFLAGS="${RUSTFLAGS:-} $static_flags" \
    "$debian_cargo" build --release --locked -q -p fabric-session \
    -Zbuild-std=std,panic_abort --target "$triple" --target-dir "$dir" "$@" >&2
  echo "$dir/$triple/release/fabric-session"
  exit 0
fi

case "$(uname -s)" in
  Linux)
    triple=$(rustc -vV | sed -n 's/^host: //p')
    RUSTFLAGS="${RUSTFLAGS:-} $static_flags" \
      cargo build --release --locked -q -p fabric-session --target "$triple" "$@" >&2
    echo "$target_dir/$triple/release/fabric-session"
    ;;
  *)
    cargo build --release --locked -q -p fabric-session "$@" >&2
    echo "$target_dir/release/fabric-session"
    ;;
esac
