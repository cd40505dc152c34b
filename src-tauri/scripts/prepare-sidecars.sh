#!/bin/sh
# Builds the two programs the app bundles as sidecars (fabric-tray, fabric-session) and copies
# them to src-tauri/binaries/<name>-<target triple>, where `tauri build` looks for them when the
# bundle config is merged:
#
#   src-tauri/scripts/prepare-sidecars.sh            # release build (what bundles ship)
#   src-tauri/scripts/prepare-sidecars.sh --debug    # debug build (quicker, for trying it out)
#   (cd ui && npx tauri build --config ../src-tauri/tauri.bundle.conf.json --bundles deb)
#
# The base tauri.conf.json names no sidecar, so a plain `cargo build -p fabric-companion` never
# needs these files.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
profile=release
[ "${1:-}" = "--debug" ] && profile=debug
triple=${TAURI_TARGET_TRIPLE:-$(rustc -vV | sed -n 's/^host: //p')}
target_dir=${CARGO_TARGET_DIR:-$root/target}
if [ "$profile" = release ]; then
  cargo build --manifest-path "$root/Cargo.toml" --release -p fabric-tray -p fabric-session
else
  cargo build --manifest-path "$root/Cargo.toml" -p fabric-tray -p fabric-session
fi
mkdir -p "$here/binaries"
for name in fabric-tray fabric-session; do
  cp "$target_dir/$profile/$name" "$here/binaries/$name-$triple.tmp"
  mv "$here/binaries/$name-$triple.tmp" "$here/binaries/$name-$triple"
  echo "prepared binaries/$name-$triple ($profile)"
done
