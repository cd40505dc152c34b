#!/usr/bin/env bash
# Builds the Linux package, fabric-companion_<version>_<arch>.deb, and prints its path:
#   scripts/build-deb.sh            # release (what ships)
#   scripts/build-deb.sh --debug    # the workspace's debug programs, bundled as built (quicker;
#                                   # what the installed-package test uses)
#
# The three programs go to /usr/bin: the dashboard (fabric-companion), the tray and the hook
# binary as it ships (scripts/build-hook-binary.sh: static on Linux); the tray's GTK shell,
# which the tray becomes on a desktop with only an XEmbed tray, to
# /usr/lib/fabric-companion/fabric-tray-xembed; the hook binary for aarch64, which
# `fabric-session remote add` copies to an aarch64 remote, to
# /usr/lib/fabric-companion/fabric-session-aarch64 (scripts/build-hook-binary.sh --aarch64,
# or $FABRIC_AARCH64_BIN when set: the release build in both profiles; not in /usr/bin, where
# a program this machine cannot run does not belong). Tauri's bundler builds
# the package from src-tauri/tauri.bundle.conf.json (the desktop entry, the tray's autostart
# entry in /etc/xdg/autostart, the Claude Code plugin in /usr/share/fabric-companion, the
# licences); this script generates what that config names under src-tauri/package/ (the
# plugin with its hooks running /usr/bin/fabric-session, the third-party notices), then
# rewrites the control file's Depends (computed by dpkg-shlibdeps from the three programs,
# plus the tray's AppIndicator library, which it loads at run time) and Maintainer, and
# names the desktop entry and the file without a space. Installs the system packages it needs
# (scripts/packages.sh: the build's, dpkg-dev for dpkg-shlibdeps) and ui/node_modules when
# missing, so it works on a fresh clone whether or not run.sh ran first; the notices step
# fetches through cargo any crate source it lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/packages.sh
ensure_packages "${BUILD_PACKAGES[@]}"
profile=release
tauri_flags=()
compression=-Zxz
if [ "${1:-}" = --debug ]; then
  profile=debug
  tauri_flags=(--debug)
  compression=-Zgzip   # xz takes minutes over the unoptimised programs
fi
maintainer="Passion Code <dev@fabric-companion.invalid>"
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
triple=$(rustc -vV | sed -n 's/^host: //p')
version=$(python3 -c 'import json; print(json.load(open("src-tauri/tauri.conf.json"))["version"])')
arch=$(dpkg --print-architecture)

# ---- the programs -------------------------------------------------------------------------
[ -d ui/node_modules ] || (cd ui && npm ci --no-audit --no-fund --loglevel=error)
(cd ui && npm run build >&2)
if [ "$profile" = debug ]; then
  sh src-tauri/scripts/prepare-sidecars.sh --debug >&2
else
  sh src-tauri/scripts/prepare-sidecars.sh >&2
fi
# The release package ships the hook binary as scripts/build-hook-binary.sh builds it (static
# on Linux). The debug package, which only the installed-package test builds, keeps the
# workspace's debug build that prepare-sidecars copied: the same code, without a second
# release build of the hook binary's whole dependency tree.
if [ "$profile" = release ]; then
  hook=$(bash scripts/build-hook-binary.sh)
  cp "$hook" "src-tauri/binaries/fabric-session-$triple.tmp"
  mv "src-tauri/binaries/fabric-session-$triple.tmp" "src-tauri/binaries/fabric-session-$triple"
fi

# ---- what the bundle config names under src-tauri/package/ --------------------------------
package=src-tauri/package
rm -rf "$package"
mkdir -p "$package/claude-plugin/.claude-plugin" "$package/claude-plugin/hooks"
python3 - "$package/claude-plugin" <<'PY'
import json, sys
out = sys.argv[1]
src = "hookbin/claude-plugin"
program = "/usr/bin/fabric-session"
def load(name):
    with open(f"{src}/{name}") as f:
        return json.load(f)
