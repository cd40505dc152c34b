#!/usr/bin/env bash
# Builds (once) a Debian root holding today's desktops, for tests/desktop-roots/run.sh:
# GNOME Shell with its AppIndicator extension, KWin and Plasma 6, real terminals, and what our
# package depends on (so installing it needs no download). Usage: build-root.sh <suite> <dir>.
# The root is cached: an existing <dir>/.fabric-root-ok is reused as is; a half-built one
# (no marker) is removed and built again. run.sh names <dir> by this script's own hash
# (`key` below), so a changed package list builds a new root beside the old ones. forky's Release on the mirror can be past its
# Valid-Until: apt (here and inside the root) is told not to check it.
set -euo pipefail
if [ "${1:-}" = key ]; then
  sha256sum "$0" | cut -c1-12
  exit 0
fi
suite=$1
dir=$2
if [ -e "$dir/.fabric-root-ok" ]; then
  exit 0
fi
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
packages=(
  # the buses and GNOME's tools (gdbus, gsettings)
  dbus dbus-daemon libglib2.0-bin procps
  # GNOME Shell and its AppIndicator extension (the notification daemon is gjs)
  gnome-shell gnome-shell-extension-appindicator gjs
  # KWin, Plasma's tray and notifications, Qt 6 on Wayland
  kwin-wayland plasma-workspace plasma-desktop kactivitymanagerd qdbus-qt6 qt6-wayland
  # terminals (GNOME Terminal: the exact tab through its search provider; Ptyxis and GNOME
  # Console, the other GNOME defaults, and Alacritty: the window raised, and why not the tab)
  foot kitty konsole gnome-terminal ptyxis gnome-console alacritty
  # what our package needs (the dashboard's WebKit), so apt-get install ./x.deb stays offline
  libwebkit2gtk-4.1-0 libayatana-appindicator3-1
  fonts-dejavu-core
)
include=$(IFS=,; echo "${packages[*]}")
tmp="$dir.partial"
rm -rf "$tmp"
mmdebstrap --variant=apt --mode=root --quiet \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --aptopt='APT::Install-Recommends "false"' \
  --include="$include" \
  "$suite" "$tmp" http://deb.debian.org/debian
# apt inside the root gets the same option (forky).
echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99fabric-valid-until"
touch "$tmp/.fabric-root-ok"
mv "$tmp" "$dir"
