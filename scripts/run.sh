#!/usr/bin/env bash
# Builds the release binaries and starts the app. Until the tray lands this shows status.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p fabric-session
exec target/release/fabric-session status
