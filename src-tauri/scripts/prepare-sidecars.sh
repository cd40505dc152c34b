#!/bin/sh
# Builds the two programs the app bundles as sidecars (fabric-tray, fabric-session) and copies
# them to src-tauri/binaries/<name>-<target triple>[.exe], where `tauri build` looks for them
# when the bundle config is merged:
#
#   src-tauri/scripts/prepare-sidecars.sh                       # release, this machine's triple
#   src-tauri/scripts/prepare-sidecars.sh --debug               # debug build (quicker)
#   src-tauri/scripts/prepare-sidecars.sh --target <triple>     # another triple (cargo --target)
#   (cd ui && npm run bundle)   # tauri build with tauri.bundle.conf.json: .deb on Linux,
#                               # .msi and NSIS on Windows, .app and .dmg on macOS
#
# The triple is also read from $TAURI_TARGET_TRIPLE. Windows triples get `.exe`. On macOS,
# `--target universal-apple-darwin` builds both Apple triples and joins them with `lipo`.
# The base tauri.conf.json names no sidecar, so a plain `cargo build -p fabric-companion` never
# needs these files.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
profile=release
triple=${TAURI_TARGET_TRIPLE:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug ;;
    --target) shift; triple=$1 ;;
    *) echo "prepare-sidecars: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
host=$(rustc -vV | sed -n 's/^host: //p')
[ -n "$triple" ] || triple=$host
target_dir=${CARGO_TARGET_DIR:-$root/target}

# build <triple>: builds both programs for that triple; prints the folder they are in.
build() {
  set -- "$1"
  flags="-p fabric-tray -p fabric-session"
  [ "$profile" = release ] && flags="--release $flags"
  if [ "$1" = "$host" ]; then
    cargo build --manifest-path "$root/Cargo.toml" $flags >&2
    echo "$target_dir/$profile"
  else
    cargo build --manifest-path "$root/Cargo.toml" --target "$1" $flags >&2
    echo "$target_dir/$1/$profile"
  fi
}

case "$triple" in
  *windows*) ext=.exe ;;
  *) ext= ;;
esac
mkdir -p "$here/binaries"
if [ "$triple" = universal-apple-darwin ]; then
  arm=$(build aarch64-apple-darwin)
  intel=$(build x86_64-apple-darwin)
  for name in fabric-tray fabric-session; do
    lipo -create -output "$here/binaries/$name-$triple.tmp" "$arm/$name" "$intel/$name"
    mv "$here/binaries/$name-$triple.tmp" "$here/binaries/$name-$triple"
    echo "prepared binaries/$name-$triple ($profile, universal)"
  done
  exit 0
fi
out=$(build "$triple")
for name in fabric-tray fabric-session; do
  cp "$out/$name$ext" "$here/binaries/$name-$triple$ext.tmp"
  mv "$here/binaries/$name-$triple$ext.tmp" "$here/binaries/$name-$triple$ext"
  echo "prepared binaries/$name-$triple$ext ($profile)"
done
