#!/bin/sh
# End-to-end test of the dashboard (see run.mjs). Builds nothing; expects target/debug (or
# $FABRIC_E2E_BIN_DIR) to hold fabric-companion, fabric-session and fabric-fake, tauri-driver on
# PATH (or in ~/.cargo/bin, or $TAURI_DRIVER), WebKitWebDriver, Xvfb and dbus-run-session.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export TAURI_WEBVIEW_AUTOMATION=true
if command -v dbus-run-session >/dev/null 2>&1; then
  exec dbus-run-session -- node "$here/run.mjs" "$@"
fi
exec node "$here/run.mjs" "$@"
