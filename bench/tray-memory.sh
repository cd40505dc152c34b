#!/usr/bin/env bash
# Memory and CPU of the release tray (and the dashboard it opens) after a minute idle, on a
# headless desktop: Xvfb, a private D-Bus session, dunst, a temporary HOME with Fabric played
# by the stand-in and one live session (made by the real hooks) being watched. Both tray
# paths, one after the other in one run: the GTK-free StatusNotifierItem (a real
# status-notifier-watcher and gtk-sni-tray-standalone host) and the GTK shell under trayer
# (XEmbed only, where fabric-tray becomes fabric-tray-xembed).
#
# PSS comes from /proc/<pid>/smaps_rollup, summed over each process and its descendants; CPU
# is (utime + stime) over the idle window divided by its length, for the same processes.
#
# Rows: each path's tray alone; then, on the XEmbed desktop, with the dashboard open and after
# it closed.
# The dashboard is $FABRIC_COMPANION_BIN, else target/release/fabric-companion (built here
# unless SKIP_COMPANION_BUILD=1); without one the dashboard rows are skipped, saying so.
#
# Usage: bench/tray-memory.sh   (IDLE=60 seconds by default)
# Results: bench/results/tray-memory.md, and on stdout.
# Needs: xvfb x11-utils xdotool dbus dunst trayer haskell-status-notifier-item-utils
# haskell-gtk-sni-tray-utils (see the README); goals (issue 13): the item path <= 20 MB PSS,
# the XEmbed path <= 56 MB, 0.00 % CPU idle.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
IDLE=${IDLE:-60}

cargo build --release -q -p fabric-tray -p fabric-session -p fabric-fake
tray=$root/target/release/fabric-tray
session_bin=$root/target/release/fabric-session
fake=$root/target/release/fabric-fake
companion=${FABRIC_COMPANION_BIN:-}
if [[ -z $companion ]]; then
  if [[ ${SKIP_COMPANION_BUILD:-0} != 1 ]]; then
    cargo build --release -q -p fabric-companion || echo "note: fabric-companion did not build" >&2
  fi
  [[ -x $root/target/release/fabric-companion ]] && companion=$root/target/release/fabric-companion
fi

work=$(mktemp -d)
pids=()
cleanup() {
  [[ -n ${dash_pid:-} ]] && kill "$dash_pid" 2>/dev/null || true
  end_desktop
  rm -rf "$work"
}
trap cleanup EXIT

