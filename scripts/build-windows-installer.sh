#!/usr/bin/env bash
# Builds the Windows package, a per-person NSIS installer (no administrator rights) of the
# tray, the hook program and the dashboard, and prints its path:
#
#   scripts/build-windows-installer.sh           # release programs (what ships)
#   scripts/build-windows-installer.sh --debug   # the debug programs scripts/build-windows.sh
#                                                # made (quicker; what the Wine suite installs)
#
# Made here with Debian's makensis from packaging/windows/fabric-companion.nsi, not by Tauri's
# bundler: its NSIS target needs the nsis_tauri_utils.dll plugin, which it downloads from
# GitHub (tauri-apps/nsis-tauri-utils releases) at bundle time, and this machine and CI build
# offline. The programs are the x86_64-pc-windows-gnu builds (scripts/build-windows.sh); the
# dashboard built for that target loads WebView2Loader.dll at run time, so the one of the
# webview2-com-sys crate it was built against is shipped beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. scripts/packages.sh
ensure_packages nsis

debug=0
if [ "${1:-}" = --debug ]; then
  debug=1
  bin_dir=${FABRIC_WINE_BIN_DIR:-$(bash scripts/build-windows.sh)}
else
  bin_dir=$(bash scripts/build-windows.sh --release)
fi
for program in fabric-companion fabric-tray fabric-session; do
  [ -f "$bin_dir/$program.exe" ] || { echo "build-windows-installer: $bin_dir/$program.exe is missing" >&2; exit 1; }
done
version=$(python3 -c 'import json; print(json.load(open("src-tauri/tauri.conf.json"))["version"])')
out_dir="$bin_dir/package"
mkdir -p "$out_dir"
out="$out_dir/fabric-companion_${version}_x64-setup.exe"

programs_dir=$bin_dir
defines=(-DVERSION="$version" -DROOT="$root" -DOUTFILE="$out")
if [ "$debug" = 1 ]; then
  # The debug programs without their symbols (a third of their size) and a quick compressor:
  # the package the Wine suite installs, made in seconds.
  programs_dir="$out_dir/programs"
  mkdir -p "$programs_dir"
  for program in fabric-companion fabric-tray fabric-session; do
    x86_64-w64-mingw32-strip -o "$programs_dir/$program.exe" "$bin_dir/$program.exe"
  done
  defines+=(-DFAST_COMPRESSION)
fi
defines+=(-DBINDIR="$programs_dir")
imports=$(x86_64-w64-mingw32-objdump -p "$programs_dir/fabric-companion.exe")
if grep -qi 'DLL Name: WebView2Loader.dll' <<<"$imports"; then
  loader=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -path '*webview2-com-sys*/x64/WebView2Loader.dll' 2>/dev/null | sort | tail -1)
  [ -n "$loader" ] || { echo "build-windows-installer: the dashboard needs WebView2Loader.dll and none was found" >&2; exit 1; }
  defines+=(-DWEBVIEW2_LOADER="$loader")
fi
# makensis takes Unix paths on Linux; -NOCD keeps relative paths ours.
makensis -V2 -NOCD "${defines[@]}" packaging/windows/fabric-companion.nsi >&2
echo "$out"