def save(name, value):
    with open(f"{out}/{name}", "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
hooks = load("hooks/hooks.json")
hooks["description"] = ("Fabric's session hooks: each runs the installed " + program
                        + ", with a 5 s ceiling, and always exits 0.")
for groups in hooks["hooks"].values():
    for group in groups:
        for hook in group["hooks"]:
            old = '"${CLAUDE_PLUGIN_ROOT}/bin/fabric-session" '
            assert hook["command"].startswith(old), hook["command"]
            # The guard companion_hosts::hook_command writes for the package's program:
            # once the package is removed, the hook exits 0 without a word.
            hook["command"] = f"[ ! -x {program} ] || {program} " + hook["command"][len(old):]
save("hooks/hooks.json", hooks)
plugin = load(".claude-plugin/plugin.json")
plugin["description"] = plugin["description"].replace("Runs bin/fabric-session.", f"Runs {program}.")
save(".claude-plugin/plugin.json", plugin)
market = load(".claude-plugin/marketplace.json")
for entry in market["plugins"]:
    entry["description"] = "Fabric's session hooks for Claude Code (runs the installed " + program + ")."
save(".claude-plugin/marketplace.json", market)
PY
python3 packaging/linux/third-party-notices.py | gzip -9n > "$package/third-party-notices.txt.gz"
# The tray's GTK shell, built with the tray by prepare-sidecars.
cp "$target_dir/$profile/fabric-tray-xembed" "$package/fabric-tray-xembed"
# The aarch64 hook binary for remotes: static, so neither dpkg-shlibdeps nor Depends see it.
aarch64=${FABRIC_AARCH64_BIN:-$(bash scripts/build-hook-binary.sh --aarch64)}
install -m 0755 "$aarch64" "$package/fabric-session-aarch64"

# ---- Tauri's bundle -----------------------------------------------------------------------
bundle_dir="$target_dir/$profile/bundle/deb"
rm -f "$bundle_dir"/*.deb
if [ "$profile" = debug ]; then
  # The workspace's own debug programs (the ones every other test runs), bundled as they are:
  # `tauri build` would build the dashboard and its whole GUI stack again with its own
  # features, minutes that test nothing the package test looks at.
  cargo build --locked -p fabric-companion -p fabric-tray >&2
  (cd ui && TAURI_APP_PATH=../src-tauri npx tauri bundle "${tauri_flags[@]}" \
    --config ../src-tauri/tauri.bundle.conf.json --bundles deb >&2)
else
  (cd ui && TAURI_APP_PATH=../src-tauri npx tauri build "${tauri_flags[@]}" \
    --config ../src-tauri/tauri.bundle.conf.json --bundles deb >&2)
fi
built=$(ls "$bundle_dir"/*.deb)

# ---- the control file: Depends computed, Maintainer; the file name --------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -R "$built" "$work/root"
mkdir -p "$work/debian"
printf 'Source: fabric-companion\n\nPackage: fabric-companion\nArchitecture: any\n' \
  > "$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O \
  -eroot/usr/bin/fabric-companion -eroot/usr/bin/fabric-tray -eroot/usr/bin/fabric-session \
  -eroot/usr/lib/fabric-companion/fabric-tray-xembed \
  2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no dependency" >&2; exit 1; }
# The tray's GTK shell loads its AppIndicator library with dlopen, so no linker record names it.
depends="$shlibs, libayatana-appindicator3-1 | libappindicator3-1"
python3 - "$work/root/DEBIAN/control" "$depends" "$maintainer" <<'PY'
import sys
path, depends, maintainer = sys.argv[1:]
lines = open(path).read().splitlines()
out = []
for line in lines:
    if line.startswith("Depends:"):
        continue
    if line.startswith("Maintainer:"):
        line = f"Maintainer: {maintainer}"
    out.append(line)
    if line.startswith("Priority:"):
        out.append(f"Depends: {depends}")
if not any(l.startswith("Depends:") for l in out):
    sys.exit("build-deb: no Priority line to put Depends after")
open(path, "w").write("\n".join(out) + "\n")
PY
# The trigger on GNOME Shell's program: postinst picks our extension's variant again whenever
# GNOME Shell is installed or upgraded (Tauri's bundler writes no triggers file).
install -m 0644 packaging/linux/triggers "$work/root/DEBIAN/triggers"
# The dashboard's desktop entry, named for the package (Tauri names it for the product).
for entry in "$work/root/usr/share/applications/"*.desktop; do
  [ "$entry" = "$work/root/usr/share/applications/fabric-companion.desktop" ] \
    || mv "$entry" "$work/root/usr/share/applications/fabric-companion.desktop"
done
(cd "$work/root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z \
  | xargs -0 md5sum > DEBIAN/md5sums)
deb="$bundle_dir/fabric-companion_${version}_${arch}.deb"
dpkg-deb --root-owner-group "$compression" -b "$work/root" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
[ "$built" = "$deb" ] || rm -f "$built"
echo "$deb"