# Every pid in the tree under $1 (itself included).
tree_pids() {
  local all=("$1") frontier=("$1") next
  while ((${#frontier[@]})); do
    next=()
    for p in "${frontier[@]}"; do
      for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do next+=("$c"); done
    done
    all+=("${next[@]}"); frontier=("${next[@]}")
  done
  echo "${all[@]}"
}
pss_kb() { # sum of Pss (or the field $2, e.g. Pss_Anon) over the tree of $1
  local sum=0 v field=${2:-Pss}
  for p in $(tree_pids "$1"); do
    v=$(awk -v f="$field:" '$1 == f {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || echo 0)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}
ticks() { # utime + stime over the tree of $1
  local sum=0 v
  for p in $(tree_pids "$1"); do
    v=$(awk '{print $14 + $15}' /proc/"$p"/stat 2>/dev/null || echo 0)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}
hz=$(getconf CLK_TCK)
# Idles IDLE seconds, then prints "PSS-MB (anon MB) | CPU-%" for the trees of the given pids.
measure() {
  local before=0 after=0 pss=0 anon=0 p
  for p in "$@"; do before=$((before + $(ticks "$p"))); done
  sleep "$IDLE"
  for p in "$@"; do
    after=$((after + $(ticks "$p")))
    pss=$((pss + $(pss_kb "$p"))); anon=$((anon + $(pss_kb "$p" Pss_Anon)))
  done
  awk -v k="$pss" -v a="$anon" -v d="$((after - before))" -v hz="$hz" -v s="$IDLE" \
    'BEGIN { printf "%.1f MB (anonymous %.1f MB) | %.2f %%", k / 1024, a / 1024, 100 * d / hz / s }'
}
gtk_loaded() { # "no GTK" or "GTK loaded", from the tray's own mappings
  grep -q 'libgtk-3' /proc/"$1"/maps 2>/dev/null && echo "GTK loaded" || echo "no GTK"
}

# A desktop of kind $1 (sni | xembed) in its own HOME, with Fabric running, Claude Code wired,
# one idle session and the release tray; sets tray_pid and starts the desktop's processes.
desktop() {
  local kind=$1 d=$work/$1
  export HOME=$d/home XDG_CACHE_HOME=$d/home/.cache XDG_DATA_HOME=$d/home/.local/share \
    XDG_CONFIG_HOME=$d/home/.config XDG_RUNTIME_DIR=$d/home/run
  mkdir -p "$XDG_RUNTIME_DIR" "$HOME/work/alpha" && chmod 700 "$XDG_RUNTIME_DIR"
  local n=90
  while [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]]; do n=$((n + 1)); done
  export DISPLAY=:$n
  Xvfb "$DISPLAY" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 & pids+=($!)
  for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  dbus-daemon --session --fork --print-address=3 --print-pid=4 3>"$d/bus" 4>"$d/bus.pid"
  DBUS_SESSION_BUS_ADDRESS=$(head -1 "$d/bus"); export DBUS_SESSION_BUS_ADDRESS
  pids+=("$(cat "$d/bus.pid")")
  dunst >/dev/null 2>&1 & pids+=($!)
  if [[ $kind == sni ]]; then
    status-notifier-watcher >/dev/null 2>&1 & pids+=($!)
    sleep 1
    gtk-sni-tray-standalone --bottom --end --size 32 >/dev/null 2>&1 & pids+=($!)
  else
    trayer --edge bottom --align right --widthtype request --height 32 --SetDockType true \
      --transparent false >/dev/null 2>&1 & pids+=($!)
  fi

  # Fabric (the stand-in) running with session hooks; Claude Code wired; one idle session.
  export FABRIC_MCP=$fake FABRIC_FAKE_STATE=$d/fabric-state
  mkdir -p "$FABRIC_FAKE_STATE"
  echo 2 > "$FABRIC_FAKE_STATE/unread" 2>/dev/null || true
  sleep 100000 & local hub_pid=$!; pids+=("$hub_pid")
  "$fake" hub --fabric-dir "$XDG_DATA_HOME/passioncode-fabric" --pid "$hub_pid" --feature session-hooks/1 >/dev/null
  echo '{"mcpServers":{"fabric":{"command":"fabric-mcp"}}}' > "$HOME/.claude.json"
  local digest
  digest=$("$session_bin" install-host-hooks --host claude --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  "$session_bin" install-host-hooks --host claude --apply --expect-sha256 "$digest" >/dev/null
  local payload=$d/payload.json
  printf '{"session_id":"bench-session","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' \
    "$HOME/work/alpha" > "$payload"
  # The host: a shell that stays alive while its session lasts.
  ( "$session_bin" hook session-start < "$payload" >/dev/null; "$session_bin" hook stop < "$payload" >/dev/null; exec sleep 100000 ) &
  pids+=($!)

  env "${tray_env[@]}" FABRIC_SESSION_BIN="$session_bin" \
    FABRIC_COMPANION_BIN="${companion:-/nonexistent}" \
    "$tray" 2>"$d/tray.log" & tray_pid=$!; pids+=("$tray_pid")
  local shown=
  for _ in $(seq 300); do
    if [[ $kind == sni ]]; then
      dbus-send --session --print-reply --dest=org.kde.StatusNotifierWatcher /StatusNotifierWatcher \
        org.freedesktop.DBus.Properties.Get string:org.kde.StatusNotifierWatcher \
        string:RegisteredStatusNotifierItems 2>/dev/null | grep -q 'string ":[0-9.]*[/@"]' && shown=1
    else
      xwininfo -root -tree | grep -q 'tray-icon tray app fabric-tray' && shown=1
    fi
    [[ -n $shown ]] && break
    sleep 0.1
  done
  [[ -n $shown ]] || { echo "the $kind tray did not show" >&2; cat "$d/tray.log" >&2; exit 1; }
}

# Ends the running desktop (its processes, and the tray on it).
end_desktop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

tray_env=()
rows=()
echo "measuring the StatusNotifierItem tray (${IDLE} s idle)…" >&2
desktop sni
row=$(measure "$tray_pid")
rows+=("| StatusNotifierItem tray alone ($(basename "$(readlink /proc/"$tray_pid"/exe)"), $(gtk_loaded "$tray_pid")) | $row |")
end_desktop

echo "measuring the XEmbed tray (${IDLE} s idle)…" >&2
desktop xembed
row=$(measure "$tray_pid")
rows+=("| XEmbed tray alone ($(basename "$(readlink /proc/"$tray_pid"/exe)"), $(gtk_loaded "$tray_pid")) | $row |")

if [[ -n $companion ]]; then
  echo "measuring with the dashboard open…" >&2
  "$companion" >/dev/null 2>&1 & dash_pid=$!
  sleep 5
  both=$(measure "$tray_pid" "$dash_pid")
  rows+=("| XEmbed tray + dashboard open (sum of both trees) | $both |")
  rows+=("| — of which the tray | $(IDLE=1 measure "$tray_pid") |")
  # Close the dashboard: WM_DELETE_WINDOW to its windows when a helper exists, else SIGTERM.
  if command -v python3 >/dev/null && python3 "$root/bench/wm_delete.py" "$dash_pid" 2>/dev/null; then
    how="WM_DELETE_WINDOW"
  else
    kill "$dash_pid"; how="SIGTERM"
  fi
  for _ in $(seq 100); do kill -0 "$dash_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$dash_pid" 2>/dev/null && { kill -9 "$dash_pid"; how="$how (then SIGKILL)"; }
  wait "$dash_pid" 2>/dev/null || true
  dash_pid=
  echo "measuring after the dashboard closed ($how)…" >&2
  rows+=("| XEmbed tray after the dashboard closed | $(measure "$tray_pid") |")
else
  rows+=("| with the dashboard | skipped: no fabric-companion release binary |")
fi
end_desktop

# The same tray with GDK's GL probe (what the GTK shell did before it set GDK_GL=disable for
# itself): GDK_GL set, to nothing, is left alone.
echo "measuring the XEmbed tray with GDK's GL probe (${IDLE} s idle)…" >&2
tray_env=(GDK_GL=)
desktop xembed
rows+=("| XEmbed tray with GDK's GL probe (GDK_GL set empty: the GTK shell before this change) | $(measure "$tray_pid") |")
tray_env=()
end_desktop

# A side-by-side baseline when asked: BASELINE_TRAY=<an older fabric-tray> on the same
# XEmbed desktop, in this run.
if [[ -n ${BASELINE_TRAY:-} ]]; then
  echo "measuring the baseline tray $BASELINE_TRAY (${IDLE} s idle)…" >&2
  tray=$BASELINE_TRAY
  desktop xembed
  rows+=("| baseline: $BASELINE_TRAY on the XEmbed desktop | $(measure "$tray_pid") |")
  end_desktop
fi

out=$root/bench/results
mkdir -p "$out"
{
  echo "# fabric-tray memory and CPU ($(date -u +%Y-%m-%dT%H:%MZ), ${IDLE} s idle, release build)"
  echo
  echo "| what | PSS | CPU |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Goals (issue 13): the StatusNotifierItem tray ≤ 20 MB PSS, the XEmbed tray ≤ 56 MB,"
  echo "0.00 % CPU idle. PSS summed over each process tree (/proc/<pid>/smaps_rollup); CPU ="
  echo "utime+stime over the window. $(nproc) cores, $(uname -r)."
} | tee "$out/tray-memory.md"
