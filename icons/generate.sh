#!/usr/bin/env bash
# Regenerates the PNGs in this folder from the drawing code in tray/src/icon.rs (the same
# code the tray draws its live icon with: base art, 5×7 bitmap count, grey, warning mark),
# then the dashboard's bundle icons in src-tauri/icons from app-512.png with Tauri's own
# `tauri icon` (offline, from ui/node_modules: run `npm ci` in ui/ first): the PNGs, the
# Windows `icon.ico` (which tauri-build embeds as the executable's resource) and the macOS
# `icon.icns`. Only the files the bundles name are kept (no Android, iOS or Store logos).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p fabric-tray --bin fabric-tray -- --render-icons icons/
tauri=ui/node_modules/.bin/tauri
if [ ! -x "$tauri" ]; then
  echo "error: $tauri is missing: run (cd ui && npm ci) first" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$tauri" icon icons/app-512.png --output "$out" >/dev/null 2>&1
for f in 32x32.png 128x128.png 128x128@2x.png icon.png icon.ico icon.icns; do
  cp "$out/$f" "src-tauri/icons/$f"
done
echo "wrote icons/*.png and src-tauri/icons/{32x32,128x128,128x128@2x,icon}.png, icon.ico, icon.icns"
