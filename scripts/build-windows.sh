#!/usr/bin/env bash
# Builds the workspace for Windows (x86_64-pc-windows-gnu) with Debian's Rust, linting every
# crate with clippy (warnings denied) in the same compilation, and prints the folder of the
# .exe files: fabric-session, fabric-tray, fabric-companion (the dashboard: built, not run
# under Wine, which has no WebView2), the Fabric stand-in (fabric-fake) and the agent host
# stand-in (host-stand-in) the Wine suite (tests/wine) runs.
#
#   scripts/build-windows.sh             # debug, every target (what the test command runs)
#   scripts/build-windows.sh --release   # release programs only (the Windows package)
#
# One standard library serves the lint and the programs: clippy's driver is the workspace's
# compiler wrapper of a real build (RUSTC_WORKSPACE_WRAPPER, as `cargo clippy` sets it), so the
# Windows std built here (-Zbuild-std, RUSTC_BOOTSTRAP=1 for this command only) and every
# dependency are compiled once, with code, for both. The lint covers what the MSVC target
# would: none of our code is specific to the C runtime (the shipping build stays
# x86_64-pc-windows-msvc, on Windows runners; see .github/workflows/ci.yml). The target folder
# ($FABRIC_WINDOWS_TARGET_DIR, default <cargo target dir>/windows: its own, so that it never
# waits on the macOS check's lock when both run at once) is kept between runs: warm, only
# what changed is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/packages.sh
ensure_packages rustc-web cargo-web rust-web-src rust-web-clippy gcc-mingw-w64-x86-64

profile=debug
scope=(--workspace --all-targets)
lint=1
if [ "${1:-}" = --release ]; then
  profile=release
  scope=(-p fabric-session -p fabric-tray -p fabric-companion)
  lint=0
fi

debian_cargo=/usr/bin/cargo
for tool in "$debian_cargo" /usr/bin/rustc /usr/bin/clippy-driver x86_64-w64-mingw32-gcc; do
  command -v "$tool" >/dev/null || { echo "build-windows: $tool is missing" >&2; exit 1; }
done
[ -f ui/dist/index.html ] || (cd ui && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run build >&2)

if [ -z "${FABRIC_WINDOWS_TARGET_DIR:-}" ]; then
  target_root=$("$debian_cargo" metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  FABRIC_WINDOWS_TARGET_DIR="$target_root/windows"
fi
triple=x86_64-pc-windows-gnu

flags=(-Zbuild-std=std,panic_abort --target "$triple" --target-dir "$FABRIC_WINDOWS_TARGET_DIR" --locked)
[ "$profile" = release ] && flags+=(--release)
env=(
  CARGO="$debian_cargo" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
)
if [ "$lint" = 1 ]; then
  # cargo-clippy's own protocol: the driver as the workspace's compiler wrapper, its arguments
  # joined by __CLIPPY_HACKERY__.
  env+=(RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver "CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__")
  echo "== build and clippy for $triple ($profile, warnings denied)" >&2
else
  echo "== build for $triple ($profile)" >&2
fi
env "${env[@]}" nice "$debian_cargo" build "${flags[@]}" "${scope[@]}" >&2
echo "$FABRIC_WINDOWS_TARGET_DIR/$triple/$profile"
