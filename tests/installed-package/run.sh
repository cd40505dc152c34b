#!/usr/bin/env bash
# The package, tested as installed (see run.mjs for what it checks): builds the debug package
# once (scripts/build-deb.sh --debug; FABRIC_DEB=<file> reuses one), installs it with
# `apt-get install ./<file>` on this machine, checks it as a person would under Xvfb with a tray
# host, then removes and purges it. Needs root (CI runs as root on a fresh machine): it installs
# into /usr and /etc. Expects the debug fabric-fake (the Fabric stand-in) and model-stand-in in
# cargo's target folder ($FABRIC_E2E_BIN_DIR, else <target dir>/debug as `cargo metadata`
# reports it: CARGO_TARGET_DIR or the config's, as scripts/test.sh finds it), tauri-driver,
# WebKitWebDriver, Xvfb, trayer, dunst, dbus-run-session, xwininfo, import.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "installed package: not run: it installs into /usr and /etc and needs root (CI runs as root)" >&2
  [ "${FABRIC_REQUIRE_DESKTOP_TESTS:-0}" = 1 ] && exit 1
  exit 0
fi
if dpkg-query -W -f '${Status}' fabric-companion 2>/dev/null | grep -q 'install ok'; then
  echo "installed package: fabric-companion is already installed on this machine; remove it first" >&2
  exit 1
fi
# The stand-ins are where cargo built them, which need not be <repo>/target; run.mjs reads
# FABRIC_E2E_BIN_DIR. Checked here, before the package is built.
if [ -z "${FABRIC_E2E_BIN_DIR:-}" ]; then
  target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null) \
    || { echo "installed package: cannot find cargo's target folder (cargo metadata failed)" >&2; exit 1; }
  export FABRIC_E2E_BIN_DIR="$target_dir/debug"
fi
for program in fabric-fake model-stand-in; do
  [ -x "$FABRIC_E2E_BIN_DIR/$program" ] || {
    echo "installed package: $FABRIC_E2E_BIN_DIR/$program is missing: build it first (cargo build --workspace)" >&2
    exit 1
  }
done
start=$(date +%s)
deb=${FABRIC_DEB:-}
if [ -z "$deb" ]; then
  echo "== installed package: building the debug package (scripts/build-deb.sh --debug)"
  deb=$(bash "$root/scripts/build-deb.sh" --debug)
fi
built=$(date +%s)
echo "== installed package: $deb ($(du -k "$deb" | cut -f1) KiB, built in $((built - start)) s)"
export TAURI_WEBVIEW_AUTOMATION=true
status=0
dbus-run-session -- node "$here/run.mjs" "$deb" || status=$?
# Whatever happened, the machine is left without the package.
if dpkg-query -W -f '${Status}' fabric-companion 2>/dev/null | grep -q 'ok installed\|config-files'; then
  dpkg --purge fabric-companion >/dev/null || true
fi
echo "== installed package: $(( $(date +%s) - built )) s installed, checked and removed"
exit $status
