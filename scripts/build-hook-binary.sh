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
# Usage: scripts/build-hook-binary.sh [extra cargo args]   (prints the binary's path)
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
case "$(uname -s)" in
  Linux)
    triple=$(rustc -vV | sed -n 's/^host: //p')
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C relocation-model=static" \
      cargo build --release --locked -q -p fabric-session --target "$triple" "$@" >&2
    echo "$target_dir/$triple/release/fabric-session"
    ;;
  *)
    cargo build --release --locked -q -p fabric-session "$@" >&2
    echo "$target_dir/release/fabric-session"
    ;;
esac
