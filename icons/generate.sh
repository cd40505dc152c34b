#!/usr/bin/env bash
# Regenerates the PNGs in this folder from the drawing code in tray/src/icon.rs (the same
# code the tray draws its live icon with: base art, 5×7 bitmap count, grey, warning mark).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p fabric-tray -- --render-icons icons/
