#!/usr/bin/env bash
# Regenerates docs/images/*.png from the screenshots a finished test run left
# (scripts/test.sh; the tests write them to <repo>/target/e2e-shots/<suite>/<test>/,
# or $FABRIC_E2E_SHOTS). Usage: bash scripts/docs-images.sh [<e2e-shots folder>...]
# Default: target/e2e-shots of this checkout, then $CARGO_TARGET_DIR/e2e-shots.
# Each picture is cropped and scaled with ImageMagick's convert; a missing
# screenshot fails the script, naming it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$repo/docs/images"
command -v convert >/dev/null || { echo "docs-images: ImageMagick's convert is not installed" >&2; exit 1; }
if [ $# -gt 0 ]; then dirs=("$@"); else
  dirs=("$repo/target/e2e-shots")
  [ -n "${CARGO_TARGET_DIR:-}" ] && dirs+=("$CARGO_TARGET_DIR/e2e-shots")
fi
find_shot() {
  local d
  for d in "${dirs[@]}"; do [ -f "$d/$1" ] && { echo "$d/$1"; return 0; }; done
  echo "docs-images: missing screenshot $1 (looked in: ${dirs[*]}); run the test that takes it" >&2
  return 1
}
mkdir -p "$out"
# name | screenshot (relative to e2e-shots) | convert options
make() {
  local name="$1" shot="$2"; shift 2
  local src; src="$(find_shot "$shot")" || exit 1
  convert "$src" "$@" -strip "$out/$name.png"
  echo "docs/images/$name.png  <- $shot ($(du -k "$out/$name.png" | cut -f1) KB)"
}
# GNOME Shell 43's top bar, our icon with its count (tests/desktop-shells/tests/gnome_tray.rs)
make gnome-top-bar gnome-tray/end-to-end/top-bar-with-icon.png
# KDE Plasma's panel with the count, and a coalesced notification (tests/desktop-shells/tests/kde.rs)
make plasma-notification kde/plasma/3-notification-replaced.png -gravity SouthEast -crop 640x200+0+0 +repage
# the tray's menu on the lab tray host, Notifications open (tray/tests/desktop, on-a-real-desktop)
make tray-menu tray/on-a-real-desktop/3-menu-pause-1-hour.png -gravity SouthEast -crop 760x272+0+0 +repage
# a notification (dunst) and the count on the icon (tray/tests/desktop, on-a-real-desktop)
make tray-notification tray/on-a-real-desktop/6-notified-four-unread.png -gravity NorthEast -crop 340x100+0+45 +repage
# a real Claude Code's permission prompt: the "needs you" notification (dunst) and the icon's
# red mark on the lab tray host (tests/real-hosts, needs_you.rs)
make needs-you-notification real-hosts/needs-you-claude.png -gravity NorthEast -crop 340x100+0+45 +repage
make needs-you-icon real-hosts/needs-you-claude.png -gravity SouthEast -crop 40x40+0+0 +repage -scale 300%
# the dashboard in WebKit (tests/e2e-dashboard/run.mjs)
make dashboard-overview dashboard/7-overview-two-sessions.png -gravity North -crop 1180x560+0+0 +repage
make dashboard-hooks-plan dashboard/2-hooks-plan.png
make remote-jump real-hosts/remote-claude-needs-you-jump.png -crop 760x500+264+45 +repage
