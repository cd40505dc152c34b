#!/usr/bin/env bash
# Runs the app: installs the system packages it needs (Debian/Ubuntu), builds the dashboard's
# front end and the release binaries, and starts the tray (which opens the dashboard on
# demand and keeps the stable copy of fabric-session current for the hooks).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/packages.sh
ensure_packages "${BUILD_PACKAGES[@]}"

(cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build)
cargo build --release --locked -p fabric-session -p fabric-tray -p fabric-companion
# The hooks run the binary as it ships (static on Linux); the tray copies it to the stable
# path the hooks point at.
FABRIC_SESSION_BIN=$(bash scripts/build-hook-binary.sh)
export FABRIC_SESSION_BIN

if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "No graphical session (DISPLAY is not set): the tray needs one." >&2
  echo "The hooks work without it: $FABRIC_SESSION_BIN status" >&2
  exec "$FABRIC_SESSION_BIN" status
fi
# fabric-companion and fabric-session sit next to the tray, where it looks for them.
exec target/release/fabric-tray
